"""The architecture visible in the folders, checked (issue 47): the layers of `.importlinter` hold (no module imports a
higher layer, inside a function or by a 'module:attr' string either; no import cycle), every subpackage says what it
holds and may import, no module is over 450 lines, and the library's lines are short (at most 1% over 120 characters,
none over 160). The notebooks live in the folder of the subpackage they export to."""
import ast, configparser, json, re, subprocess, sys
from pathlib import Path
import pytest

ROOT = Path(__file__).resolve().parents[1]
PKG = ROOT/"personalwab"
BIN = Path(sys.executable).parent
MAX_MODULE_LINES, LONG, LONGEST, LONG_SHARE = 450, 120, 160, 0.01

def library_files() -> list[Path]:
    "The library's Python files, the generated module index aside."
    return sorted(p for p in PKG.rglob("*.py") if p.name != "_modidx.py" and "__pycache__" not in p.parts)

def layers() -> list[str]:
    "The layers of the contract, top to bottom."
    cfg = configparser.ConfigParser(); cfg.read(ROOT/".importlinter")
    return cfg["importlinter:contract:layers"]["layers"].split()

def module_name(p: Path) -> str:
    parts = p.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)

def layer_of(module: str) -> int | None:
    "The position of `module` (`personalwab.x.y`) in the layers, top = 0; None for the package itself."
    parts = module.split(".")
    return layers().index(parts[1]) if len(parts) > 1 and parts[1] in layers() else None

def test_the_import_contracts_hold():
    "lint-imports: the layers contract and the no-cycle contract of `.importlinter` (imports inside functions count)."
    exe = BIN/"lint-imports"
    r = subprocess.run([str(exe) if exe.exists() else "lint-imports", "--no-cache"], cwd=ROOT, capture_output=True, text=True,
                       env={"PYTHONPATH": str(ROOT), "PATH": str(BIN)})
    assert r.returncode == 0, r.stdout[-4000:] + r.stderr[-2000:]
    assert "Contracts: 2 kept, 0 broken." in r.stdout, r.stdout[-2000:]

def test_every_top_level_module_is_in_a_layer():
    "Every subpackage and top-level module is a layer of the contract: nothing escapes it."
    tops = {p.name if p.is_dir() else p.stem for p in PKG.iterdir() if (p.is_dir() and (p/"__init__.py").exists()) or p.suffix == ".py"}
    assert tops - {"__init__", "_modidx"} == set(layers()), tops ^ set(layers())

def test_no_module_at_the_top_level_but_the_entry_point():
    assert sorted(p.name for p in PKG.glob("*.py")) == ["__init__.py", "_modidx.py", "cli.py"]

def test_string_imports_respect_the_layers():
    "'personalwab.x.y:attr' strings (imported on use, which import-linter cannot see) never name a higher layer."
    bad = []
    for p in library_files():
        me = layer_of(module_name(p))
        for n in ast.walk(ast.parse(p.read_text(encoding="utf-8"))):
            if isinstance(n, ast.Constant) and isinstance(n.value, str) and (m := re.fullmatch(r"(personalwab(?:\.\w+)+):\w+", n.value)):
                them = layer_of(m.group(1))
                if me is not None and them is not None and them < me: bad.append(f"{p.relative_to(ROOT)}: {n.value}")
    assert not bad, bad

@pytest.mark.parametrize("pkg", sorted(p.parent.name for p in PKG.glob("*/__init__.py")))
def test_every_subpackage_says_what_it_holds_and_may_import(pkg):
    doc = ast.get_docstring(ast.parse((PKG/pkg/"__init__.py").read_text(encoding="utf-8")))
    assert doc and len(doc.splitlines()) <= 3, f"personalwab/{pkg}/__init__.py: a docstring of two lines, what it holds and may import"
    assert re.search(r"May import|Imports nothing", doc), f"personalwab/{pkg}: the docstring does not say which layers it may import"

def test_no_module_over_450_lines():
    big = {str(p.relative_to(ROOT)): n for p in library_files() if (n := len(p.read_text(encoding="utf-8").splitlines())) > MAX_MODULE_LINES}
    assert not big, f"modules over {MAX_MODULE_LINES} lines (split them by concern): {big}"

def test_library_lines_are_short():
    lines = [(p, i, l) for p in library_files() for i, l in enumerate(p.read_text(encoding="utf-8").splitlines(), 1)]
    long = [(p, i, l) for p, i, l in lines if len(l) > LONG]
    longest = [f"{p.relative_to(ROOT)}:{i} ({len(l)})" for p, i, l in long if len(l) > LONGEST]
    assert not longest, f"lines over {LONGEST} characters (wrap them in the notebook): {longest}"
    assert len(long) <= LONG_SHARE * len(lines), (f"{len(long)} of {len(lines)} lines over {LONG} characters, more than "
                                                 f"{LONG_SHARE:.0%} (run /work/gen/wrap_lines.py or wrap them in the notebooks)")

def library_notebooks() -> list[Path]:
    return sorted(p for p in (ROOT/"nbs").rglob("*.ipynb") if not any(s.startswith((".", "_")) for s in p.relative_to(ROOT/"nbs").parts)
                  and p.relative_to(ROOT/"nbs").parts[0] != "paper")

def default_exp(nb: Path) -> str | None:
    for c in json.loads(nb.read_text(encoding="utf-8"))["cells"]:
        src = "".join(c["source"])
        if c["cell_type"] == "code" and (m := re.search(r"^#\|\s*default_exp\s+(\S+)", src, re.M)): return m.group(1)
    return None

def test_notebooks_live_in_the_folder_of_their_subpackage():
    "`nbs/<subpackage>/NN_<module>.ipynb` exports `personalwab/<subpackage>/<module>.py`; the paper notebooks export nothing."
    bad = []
    for nb in library_notebooks():
        exp, rel = default_exp(nb), nb.relative_to(ROOT/"nbs")
        if exp is None: continue
        folder = rel.parent.as_posix()
        if exp.rpartition(".")[0] != ("" if folder == "." else folder): bad.append(f"{rel}: exports {exp}")
        if re.sub(r"^\d+[a-z]?_", "", nb.stem) != exp.rpartition(".")[2]: bad.append(f"{rel}: named for another module than {exp}")
    paper = [p.name for p in (ROOT/"nbs"/"paper").glob("*.ipynb") if default_exp(p)]
    assert not bad and not paper, bad + paper
