"""Build the documentation site into _docs/.

Where Quarto is installed this is simply `nbdev_docs`. Where it is not (it cannot be installed on
the offline build machines), the notebooks go through nbdev's own processing (show_doc rendered,
directives applied, exports hidden) in a scratch copy, and a small renderer turns the processed
notebooks into a static HTML site that works offline from `file://`: a sidebar with every page, grouped by
the package's layers bottom up with one sentence each (their notebooks' folders; a menu at phone width), an
architecture page drawn from the code (`tools/architecture.py`: the layers and the imports between them), Pygments-highlighted code, a table of contents and previous/next links
on each page, client-side full-text search (a prebuilt index in `search.js`), API docs whose
anchors match nbdev's links, and one page per task of every published run (results/, restored into a scratch folder) or of every run
the paper notebooks used (--runs).

Nothing here installs anything, and nothing is written into the checkout except `--out`.

Usage: python tools/build_docs.py [--out _docs] [--proc DIR] [--runs DIR]
"""
from __future__ import annotations
import argparse, html, json, os, re, shutil, subprocess, sys, tempfile
from configparser import ConfigParser
from pathlib import Path

import nbformat, yaml
from bs4 import BeautifulSoup
from nbconvert import HTMLExporter
from pygments.formatters import HtmlFormatter

ROOT = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent
sys.path.insert(0, str(ROOT/"tools"))                # architecture.py, beside this file
# settings.ini's git_url until someone owns a real repository; a setting `git_url_is_real = True` overrides.
PLACEHOLDER_GIT_URLS = {"https://github.com/personalwab/personalwab"}
SEARCH_PAGE = "site-search.html"      # not search.html: that is the page of the search module (20_search)

CSS = """
:root{--side:270px;--toc:220px;--fg:#1f2328;--muted:#57606a;--line:#d0d7de;--bg2:#f6f8fa;--link:#0969da}
*{box-sizing:border-box}
body{margin:0;font-family:system-ui,-apple-system,Segoe UI,Roboto,sans-serif;color:var(--fg);line-height:1.55}
a{color:var(--link)}
#menu-toggle{display:none}
label.menu-button{display:none}
nav#sidebar{position:fixed;top:0;left:0;bottom:0;width:var(--side);overflow-y:auto;background:var(--bg2);border-right:1px solid var(--line);padding:16px 12px}
nav#sidebar h2{font-size:1.1rem;margin:0 0 8px} nav#sidebar h2 a{color:var(--fg);padding:0}
nav#sidebar h3{font-size:.78rem;text-transform:uppercase;letter-spacing:.03em;color:var(--muted);margin:16px 0 4px}
nav#sidebar p.group{font-size:.78rem;color:var(--muted);margin:0 6px 4px;line-height:1.35}
nav#sidebar a{display:block;padding:3px 6px;border-radius:4px;color:var(--link);text-decoration:none;font-size:.92rem}
nav#sidebar a.active{background:#dbeafe;font-weight:600}
form.search{margin:0 0 8px} form.search input{width:100%;padding:5px 8px;border:1px solid var(--line);border-radius:6px;font-size:.9rem}
div.layout{margin-left:var(--side);display:flex;align-items:flex-start}
main{flex:1;min-width:0;padding:24px 40px;max-width:1040px}
nav#toc{position:sticky;top:0;width:var(--toc);flex:none;max-height:100vh;overflow-y:auto;padding:24px 12px;font-size:.85rem}
nav#toc h2{font-size:.8rem;text-transform:uppercase;color:var(--muted);margin:0 0 6px}
nav#toc ul{list-style:none;margin:0;padding:0} nav#toc li.l3{padding-left:12px}
nav#toc a{color:var(--muted);text-decoration:none;display:block;padding:2px 0;overflow-wrap:anywhere} nav#toc a:hover{color:var(--link)}
pre,code{font-family:ui-monospace,SFMono-Regular,Menlo,monospace;font-size:.86rem}
pre{white-space:pre-wrap;overflow-wrap:anywhere;word-break:break-word}
.highlight pre,div.jp-InputArea pre{background:var(--bg2);border:1px solid #e5e7eb;border-radius:6px;padding:10px;margin:8px 0}
.jp-OutputArea pre{background:#fff;border-left:3px solid var(--line);padding:6px 10px;margin:4px 0}
main > pre, details > pre{background:var(--bg2);border:1px solid #e5e7eb;border-radius:6px;padding:8px 10px}
details > summary{cursor:pointer;color:var(--muted);margin:4px 0}
.jp-InputPrompt,.jp-OutputPrompt,.prompt,a.anchor-link{display:none}
div.table-wrap{max-width:100%;overflow-x:auto;margin:8px 0}
table{border-collapse:collapse} td,th{border:1px solid var(--line);padding:4px 8px;font-size:.9rem;vertical-align:top}
img{max-width:100%;height:auto} .description{color:var(--muted);font-size:1.1rem;margin-top:-4px}
h1.title{margin:0 0 4px} h2,h3{scroll-margin-top:8px}
a.source{float:right;font-size:smaller}
nav.pager{display:flex;justify-content:space-between;gap:12px;border-top:1px solid var(--line);margin-top:40px;padding-top:12px}
nav.pager a{text-decoration:none;max-width:48%} nav.pager .next{margin-left:auto;text-align:right}
nav.pager small{display:block;color:var(--muted)}
#results li{margin:0 0 12px} #results .snip{color:var(--muted);font-size:.9rem} mark{background:#fff3b0}
@media (max-width:1200px){nav#toc{display:none}}
@media (max-width:800px){
 nav#sidebar{position:static;width:auto;border-right:none;border-bottom:1px solid var(--line);display:none}
 #menu-toggle:checked ~ nav#sidebar{display:block}
 label.menu-button{display:block;padding:10px 16px;background:var(--bg2);border-bottom:1px solid var(--line);font-weight:600;cursor:pointer}
 div.layout{margin-left:0;display:block} main{padding:12px 14px}
 nav.pager{flex-direction:column} nav.pager a{max-width:100%}
}
"""

