"""Project-level checks: the library is in sync with the notebooks, the README with the home page,
and the layout matches the design card."""
import re, shutil, subprocess, sys
from pathlib import Path
import pytest

ROOT = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent

def test_layout_matches_design_card():
    for p in ["nbs", "personalwab", "settings.ini", "tests", "data", "figures", "README.md",
              "setup.py", "pyproject.toml", "constraints.txt", "Makefile", ".ci/run", "nbs/index.ipynb"]:
        assert (ROOT/p).exists(), f"missing {p}"

@pytest.fixture(scope="module")
def synced_copy(tmp_path_factory):
    "A copy of the sources on which nbdev_export and nbdev_clean have been run."
    d = tmp_path_factory.mktemp("sync")
    for p in ["nbs", "personalwab"]: shutil.copytree(ROOT/p, d/p, ignore=shutil.ignore_patterns("__pycache__", ".ipynb_checkpoints"))
    for p in ["settings.ini", "setup.py"]: shutil.copy(ROOT/p, d/p)
    for cmd in ["nbdev_export", "nbdev_clean"]:
        r = subprocess.run([str(BIN/cmd)], cwd=d, capture_output=True, text=True)
        assert r.returncode == 0, f"{cmd} failed:\n{r.stdout}\n{r.stderr}"
    return d

def _differences(a: Path, b: Path, pattern: str) -> list[str]:
    fa = {p.relative_to(a) for p in a.rglob(pattern) if "__pycache__" not in p.parts and ".ipynb_checkpoints" not in p.parts}
    fb = {p.relative_to(b) for p in b.rglob(pattern) if "__pycache__" not in p.parts and ".ipynb_checkpoints" not in p.parts}
    return sorted(str(p) for p in fa ^ fb) + sorted(str(p) for p in fa & fb if (a/p).read_bytes() != (b/p).read_bytes())

def test_library_is_exported_from_notebooks(synced_copy):
    diff = _differences(ROOT/"personalwab", synced_copy/"personalwab", "*.py")
    assert not diff, f"nbdev_export would change personalwab/ (edit notebooks, then run nbdev_export): {diff}"

def test_notebooks_are_clean(synced_copy):
    diff = _differences(ROOT/"nbs", synced_copy/"nbs", "*.ipynb")
    assert not diff, f"nbdev_clean would change these notebooks (run nbdev_clean): {diff}"

def test_readme_is_rendered_from_index_notebook():
    r = subprocess.run([sys.executable, str(ROOT/"tools"/"make_readme.py"), "--check"], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr or r.stdout

def test_gitattributes_uses_nbdev_merge_driver():
    assert "*.ipynb merge=nbdev-merge" in (ROOT/".gitattributes").read_text()

def mixed_import_cells(nb_path: Path) -> list[int]:
    """Indices of non-exported code cells that import *and* run other code. The docs build (nbdev's show_doc
    processing) executes every cell with an import, without the cells before it: such a cell fails there."""
    import ast, json
    bad = []
    for i, c in enumerate(json.loads(nb_path.read_text(encoding="utf-8"))["cells"]):
        src = "".join(c["source"]) if isinstance(c["source"], list) else c["source"]
        if c["cell_type"] != "code" or re.search(r"^#\|\s*(export|exports|exporti|exec_doc|eval:\s*false)\b", src, re.M): continue
        try: body = ast.parse("\n".join(l for l in src.splitlines() if not l.lstrip().startswith(("%", "!")))).body
        except SyntaxError: continue
        imports = [s for s in body if isinstance(s, (ast.Import, ast.ImportFrom))]
        if imports and len(imports) < len(body): bad.append(i)
    return bad

def test_imports_have_cells_of_their_own():
    nbs = [p for p in sorted((ROOT/"nbs").rglob("*.ipynb")) if p.relative_to(ROOT/"nbs").parts[0] != "paper"]
    bad = {str(p.relative_to(ROOT/"nbs")): mixed_import_cells(p) for p in nbs}
    bad = {k: v for k, v in bad.items() if v}
    assert not bad, f"cells that import and also run code (split the imports into their own cell): {bad}"

def test_mixed_import_cells_are_found(tmp_path):
    nb = {"cells": [{"cell_type": "code", "source": ["import os\n", "x = os.sep"]},
                    {"cell_type": "code", "source": ["import os\n", "from pathlib import Path"]},
                    {"cell_type": "code", "source": ["#| export\n", "import os\n", "X = 1"]}]}
    (tmp_path/"n.ipynb").write_text(__import__("json").dumps(nb))
    assert mixed_import_cells(tmp_path/"n.ipynb") == [0]

def test_wheel_ships_the_package_data(tmp_path):
    """`pip install .` (not only an editable install) must install the data files the library reads, such as the
    generator's catalog vocabulary: every non-Python file of personalwab/ is in the wheel built from the sources."""
    import zipfile
    src = tmp_path/"src"
    shutil.copytree(ROOT/"personalwab", src/"personalwab", ignore=shutil.ignore_patterns("__pycache__"))
    for p in ["setup.py", "settings.ini", "pyproject.toml", "README.md"]: shutil.copy(ROOT/p, src/p)
    r = subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "--no-build-isolation", "--no-index",
                        "-w", str(tmp_path/"dist"), str(src)], capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr
    data = sorted(f"personalwab/{p.name}" for p in (ROOT/"personalwab").iterdir() if p.is_file() and p.suffix not in {".py", ".pyc"})
    assert "personalwab/catalog.json" in data
    names = set(zipfile.ZipFile(next((tmp_path/"dist").glob("*.whl"))).namelist())
    missing = [p for p in data if p not in names]
    assert not missing, f"not in the wheel (add them to setup.py's package_data): {missing}"
