"""Build the documentation site into _docs/.

Where Quarto is installed this is simply `nbdev_docs`. Where it is not (it cannot be installed on
the offline build machines), the notebooks go through nbdev's own processing (`nbdev_proc_nbs`:
show_doc rendered, directives applied, exports hidden) and a small renderer turns `_proc/` into a
static HTML site that works offline: a sidebar with every page, rendered API docs, code, real
outputs and figures (images are embedded as data URIs, so no asset is fetched).

Usage: python tools/build_docs.py [--out _docs]
"""
from __future__ import annotations
import argparse, html, re, shutil, subprocess, sys
from pathlib import Path

import nbformat
from nbconvert import HTMLExporter

ROOT = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent

CSS = """
body{margin:0;font-family:system-ui,-apple-system,Segoe UI,Roboto,sans-serif;color:#1f2328;line-height:1.55}
nav#sidebar{position:fixed;top:0;left:0;bottom:0;width:260px;overflow-y:auto;background:#f6f8fa;border-right:1px solid #d0d7de;padding:16px 12px;box-sizing:border-box}
nav#sidebar h2{font-size:1.1rem;margin:0 0 12px} nav#sidebar h3{font-size:.8rem;text-transform:uppercase;color:#57606a;margin:16px 0 4px}
nav#sidebar a{display:block;padding:3px 6px;border-radius:4px;color:#0969da;text-decoration:none;font-size:.92rem}
nav#sidebar a.active{background:#dbeafe;font-weight:600}
main{margin-left:260px;padding:24px 40px;max-width:1000px}
pre,code{font-family:ui-monospace,SFMono-Regular,Menlo,monospace;font-size:.88rem}
div.jp-InputArea pre, .highlight pre{background:#f6f8fa;border:1px solid #e5e7eb;border-radius:6px;padding:10px;overflow-x:auto}
.jp-OutputArea pre{background:#fff;border-left:3px solid #d0d7de;padding:6px 10px;overflow-x:auto}
.jp-InputPrompt,.jp-OutputPrompt,.prompt{display:none}
div.input_area pre{background:#f6f8fa;border:1px solid #e5e7eb;border-radius:6px;padding:10px;overflow-x:auto}
div.output_area pre{border-left:3px solid #d0d7de;padding:6px 10px;overflow-x:auto}
div.output_markdown{border-top:1px solid #d0d7de;padding-top:4px}
table{border-collapse:collapse;margin:8px 0} td,th{border:1px solid #d0d7de;padding:4px 8px;font-size:.9rem}
img{max-width:100%} .description{color:#57606a;font-size:1.1rem;margin-top:-8px}
h1.title{margin-bottom:4px}
"""

def front_matter(nb) -> dict:
    "Title/description from nbdev's front-matter raw cell (or the first markdown heading)."
    meta = {}
    for c in nb.cells:
        if c.cell_type == "raw" and c.source.startswith("---"):
            for m in re.finditer(r"^([\w-]+):\s*(.*(?:\n  .*)*)", c.source, re.M):
                meta[m.group(1)] = " ".join(m.group(2).split())
            break
    if "title" not in meta:
        for c in nb.cells:
            if c.cell_type == "markdown" and (m := re.match(r"#\s+(.+)", c.source)): meta["title"] = m.group(1); break
    return meta

def pages(proc: Path) -> list[tuple[str, Path]]:
    "(section, notebook) pairs in sidebar order: home, library, reproduction."
    nbs = sorted(p for p in proc.rglob("*.ipynb") if not any(part.startswith((".", "_")) for part in p.relative_to(proc).parts))
    home = [("Home", p) for p in nbs if p.name == "index.ipynb" and p.parent == proc]
    lib = [("Library", p) for p in nbs if p.parent == proc and p.name != "index.ipynb"]
    rest = [("Paper reproduction" if p.parent.name == "paper" else p.parent.name.title(), p) for p in nbs if p.parent != proc]
    return home + lib + rest

def href(proc: Path, nb: Path) -> str:
    "The page's path in the site: nbdev's `output-file` (e.g. `schema.html` for `01_schema.ipynb`), as Quarto names it."
    out = front_matter(nbformat.read(nb, as_version=4)).get("output-file")
    rel = nb.relative_to(proc)
    return (rel.parent/out).as_posix() if out else rel.with_suffix(".html").as_posix()