SEARCH_JS = r"""
(function(){
 const q=new URLSearchParams(location.search).get('q')||'';
 const box=document.getElementById('search-page-box'); if(box) box.value=q;
 const out=document.getElementById('results'); if(!out) return;
 function esc(s){return s.replace(/[&<>"]/g,c=>({'&':'&amp;','<':'&lt;','>':'&gt;','"':'&quot;'}[c]));}
 function run(q){
  const terms=q.toLowerCase().split(/\s+/).filter(Boolean); out.innerHTML='';
  if(!terms.length){return;}
  const hits=[];
  for(const d of window.SEARCH_INDEX){
   const t=d.t.toLowerCase(), h=d.h.toLowerCase(), x=d.x.toLowerCase(); let s=0, ok=true;
   for(const w of terms){const a=(h.includes(w)?10:0)+(t.includes(w)?5:0)+(x.includes(w)?1:0); if(!a){ok=false;break;} s+=a;}
   if(ok) hits.push([s,d]);
  }
  hits.sort((a,b)=>b[0]-a[0]);
  document.getElementById('count').textContent=hits.length+' result'+(hits.length==1?'':'s')+' for "'+q+'"';
  for(const [s,d] of hits.slice(0,100)){
   const i=d.x.toLowerCase().indexOf(terms[0]); const a=Math.max(0,i-80);
   let snip=esc(d.x.slice(a,a+220)); for(const w of terms){snip=snip.replace(new RegExp('('+w.replace(/[.*+?^${}()|[\]\\]/g,'\\$&')+')','ig'),'<mark>$1</mark>');}
   const li=document.createElement('li');
   li.innerHTML='<a class="hit" href="'+d.u+'">'+esc(d.t)+(d.h&&d.h!=d.t?' › '+esc(d.h):'')+'</a><div class="snip">'+(a?'…':'')+snip+'…</div>';
   out.appendChild(li);
  }
 }
 run(q);
})();
"""

# ---------------------------------------------------------------- settings, front matter, pages

def settings() -> dict:
    cfg = ConfigParser(); cfg.read(ROOT/"settings.ini")
    return dict(cfg["DEFAULT"])

def repo_url(cfg: dict) -> str | None:
    "The repository's web address, or None while settings.ini names only the placeholder."
    url = cfg.get("git_url", "").rstrip("/")
    real = cfg.get("git_url_is_real", "").strip().lower() in ("1", "true", "yes")
    return url if url and (real or url not in PLACEHOLDER_GIT_URLS) else None

