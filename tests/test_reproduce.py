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
