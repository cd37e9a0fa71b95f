"""The architecture of personalwab drawn from the code: the layers of `.importlinter`, what each subpackage holds (its
docstring), its modules with their lines, and the imports between layers as grimp finds them (imports inside functions
too). `tools/build_docs.py` makes the docs' architecture page from it at every `make docs`; run alone, it prints the
layers and writes the graph.

Usage: python tools/architecture.py [--svg FILE]
"""
from __future__ import annotations
import argparse, ast, configparser, html, io, re
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PKG = ROOT/"personalwab"

def layers() -> list[str]:
    "The layers of the contract in `.importlinter`, top to bottom."
    cfg = configparser.ConfigParser(); cfg.read(ROOT/".importlinter")
    return cfg["importlinter:contract:layers"]["layers"].split()

def docstring(layer: str) -> str:
    "The docstring of a subpackage (`personalwab/<layer>/__init__.py`) or of a top-level module (`personalwab/<layer>.py`)."
    p = PKG/layer/"__init__.py" if (PKG/layer).is_dir() else PKG/f"{layer}.py"
    return " ".join((ast.get_docstring(ast.parse(p.read_text(encoding="utf-8"))) or "").split())

def first_sentence(text: str) -> str:
    m = re.match(r"(.+?\.)(\s|$)", text)
    return m.group(1) if m else text

def modules(layer: str) -> list[tuple[str, int]]:
    "(module, lines) of a layer, the subpackage's `__init__` aside."
    files = sorted((PKG/layer).glob("*.py")) if (PKG/layer).is_dir() else [PKG/f"{layer}.py"]
    return [(p.stem, len(p.read_text(encoding="utf-8").splitlines())) for p in files if p.name != "__init__.py"]

def layer_imports() -> Counter:
    "{(importer layer, imported layer): number of module-to-module imports} over the whole package (grimp)."
    import grimp
    g = grimp.build_graph("personalwab", cache_dir=None)
    top = lambda m: m.split(".")[1] if m.count(".") >= 1 else None
    out = Counter()
    for m in g.modules:
        for i in g.find_modules_directly_imported_by(m):
            a, b = top(m), top(i)
            if a and b and a != b and not a.startswith("_"): out[a, b] += 1
    return out