def doc_url(cfg: dict) -> str:
    return cfg.get("doc_host", "").rstrip("/") + cfg.get("doc_baseurl", "").rstrip("/") + "/"

def front_matter(nb) -> dict:
    "Title/description from nbdev's front-matter raw cell, parsed as YAML (or the first markdown heading)."
    meta = {}
    for c in nb.cells:
        if c.cell_type == "raw" and c.source.lstrip().startswith("---"):
            body = c.source.strip().strip("-").strip()
            try: meta = yaml.safe_load(body) or {}
            except yaml.YAMLError as e: raise SystemExit(f"build_docs: front matter is not YAML: {e}")
            meta = {k: (" ".join(str(v).split()) if isinstance(v, str) else v) for k, v in meta.items()}
            break
    if "title" not in meta:
        for c in nb.cells:
            if c.cell_type == "markdown" and (m := re.match(r"#\s+(.+)", c.source)): meta["title"] = m.group(1).strip(); break
    return meta

PAPER_SECTION = "Paper reproduction"
ARCHITECTURE = ("architecture.html", "Architecture")   # a page made from the code (tools/architecture.py), not a notebook

def groups() -> list[tuple[str, str]]:
    """The sidebar's groups, bottom layer first, each with one sentence: the layers of `.importlinter` (their notebooks in
    `nbs/<layer>/`; the command line's, in `nbs/` and `nbs/commands/`, under `cli`), then the paper's notebooks."""
    import architecture as arch
    ls = list(reversed(arch.layers()))
    out = [(l, arch.first_sentence(arch.docstring(l))) for l in ls if l != "commands"]
    return out + [(PAPER_SECTION, "The paper's tables, figures and claims, executed from the published runs (`make reproduce`).")]

def pages(proc: Path) -> list[tuple[str, Path]]:
    "(section, notebook) pairs in sidebar order: home, then the layers bottom up (`groups`), then the paper reproduction."
    nbs = sorted(p for p in proc.rglob("*.ipynb") if not any(part.startswith((".", "_")) for part in p.relative_to(proc).parts))
    def group(p: Path) -> str:
        rel = p.relative_to(proc)
        if rel.parts[0] == "paper": return PAPER_SECTION
        if len(rel.parts) == 1: return "cli" if re.match(r"\d+[a-z]?_cli\b", p.stem) else "Home"
        return "cli" if rel.parts[0] == "commands" else rel.parts[0]
    order = ["Home"] + [g for g, _ in groups()]
    home = sorted((p for p in nbs if group(p) == "Home"), key=lambda p: (p.name != "index.ipynb", p.name))
    rest = sorted((p for p in nbs if group(p) != "Home"), key=lambda p: (order.index(group(p)) if group(p) in order else len(order),
                                                                          group(p), p.relative_to(proc).parts[0] == "commands", p.name))
    return [("Home", p) for p in home] + [(group(p), p) for p in rest]

def href(proc: Path, nb: Path, fm: dict | None = None) -> str:
    "The page's path in the site: nbdev's `output-file` (e.g. `schema.html` for `01_schema.ipynb`), as Quarto names it."
    out = (fm if fm is not None else front_matter(nbformat.read(nb, as_version=4))).get("output-file")
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

def fix_links(text: str, up: str, site_url: str) -> str:
    "Drop Quarto link attributes and make links to this site's own pages relative."
    text = QUARTO_ATTRS.sub(r"\1", text)
    return text.replace(site_url, up) if site_url else text

NB_LINK = re.compile(r"\]\(([^)\s#:]+\.ipynb)(#[^)\s]*)?\)")

def notebook_links(text: str, nb_dir: Path, page: str, nb_pages: dict[Path, str]) -> str:
    """Markdown links to another notebook (`[env](24_env.ipynb#the-environment)`) point at that notebook's page
    (`env.html#the-environment`), as Quarto rewrites them; links to files that are not pages stay as they are."""
    def sub(m):
        target = (nb_dir/m.group(1)).resolve()
        if target not in nb_pages: return m.group(0)
        rel = Path(os.path.relpath(nb_pages[target], os.path.dirname(page) or ".")).as_posix()
        return f"]({rel}{m.group(2) or ''})"
    return NB_LINK.sub(sub, text)