DIRECTIVE = re.compile(r"^\s*#\|\s*([\w-]+)\s*:\s*(.*)$")

def apply_directives(nb) -> None:
    "Apply the Quarto cell options nbdev emits: `echo: false` hides code, `output: false` hides outputs; strip `#|` lines."
    for c in nb.cells:
        if c.cell_type != "code": continue
        lines = c.source.splitlines()
        opts = {m.group(1): m.group(2).strip() for l in lines if (m := DIRECTIVE.match(l))}
        c.source = "\n".join(l for l in lines if not DIRECTIVE.match(l)).strip()
        if opts.get("echo") == "false": c.source = ""
        if opts.get("output") == "false": c.outputs = []
        if opts.get("include") == "false": c.source, c.outputs = "", []
    nb.cells = [c for c in nb.cells if c.cell_type != "code" or c.source or c.outputs]
    for c in nb.cells:
        if c.cell_type == "code" and not c.source: c.metadata["transient"] = {"remove_source": True}

QUARTO_ATTRS = re.compile(r"(\]\([^)]*\))\{[^}]*\}")

def fix_links(text: str, up: str, doc_url: str) -> str:
    "Drop Quarto link attributes and make links to this site's own pages relative."
    text = QUARTO_ATTRS.sub(r"\1", text)
    return text.replace(doc_url, up) if doc_url else text

def doc_url() -> str:
    from configparser import ConfigParser
    cfg = ConfigParser(); cfg.read(ROOT/"settings.ini")
    d = cfg["DEFAULT"]
    return d.get("doc_host", "").rstrip("/") + d.get("doc_baseurl", "").rstrip("/") + "/"

def render(proc: Path, out: Path) -> list[Path]:
    exporter = HTMLExporter(template_name="basic")
    entries = pages(proc)
    info = [(sec, nb, nbformat.read(nb, as_version=4)) for sec, nb in entries]
    titles = {nb: front_matter(n).get("title", nb.stem) for _, nb, n in info}
    written, site_url = [], doc_url()
    for sec, nb, n in info:
        page = href(proc, nb)
        depth = page.count("/")
        up = "../" * depth
        side, last = [f"<h2><a href='{up}index.html'>personalwab</a></h2>"], None
        for s2, nb2, _ in info:
            if s2 != last and s2 != "Home": side.append(f"<h3>{html.escape(s2)}</h3>")
            last = s2
            cls = " class='active'" if nb2 == nb else ""
            side.append(f"<a{cls} href='{up}{href(proc, nb2)}'>{html.escape(titles[nb2])}</a>")
        fm = front_matter(n)
        n.cells = [c for c in n.cells if not (c.cell_type == "raw" and c.source.startswith("---"))]
        apply_directives(n)
        for c in n.cells:
            if c.cell_type == "markdown": c.source = fix_links(c.source, up, site_url)
            for o in c.get("outputs", []):
                if "text/markdown" in o.get("data", {}): o["data"]["text/markdown"] = fix_links(o["data"]["text/markdown"], up, site_url)
        body, _ = exporter.from_notebook_node(n)
        head = f"<h1 class='title'>{html.escape(titles[nb])}</h1>" + (f"<p class='description'>{html.escape(fm['description'])}</p>" if fm.get("description") else "")
        doc = (f"<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'><title>{html.escape(titles[nb])} – personalwab</title>"
               f"<meta name='viewport' content='width=device-width, initial-scale=1'><style>{CSS}</style></head>"
               f"<body><nav id='sidebar'>{''.join(side)}</nav><main>{head}{body}</main></body></html>")
        dest = out/page; dest.parent.mkdir(parents=True, exist_ok=True); dest.write_text(doc, encoding="utf-8")
        written.append(dest)
    return written

def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default=str(ROOT/"_docs"))
    args = ap.parse_args(argv)
    out = Path(args.out)
    if shutil.which("quarto"):
        subprocess.run([str(BIN/"nbdev_docs")], cwd=ROOT, check=True); return
    subprocess.run([str(BIN/"nbdev_proc_nbs"), "--force"], cwd=ROOT, check=True, stdin=subprocess.DEVNULL)
    if out.exists(): shutil.rmtree(out)
    files = render(ROOT/"_proc", out)
    print(f"docs: {len(files)} pages in {out}/ (open {out/'index.html'})")

if __name__ == "__main__": main()