def draw(edges: Counter, path: Path | None = None) -> str:
    """The import graph between layers as a matrix, the layers top to bottom on both axes: row A, column B holds how many
    modules of A import a module of B. A layered package has every number right of the diagonal; SVG."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np
    ls = layers(); n = len(ls)
    m = np.zeros((n, n))
    for (a, b), k in edges.items():
        if a in ls and b in ls: m[ls.index(a), ls.index(b)] = k
    fig, ax = plt.subplots(figsize=(0.55 * n + 2.4, 0.5 * n + 1.2))
    ax.imshow(np.where(m > 0, np.log1p(m), np.nan), cmap="Blues", vmin=0, vmax=np.log1p(m.max()) * 1.15)
    for i in range(n):
        for j in range(n):
            if m[i, j]: ax.text(j, i, int(m[i, j]), ha="center", va="center", fontsize=8)
            elif i == j: ax.text(j, i, "·", ha="center", va="center", color="#8a94a6")
        ax.axhline(i - 0.5, color="#e5e7eb", lw=0.5); ax.axvline(i - 0.5, color="#e5e7eb", lw=0.5)
    ax.plot([-0.5, n - 0.5], [-0.5, n - 0.5], color="#cf222e", lw=0.8)            # nothing may fall left of this line
    sizes = [f"{l}  ({len(modules(l))} mod., {sum(k for _, k in modules(l)):,} lines)" for l in ls]
    ax.set_yticks(range(n), sizes, fontsize=8, family="monospace")
    ax.set_xticks(range(n), ls, rotation=60, ha="right", fontsize=8, family="monospace")
    ax.set_xlabel("imported layer", fontsize=8); ax.set_ylabel("importing layer", fontsize=8)
    ax.set_title("Imports between the layers of personalwab (module pairs); every one goes down the stack", fontsize=9)
    buf = io.StringIO(); fig.savefig(buf, format="svg", bbox_inches="tight"); plt.close(fig)
    svg = buf.getvalue()
    if path: Path(path).write_text(svg, encoding="utf-8")
    return svg

def page_html(svg_name: str = "architecture.svg") -> str:
    "The body of the architecture page: the rule, the graph (`svg_name`, next to the page) and a table of the layers."
    ls, edges = layers(), layer_imports()
    rows = []
    for l in ls:
        mods = modules(l)
        used = sorted({b for (a, b) in edges if a == l}, key=ls.index)
        mods_html = ", ".join(f"<code>{html.escape(m)}</code>&nbsp;({k})" for m, k in mods)
        rows.append(f"<tr><th><code>{l}</code></th><td>{html.escape(docstring(l))}</td><td>{mods_html}</td>"
                    f"<td>{', '.join(f'<code>{u}</code>' for u in used) or '—'}</td></tr>")
    longest = max(((l, m, k) for l in ls for m, k in modules(l)), key=lambda x: x[2])
    total = sum(k for l in ls for _, k in modules(l))
    return (f"<p>The package is layered: a module imports its own layer and those below it, never one above, and no two "
            f"modules import each other around a cycle. The contract (<code>.importlinter</code>) lists the layers top to "
            f"bottom: {' &gt; '.join(f'<code>{l}</code>' for l in ls)}; <code>make test</code> checks it with import-linter "
            f"(imports inside functions count). This page is drawn from the code at every <code>make docs</code>: the graph "
            f"counts the imports grimp finds between modules of two layers.</p>"
            f"<p><img src='{svg_name}' alt='The layers of personalwab and the imports between them'></p>"
            f"<p>{len([m for l in ls for m in modules(l)])} modules, {total:,} lines; the longest is "
            f"<code>{longest[0]}.{longest[1]}</code> ({longest[2]} lines). Each layer's notebooks are in "
            f"<code>nbs/&lt;layer&gt;/</code> (the command line's in <code>nbs/</code> and <code>nbs/commands/</code>), "
            f"and the sidebar follows them.</p>"
            f"<h2 id='the-layers'>The layers</h2><table><thead><tr><th>layer</th><th>what it holds (its docstring)</th>"
            f"<th>modules (lines)</th><th>imports from</th></tr></thead><tbody>{''.join(rows)}</tbody></table>"
            + scoring_parts_html())

def scoring_parts_html() -> str:
    """The section of the page on what a score depends on: `personalwab.env.resources.SCORING_PARTS`, each part with how
    it reaches a machine and whether it is the same on any x86 processor, and why."""
    from personalwab.env.resources import SCORING_PARTS
    rows = "".join(f"<tr><th>{html.escape(p.name)}</th><td>{html.escape(p.used_for)}</td><td>{html.escape(p.made)}</td>"
                   f"<td>{html.escape(p.same)}</td><td>{html.escape(p.why)}</td></tr>" for p in SCORING_PARTS)
    return ("<h2 id='what-a-score-depends-on'>What a score depends on</h2><p>Every part built or trained for grading or "
            "for an episode, how it reaches a machine (shipped with the package or a pinned wheel and checked by digest, "
            "built here by deterministic code, or trained here) and whether it is the same on any x86 processor "
            "(<code>personalwab.env.resources.SCORING_PARTS</code>). Nothing the embedded benchmark is graded with is "
            "trained on the reader's machine.</p><table><thead><tr><th>part</th><th>used for</th><th>made</th>"
            f"<th>the same on any x86 processor</th><th>why</th></tr></thead><tbody>{rows}</tbody></table>")

def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--svg", default=None, help="write the graph here")
    args = ap.parse_args(argv)
    edges = layer_imports()
    for l in layers(): print(f"{l:<10} {first_sentence(docstring(l))}")
    if args.svg: draw(edges, Path(args.svg)); print(f"graph: {args.svg}")

if __name__ == "__main__": main()