def slug(text: str) -> str:
    "Pandoc's (Quarto's) automatic identifier: lower case, punctuation but `_-.` dropped, spaces to hyphens."
    s = re.sub(r"[^\w\s.-]", "", text.strip().lower())
    s = re.sub(r"\s+", "-", s)
    return re.sub(r"^[^a-z]+", "", s) or "section"

# ---------------------------------------------------------------- source links

_CELL = re.compile(r"^# %% (\.\./\S+\.ipynb)(?: #?(\S+))?")

def source_target(py_rel: str, line: int) -> tuple[str, str | None] | None:
    "The notebook (repository path) and cell id that an exported line of `py_rel` comes from."
    py = ROOT/py_rel
    if not py.exists(): return None
    found = None
    for i, l in enumerate(py.read_text(encoding="utf-8").splitlines(), 1):
        if i > line: break
        if (m := _CELL.match(l)): found = m
    if not found: return None
    nb = os.path.normpath(os.path.join(os.path.dirname(py_rel), found.group(1)))
    return Path(nb).as_posix(), found.group(2)

SOURCE_RE = re.compile(r"https?://[^\s\"')]+?/blob/[^/\s]+/(\S+?\.py)#L(\d+)")

def source_link(url: str, page_dir: Path, repo: str | None, branch: str) -> str:
    "Where a show_doc `source` link should point: the notebook cell, by a path relative to the page (or on the real repository)."
    m = SOURCE_RE.match(url)
    if not m: return url
    tgt = source_target(m.group(1), int(m.group(2)))
    if not tgt: return url if repo else os.path.relpath(ROOT/m.group(1), page_dir)
    nb, cell = tgt
    frag = f"#{cell}" if cell else ""
    if repo: return f"{repo}/blob/{branch}/{nb}{frag}"
    return Path(os.path.relpath(ROOT/nb, page_dir)).as_posix() + frag

# ---------------------------------------------------------------- page shell

def sidebar(entries: list[tuple[str, str, str]], current: str, up: str, notes: dict[str, str] | None = None) -> str:
    "entries: (section, href, title); `notes`: one sentence under a section's heading (what that group holds)."
    side = [f"<h2><a href='{up}index.html'>personalwab</a></h2>",
            f"<form class='search' action='{up}{SEARCH_PAGE}' method='get' role='search'><input type='search' name='q' placeholder='Search…' aria-label='Search the docs'></form>"]
    last = None
    for sec, h, t in entries:
        if sec != last and sec != "Home":
            side.append(f"<h3>{html.escape(sec)}</h3>")
            if notes and sec in notes: side.append(f"<p class='group'>{inline_md(notes[sec])}</p>")
        last = sec
        cls = " class='active'" if h == current else ""
        side.append(f"<a{cls} href='{up}{h}'>{html.escape(t)}</a>")
    return "".join(side)

def shell(title: str, description: str | None, body: str, side: str, up: str, toc: list[tuple[int, str, str]] = (),
          prev: tuple[str, str] | None = None, nxt: tuple[str, str] | None = None, scripts: str = "") -> str:
    head = f"<h1 class='title'>{html.escape(title)}</h1>" + (f"<p class='description'>{inline_md(description)}</p>" if description else "")
    toc_html = ""
    if toc:
        items = "".join(f"<li class='l{lvl}'><a href='#{html.escape(i)}'>{html.escape(t)}</a></li>" for lvl, i, t in toc)
        toc_html = f"<nav id='toc' aria-label='On this page'><h2>On this page</h2><ul>{items}</ul></nav>"
    pager = ""
    if prev or nxt:
        p = f"<a class='prev' href='{up}{prev[0]}'><small>Previous</small>« {html.escape(prev[1])}</a>" if prev else ""
        n = f"<a class='next' href='{up}{nxt[0]}'><small>Next</small>{html.escape(nxt[1])} »</a>" if nxt else ""
        pager = f"<nav class='pager'>{p}{n}</nav>"
    return (f"<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'><title>{html.escape(title)} – personalwab</title>"
            f"<meta name='viewport' content='width=device-width, initial-scale=1'>"
            f"<link rel='stylesheet' href='{up}site.css'></head><body>"
            f"<input type='checkbox' id='menu-toggle'><label class='menu-button' for='menu-toggle'>☰ personalwab — menu</label>"
            f"<nav id='sidebar'>{side}</nav><div class='layout'><main>{head}{body}{pager}</main>{toc_html}</div>{scripts}</body></html>")

