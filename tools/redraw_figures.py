"""Draw the figures of figures/ again from their committed tables (CSV), without running anything and without
changing a table: what to run after a change to how the figures are drawn (personalwab.reproduce.figures), instead of
`make publish`. Each figure keeps the title it carries (read from its SVG); Figure 4's histogram counts the
instruction lengths of the embedded default benchmark (the published one) with the MiniLM tokenizer. The executed
paper notebooks (nbs/paper/) keep their old pictures until `make publish` executes them again.

Usage: python tools/redraw_figures.py [--figures DIR] [--out DIR] [--only NAME ...]
"""
from __future__ import annotations
import argparse, html, re, sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

def _figures():
    "{figure name: (its table's file name, read_csv keywords, the title's first words, draw(table, title) -> figure)}."
    from personalwab.reproduce.figures import (budget_lines, claims_figure, consistency_figure, instructions_figure,
                                               method_bars, profile_figure, web_track_figure)
    from personalwab.reproduce.paper import PARTS
    def fig4(t, title):
        from personalwab.data.load import load_benchmark
        from personalwab.data.stats import instruction_lengths
        return instructions_figure(t, instruction_lengths(load_benchmark(progress=False), "minilm"), "minilm", title)
    idx = {"index_col": 0}
    return {
        "table3_single_turn": ("table3_single_turn.csv", idx, "Table 3",
                               lambda t, s: method_bars(t, [("overall", "F"), ("overall", "R")], s)),
        "table4_multi_turn": ("table4_multi_turn.csv", idx, "Table 4",
                              lambda t, s: method_bars(t, [("overall", "F"), ("overall", "R"), ("overall", "steps")], s)),
        "table5_puma_ablation": ("table5_puma_ablation.csv", idx, "Table 5",
                                 lambda t, s: method_bars(t, [(p, "R") for p in PARTS], s)),
        "table6_memory_length": ("table6_memory_length.csv", idx, "Table 6", lambda t, s: budget_lines(t, "R", s)),
        "claims": ("claims.csv", {}, "Claims of", claims_figure),
        "fig3_profile_distributions": ("fig3_profile_distributions.csv", {}, "Figure 3", profile_figure),
        "fig4_instructions": ("fig4_instructions.csv", {}, "Figure 4", fig4),
        "fig5_profile_consistency": ("fig5_profile_consistency.csv", {}, "Figure 5", consistency_figure),
        "web_track": ("web_track.csv", {}, "Function track vs web track", web_track_figure)}

def svg_title(svg: Path, starts: str) -> str:
    "The text of the SVG figure `svg` that begins with `starts` (matplotlib writes each text as a comment): its title."
    texts = [html.unescape(t) for t in re.findall(r"<!-- (.*?) -->", svg.read_text(encoding="utf-8"), re.S)]
    found = [t for t in texts if t.startswith(starts)]
    if not found: raise SystemExit(f"{svg}: no text beginning with {starts!r} to take the title from")
    return found[0]

def redraw(figures: Path = ROOT/"figures", out: Path | None = None, only=None) -> list[Path]:
    "Draw each figure (of `only`, else all) from its table in `figures` into `out` (default: `figures`): PNG + SVG."
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import pandas as pd
    from personalwab.reproduce.report import save_figure
    figures, out, written = Path(figures), Path(out or figures), []
    for name, (csv, kw, starts, draw) in _figures().items():
        if only and name not in only: continue
        if not (figures/csv).exists(): raise SystemExit(f"{figures/csv}: no such table to draw {name} from")
        fig = draw(pd.read_csv(figures/csv, **kw), svg_title(figures/f"{name}.svg", starts))
        written += save_figure(fig, out, name); plt.close(fig)
    return written

if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--figures", type=Path, default=ROOT/"figures", help="where the tables (and the SVGs' titles) are")
    ap.add_argument("--out", type=Path, default=None, help="where the figures go (default: --figures)")
    ap.add_argument("--only", nargs="*", help="figure names (default: all)")
    a = ap.parse_args()
    for p in redraw(a.figures, a.out, a.only): print(p.relative_to(ROOT) if p.is_relative_to(ROOT) else p)
