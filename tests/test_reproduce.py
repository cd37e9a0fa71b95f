"""CI runs the reproduction notebooks in their smoke profile (a handful of tasks each)."""
import subprocess, sys
from pathlib import Path
import pytest

ROOT = Path(__file__).resolve().parents[1]
PAPER_NBS = sorted((ROOT/"nbs"/"paper").glob("*.ipynb"))

@pytest.mark.parametrize("nb", PAPER_NBS, ids=[p.stem for p in PAPER_NBS])
def test_paper_notebook_smoke(nb, tmp_path):
    r = subprocess.run([sys.executable, str(ROOT/"tools"/"reproduce.py"), "--profile", "smoke", "--only", nb.stem,
                        "--out", str(tmp_path)], capture_output=True, text=True, cwd=ROOT)
    print(r.stdout[-10000:])
    assert r.returncode == 0, (r.stdout + r.stderr)[-6000:]
    produced = [p for p in tmp_path.iterdir() if p.suffix in {".csv", ".md", ".png", ".svg"}]
    assert produced, f"{nb.name} wrote no table or figure"
    for stem in {p.stem for p in produced}:    # tables as CSV + Markdown, figures as PNG + SVG, never half of a pair
        exts = {p.suffix for p in produced if p.stem == stem}
        assert exts in ({".csv", ".md"}, {".png", ".svg"}, {".csv", ".md", ".png", ".svg"}), f"{nb.name}: {stem} has only {sorted(exts)}"
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")], "temporary files left behind"
    for md in (p for p in produced if p.suffix == ".md"):   # every table says what produced it
        assert "**Machine**" in md.read_text() and "**Code**" in md.read_text(), f"{md.name} lacks its provenance"

def test_statistics_notebook_runs_on_official_format_data(tmp_path):
    "Official-format files instead of the embedded benchmark by changing the `data` parameter only (the release's layout, written from the default benchmark)."
    import papermill as pm
    from personalwab.data import load_benchmark
    from personalwab.official import write_official
    release = tmp_path/"release"
    write_official(load_benchmark(progress=False), release)
    nb = ROOT/"nbs"/"paper"/"table2_fig3_fig4_statistics.ipynb"
    pm.execute_notebook(str(nb), str(tmp_path/"executed.ipynb"), kernel_name="python3", cwd=str(nb.parent), progress_bar=False,
                        parameters={"out_dir": str(tmp_path/"figures"), "smoke": False, "data": str(release)})
    md = (tmp_path/"figures"/"table2_statistics.md").read_text()
    assert f"official-format data from {release}" in md, md[-1500:]
    assert "150 users, 3,000 products" in md      # the same benchmark, read back from the release's files