def polish(body: str, page_dir: Path, repo: str | None, branch: str, row_links: dict[str, str] | None = None
           ) -> tuple[str, list[tuple[int, str, str]], list[tuple[str, str, str]]]:
    """Quarto-style heading ids (and the in-page links to them), tables in a scrolling wrapper, working source links,
    and table rows whose header names a method linked to that method's run (`row_links`: header text -> href).
    Returns the HTML, the table of contents (level, id, text) and search sections (id, heading, text)."""
    soup = BeautifulSoup(body, "html.parser")
    for a in soup.select("a.anchor-link"): a.decompose()
    renamed, seen, toc = {}, set(), []
    for h in soup.find_all(re.compile(r"^h[1-6]$")):
        text = h.get_text(" ", strip=True)
        new = base = slug(text); k = 1
        while new in seen: new = f"{base}-{k}"; k += 1
        seen.add(new)
        if h.get("id"): renamed[h["id"]] = new
        h["id"] = new
        if h.name in ("h2", "h3"): toc.append((int(h.name[1]), new, text))
    for a in soup.find_all("a", href=True):
        u = a["href"]
        if u.startswith("#") and u[1:] in renamed: a["href"] = "#" + renamed[u[1:]]
        elif a.get_text(strip=True) == "source" and SOURCE_RE.match(u):
            a["href"] = source_link(u, page_dir, repo, branch); a["class"] = "source"
            if a.has_attr("target") and not repo: del a["target"]
    for th in soup.select("table tbody tr > th:first-child"):
        if row_links and (u := row_links.get(th.get_text(strip=True))) and not th.find("a"):
            a = soup.new_tag("a", href=u, attrs={"class": "run-link", "title": "open this run's trajectories"})
            a.extend(list(th.contents)); th.append(a)
    for t in soup.find_all("table"):
        if t.parent.name != "div" or "table-wrap" not in (t.parent.get("class") or []):
            t.wrap(soup.new_tag("div", attrs={"class": "table-wrap"}))
    # search sections: the text between consecutive h2/h3 headings
    sections, cur_id, cur_h, buf = [], "", "", []
    for el in soup.find_all(string=True):
        par = el.parent
        if par.name in ("h2", "h3"):
            if buf: sections.append((cur_id, cur_h, " ".join(buf)))
            cur_id, cur_h, buf = par["id"], par.get_text(" ", strip=True), []
        elif par.name not in ("style", "script"):
            s = el.strip()
            if s: buf.append(s)
    if buf: sections.append((cur_id, cur_h, " ".join(buf)))
    return str(soup), toc, sections

# ---------------------------------------------------------------- the site

RUN_LINE = re.compile(r"^\s*([\w.+-]+): ([\w.+=-]+-(?:single|multi)-[0-9a-f]{8})\s+ran", re.M)

def runs_used(nb) -> dict[str, str]:
    "{method key: run name} from the lines `experiments.run_all` prints for each run it used."
    found = {}
    for c in nb.cells:
        for o in c.get("outputs", []):
            if o.get("output_type") == "stream": found |= dict(RUN_LINE.findall(o.get("text", "")))
    return found

def method_labels() -> dict[str, str]:
    try: from personalwab.reproduce.paper import METHOD_LABELS; return dict(METHOD_LABELS)
    except Exception: return {}

def inline_md(text: str) -> str:
    "A description's inline Markdown (code, bold, emphasis) as HTML."
    t = html.escape(text, quote=False)
    t = re.sub(r"`([^`]+)`", r"<code>\1</code>", t)
    t = re.sub(r"\*\*([^*]+)\*\*", r"<strong>\1</strong>", t)
    return re.sub(r"(?<![\w*])\*([^*\s][^*]*)\*(?![\w*])", r"<em>\1</em>", t)

