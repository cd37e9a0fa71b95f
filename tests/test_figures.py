"""The statistical figures are drawn with seaborn in the package's one theme, from the committed tables, which drawing
leaves byte for byte as they are (tools/redraw_figures.py)."""
import hashlib, sys
from pathlib import Path
import pytest

ROOT = Path(__file__).resolve().parents[1]
FIGS = ROOT/"figures"
sys.path.insert(0, str(ROOT/"tools"))

def _digests(folder: Path) -> dict:
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(folder.glob("*.csv"))}

def test_redrawing_every_figure_leaves_every_table_unchanged(tmp_path):
    "Each figure of redraw_figures is drawn from its committed table into a temporary folder; no CSV changes."
    from redraw_figures import _figures, redraw
    before = _digests(FIGS)
    written = redraw(FIGS, tmp_path)
    assert _digests(FIGS) == before                                            # the committed tables, byte for byte
    assert sorted(p.name for p in written) == sorted(f"{n}.{e}" for n in _figures() for e in ("png", "svg"))
    assert not list(tmp_path.glob("*.csv")) and not list(tmp_path.glob(".*"))   # only pictures, no temporary files
    for p in tmp_path.glob("*.svg"):                                            # no machine's paths in a figure
        assert "/home/" not in p.read_text() and str(ROOT) not in p.read_text(), p.name

@pytest.mark.parametrize("name", ["table3_single_turn", "table4_multi_turn", "table5_puma_ablation", "table6_memory_length",
                                  "claims", "fig3_profile_distributions", "fig5_profile_consistency", "web_track"])
def test_each_figure_is_seaborn_in_the_theme(name):
    "A figure function draws with seaborn (its bars or lines), on axes that carry set_theme's style."
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import pandas as pd
    import seaborn as sns
    from redraw_figures import _figures
    csv, kw, starts, draw = _figures()[name]
    plt.rcdefaults()                                                           # whatever came before: not the theme
    fig = draw(pd.read_csv(FIGS/csv, **kw), f"{starts} — test")
    style = sns.axes_style("whitegrid")
    axes = [ax for ax in fig.axes if ax.axison]
    assert axes
    for ax in axes:
        assert ax.get_facecolor() == matplotlib.colors.to_rgba(style["axes.facecolor"])
        assert ax.spines["left"].get_edgecolor() == matplotlib.colors.to_rgba(style["axes.edgecolor"])  # light frame
        assert any(l.get_visible() for l in ax.get_xgridlines() + ax.get_ygridlines())               # its grid
        assert ax.containers or ax.lines or ax.collections                        # what seaborn drew
    assert matplotlib.rcParams["legend.fontsize"] == 8                         # set_theme's own settings
    plt.close(fig)
