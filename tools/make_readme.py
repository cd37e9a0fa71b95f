"""Render README.md from nbs/index.ipynb (the home page), without Quarto.

`python tools/make_readme.py` writes README.md; `--check` exits 1 if README.md is out of date
(the test suite runs the check, so the two never drift apart).
"""
from __future__ import annotations
import re, sys
from pathlib import Path
import nbformat
from nbconvert import MarkdownExporter

ROOT = Path(__file__).resolve().parents[1]
HEADER = "<!-- Generated from nbs/index.ipynb by tools/make_readme.py: edit the notebook, not this file. -->\n\n"

def readme_text(nb_path: Path = ROOT/"nbs"/"index.ipynb") -> str:
    nb = nbformat.read(nb_path, as_version=4)
    nb.cells = [c for c in nb.cells if not (c.cell_type == "code" and re.match(r"\s*#\|\s*hide", c.source))]
    for c in nb.cells:
        if c.cell_type == "code": c.source = "\n".join(l for l in c.source.splitlines() if not l.startswith("#|"))
    body, _ = MarkdownExporter().from_notebook_node(nb)
    body = re.sub(r"\]\((?![a-z]+:|/|#)([^)\s]+\.ipynb(?:#[^)\s]*)?)\)", r"](nbs/\1)", body)   # notebook links, from the repo root
    return HEADER + re.sub(r"\n{3,}", "\n\n", body).strip() + "\n"

def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    text, readme = readme_text(), ROOT/"README.md"
    if "--check" in argv:
        if readme.read_text(encoding="utf-8") != text:
            sys.exit("README.md is out of date with nbs/index.ipynb: run `python tools/make_readme.py`")
        return
    readme.write_text(text, encoding="utf-8"); print(f"wrote {readme}")

if __name__ == "__main__": main()