def render(proc: Path, out: Path, runs: Path | None = None, include_all: bool = False) -> list[Path]:
    cfg = settings()
    repo, branch, site_url = repo_url(cfg), cfg.get("branch", "main"), doc_url(cfg)
    exporter = HTMLExporter(template_name="basic")
    info = []
    for sec, nb in pages(proc):
        n = nbformat.read(nb, as_version=4); fm = front_matter(n)
        info.append((sec, nb, n, fm, href(proc, nb, fm), fm.get("title", nb.stem)))
    used = {h: runs_used(n) for _, _, n, _, h, _ in info}
    names = sorted({r for m in used.values() for r in m.values()} | (set(all_runs(runs)) if runs and include_all else set()))
    extra = trajectory_pages(runs, names) if runs else []
    have = {h.removeprefix("runs/").removesuffix(".html") for h, *_ in extra if h.count("/") == 1}
    labels = method_labels()
    notes = dict(groups())
    entries = [(sec, h, t) for sec, _, _, _, h, t in info] + [("Runs", h, t) for h, t, *_ in extra if h.count("/") == 1]
    entries.insert(1, ("Home", *ARCHITECTURE))                 # right after the home page
    order = [(h, t) for _, h, t in entries]
    out.mkdir(parents=True, exist_ok=True)
    (out/"site.css").write_text(CSS + HtmlFormatter(style="default").get_style_defs(".highlight"), encoding="utf-8")
    written, index = [], []

    def emit(page: str, title: str, desc: str | None, body: str, pos: int | None):
        up = "../" * page.count("/")
        dest = out/page; dest.parent.mkdir(parents=True, exist_ok=True)
        links = {}
        for key, run in used.get(page, {}).items():
            if run in have:
                links[key] = links[labels.get(key, key)] = f"{up}runs/{run}.html"
        body, toc, sections = polish(body, dest.parent.resolve(), repo, branch, links)
        prev = order[pos-1] if pos else None
        nxt = order[pos+1] if pos is not None and pos+1 < len(order) else None
        dest.write_text(shell(title, desc, body, sidebar(entries, page, up, notes), up, toc, prev, nxt), encoding="utf-8")
        for sid, h, text in sections:
            index.append({"t": title, "h": h or title, "u": page + (f"#{sid}" if sid else ""), "x": text[:5000]})
        written.append(dest)

    nb_pages = {nb.resolve(): page for _, nb, _, _, page, _ in info}
    for sec, nb, n, fm, page, title in info:
        up = "../" * page.count("/")
        n.cells = [c for c in n.cells if not (c.cell_type == "raw" and c.source.lstrip().startswith("---"))]
        apply_directives(n)
        for c in n.cells:
            if c.cell_type == "markdown": c.source = notebook_links(fix_links(c.source, up, site_url), nb.parent, page, nb_pages)
            for o in c.get("outputs", []):
                d = o.get("data", {})
                for k in ("text/markdown", "text/html"):
                    if k in d: d[k] = fix_links(d[k], up, site_url)
        body, _ = exporter.from_notebook_node(n)
        emit(page, title, fm.get("description"), body, order.index((page, title)))
    for page, title, desc, body in extra:
        emit(page, title, desc, body, order.index((page, title)) if (page, title) in order else None)
    import architecture as arch                     # the architecture page, drawn from the code at every build
    arch.draw(arch.layer_imports(), out/"architecture.svg")
    emit(ARCHITECTURE[0], ARCHITECTURE[1], "The layers of the package, what each holds, and the imports between them, from the code.",
         arch.page_html("architecture.svg"), order.index(ARCHITECTURE))
    # search: the page and its prebuilt index (a script, so that it loads from file:// too)
    (out/"search.js").write_text("window.SEARCH_INDEX=" + json.dumps(index, ensure_ascii=False) + ";\n", encoding="utf-8")
    form = (f"<form class='search' action='{SEARCH_PAGE}' method='get'><input id='search-page-box' type='search' name='q' "
            "placeholder='Search the docs' aria-label='Search the docs'></form><p id='count'></p><ol id='results'></ol>")
    (out/SEARCH_PAGE).write_text(shell("Search", None, form, sidebar(entries, SEARCH_PAGE, "", notes), "",
                                         scripts=f"<script src='search.js'></script><script>{SEARCH_JS}</script>"), encoding="utf-8")
    written.append(out/SEARCH_PAGE)
    fix_fragments(out, written)
    return written

