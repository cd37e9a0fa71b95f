"""Every library notebook (nbs/ and nbs/<subpackage>/) runs as one pytest test, so a failure names the notebook.

Each notebook runs with nbdev's test runner in its own Python process (no state leaks between
notebooks: one JVM, one torch thread pool, one set of loaded models per notebook). Cells tagged
`#| eval: false` (GPU or API-key only) are skipped as nbdev_test skips them; `slow` cells run
(CI runs them). Reproduction notebooks (nbs/paper/) run through papermill in test_reproduce.py.
"""
import subprocess, sys
from pathlib import Path
import pytest

ROOT = Path(__file__).resolve().parents[1]
NBS = ROOT/"nbs"
# the library's notebooks: nbs/ and its subpackages' folders (nbs/<subpackage>/), the paper's aside
LIBRARY_NBS = sorted(p for p in [*NBS.glob("*.ipynb"), *NBS.glob("*/*.ipynb")]
                     if not any(s.startswith(("_", ".")) for s in p.relative_to(NBS).parts) and p.parent.name != "paper")
RUNNER = """
import sys
from pathlib import Path
from nbdev.test import test_nb
ok, secs = test_nb(Path(sys.argv[1]), skip_flags=["notest"], force_flags=["slow"], showerr=True, basepath=Path(sys.argv[2]))
print(f"notebook {Path(sys.argv[1]).name}: {'passed' if ok else 'FAILED'} in {secs:.1f}s")
sys.exit(0 if ok else 1)
"""

@pytest.mark.parametrize("nb", LIBRARY_NBS, ids=[p.relative_to(NBS).with_suffix("").as_posix() for p in LIBRARY_NBS])
def test_notebook(nb):
    r = subprocess.run([sys.executable, "-c", RUNNER, str(nb), str(ROOT)], cwd=NBS, capture_output=True, text=True)
    print(r.stdout[-20000:]); print(r.stderr[-20000:], file=sys.stderr)
    assert r.returncode == 0, f"{nb.name}: a cell failed:\n{(r.stdout + r.stderr)[-6000:]}"