def fix_fragments(out: Path, files: list[Path]) -> None:
    """Point links at anchors that do not exist (nbdev links every method, `#genconfig.release`, though only
    some methods get their own section) at the nearest one that does (the class, `#genconfig`), or at the page."""
    ids = {f.resolve(): {m for m in re.findall(r'\sid="([^"]+)"', f.read_text(encoding="utf-8"))} for f in files}
    for f in files:
        text = f.read_text(encoding="utf-8")
        def fix(m):
            path, frag = m.group(2), m.group(3)
            target = (f.parent/path).resolve() if path else f.resolve()
            have = ids.get(target)
            if have is None or frag in have: return m.group(0)
            while "." in frag and frag not in have: frag = frag.rsplit(".", 1)[0]
            return f'{m.group(1)}{path}{"#" + frag if frag in have else ""}"'
        new = re.sub(r'(href=")([^"#:]*\.html|)#([^"]+)"', fix, text)
        if new != text: f.write_text(new, encoding="utf-8")

def all_runs(runs: Path) -> list[str]:
    return sorted(p.parent.name for p in runs.glob("*/results.jsonl"))

def trajectory_pages(runs: Path, names: list[str]) -> list[tuple[str, str, str | None, str]]:
    "(href, title, description, body HTML) for each named run found under `runs`, and each of its tasks."
    from personalwab.reproduce.trajectory import site_pages
    return site_pages(runs, names)

# ---------------------------------------------------------------- processing (nbdev) in a scratch copy

def process(work: Path) -> Path:
    """Run nbdev's notebook processing on a copy of nbs/ under `work` and return the processed folder.
    Calls nbdev's `proc_nbs` directly: `nbdev_proc_nbs` would try to install Quarto (with sudo) and the package
    (with whatever pip is on PATH), and rewrite nbs/sidebar.yml, nbs/nbdev.yml and the module index."""
    for p in ["nbs"]: shutil.copytree(ROOT/p, work/p, ignore=shutil.ignore_patterns(".ipynb_checkpoints", "__pycache__"))
    shutil.copy(ROOT/"settings.ini", work/"settings.ini")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]).rstrip(os.pathsep),
           "TQDM_DISABLE": "1", "PYTHONWARNINGS": "ignore", "PERSONALWAB_RUNS": str(work/"runs")}
    code = "from nbdev.serve import proc_nbs; proc_nbs(force=True, n_workers=int(__import__('os').environ.get('DOCS_WORKERS', '2')))"
    r = subprocess.run([sys.executable, "-c", code], cwd=work, env=env, stdin=subprocess.DEVNULL, capture_output=True, text=True)
    if r.returncode: raise SystemExit(f"build_docs: processing the notebooks failed:\n{r.stderr[-3000:]}")
    return work/"_proc"

def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default=str(ROOT/"_docs"))
    ap.add_argument("--proc", help="reuse this already processed folder (a previous build's `--keep`) instead of processing nbs/")
    ap.add_argument("--keep", help="keep the processed notebooks in this folder (for a faster re-render with --proc)")
    ap.add_argument("--runs", default=None, help="run folders the paper notebooks used (default: config.runs_dir())")
    ap.add_argument("--all-runs", action="store_true", help="also give pages to runs under --runs that no notebook used")
    ap.add_argument("--results", default=str(ROOT/"results"), help="published runs (default results/): every one gets its pages, "
                    "restored into a scratch runs folder, unless --runs is given")
    args = ap.parse_args(argv)
    out = Path(args.out)
    if shutil.which("quarto") and not args.proc:
        subprocess.run([str(BIN/"nbdev_docs")], cwd=ROOT, check=True); return
    runs = Path(args.runs) if args.runs else None
    with tempfile.TemporaryDirectory(prefix="pwab-docs-") as tmp:
        if runs is None and (Path(args.results)/"runs").is_dir():   # the published episodes: a page per run and per task
            from personalwab.evidence.runs import restore_all
            runs = Path(tmp)/"published-runs"; restore_all(args.results, runs); args.all_runs = True
        if runs is None:
            try:
                from personalwab.core.config import runs_dir; runs = runs_dir()
            except Exception: runs = None
        proc = Path(args.proc) if args.proc else process(Path(tmp))
        if args.keep and not args.proc:
            if Path(args.keep).exists(): shutil.rmtree(args.keep)
            shutil.copytree(proc, args.keep)
        if out.exists(): shutil.rmtree(out)
        files = render(proc, out, runs if runs and runs.exists() else None, args.all_runs)
    print(f"docs: {len(files)} pages in {out}/ (open {out/'index.html'})")

if __name__ == "__main__": main()
