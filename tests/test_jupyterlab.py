"""`make lab` as a reader uses it, in a real headless Chromium: JupyterLab opens a library notebook and a paper notebook,
runs their first cells and a cell a reader types below them, whose output is read from the page; then the server is shut
down and no process of it is left. It serves copies of the notebooks (in a temporary folder laid out like the checkout),
and its home, config, data and runtime folders are temporary too: nothing is written in the checkout."""
import os, re, shutil, signal, socket, subprocess, sys, time, urllib.request
from contextlib import contextmanager
from pathlib import Path
import psutil, pytest
from personalwab.web.drivers import CHROMIUM_FLAGS, chromium_path

ROOT = Path(__file__).resolve().parents[1]
pytestmark = [pytest.mark.browser, pytest.mark.xdist_group("jupyterlab"),
              pytest.mark.skipif(chromium_path() is None, reason="no Chromium installed (Debian: apt-get install chromium)")]

def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0)); return s.getsockname()[1]

def cmdline(p: psutil.Process) -> list[str]:
    try: return p.cmdline()
    except psutil.Error: return []

def alive(p: psutil.Process) -> bool:
    try: return p.is_running() and p.status() != psutil.STATUS_ZOMBIE
    except psutil.Error: return False

def jupyter_files() -> list[Path]:
    "What JupyterLab writes beside the notebooks it serves: checkpoints, the LSP's virtual documents."
    return sorted(p for p in (ROOT/"nbs").rglob("*") if p.name in (".ipynb_checkpoints", ".virtual_documents"))

def wait_for(check, what: str, log: Path, proc=None, seconds: float = 120):
    "Poll `check()` until it gives a value (a bound on waiting, not a timing assertion); fail with `make lab`'s output."
    end = time.monotonic() + seconds
    while not (v := check()):
        assert (proc is None or proc.poll() is None) and time.monotonic() < end, f"{what}: not seen; make lab said:\n{log.read_text()[-3000:]}"
        time.sleep(0.2)
    return v

@contextmanager
def make_lab(tmp_path: Path):
    """`make lab` on copies of nbs/ (and of settings.ini: the notebooks' own repo_root()), with temporary home, Jupyter and
    IPython folders; yields (base URL, token, log, processes seen). Leaving it shuts the server down by its API."""
    work, home = tmp_path/"checkout", tmp_path/"home"
    shutil.copytree(ROOT/"nbs", work/"nbs", ignore=shutil.ignore_patterns(".ipynb_checkpoints", "__pycache__"))
    shutil.copy(ROOT/"settings.ini", work/"settings.ini")
    env = {k: v for k, v in os.environ.items() if k not in ("MAKEFLAGS", "MFLAGS", "MAKELEVEL")}
    env |= {"HOME": str(home), "JUPYTER_CONFIG_DIR": str(home/"config"), "JUPYTER_DATA_DIR": str(home/"data"),
            "JUPYTER_RUNTIME_DIR": str(home/"runtime"), "IPYTHONDIR": str(home/"ipython"), "MPLCONFIGDIR": str(home/"mpl"),
            "PYTHONPATH": os.pathsep.join([str(ROOT), *filter(None, [os.environ.get("PYTHONPATH")])])}  # the checkout under test
    port, log = free_port(), tmp_path/"lab.log"
    stamp = f"{sys.prefix}/.installed"   # this venv is installed already: make lab only starts the lab
    with log.open("w") as out:
        proc = subprocess.Popen(["make", "-s", "-o", stamp, "lab", f"VENV={sys.prefix}", f"LAB_DIR={work/'nbs'}", f"LAB_PORT={port}"],
                                cwd=ROOT, env=env, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, start_new_session=True)
    me = psutil.Process(proc.pid); seen = {me: cmdline(me)}   # every process of the lab, with its command line
    def note():
        for c in me.children(recursive=True): seen.setdefault(c, cmdline(c))
    try:
        url = wait_for(lambda: re.search(r"http://127\.0\.0\.1:(\d+)/lab\?token=(\w+)", log.read_text()), "the URL with its token", log, proc)
        assert url.group(1) == str(port), url.group(0)
        yield f"http://127.0.0.1:{port}", url.group(2), log, seen
        note()
        urllib.request.urlopen(urllib.request.Request(f"http://127.0.0.1:{port}/api/shutdown", method="POST",
                                                      headers={"Authorization": f"token {url.group(2)}"}), timeout=30)
        assert proc.wait(timeout=60) == 0, log.read_text()[-3000:]
    finally:
        if proc.poll() is None:   # only where the test failed: kill what is left
            note(); os.killpg(proc.pid, signal.SIGKILL)
        for p in seen:
            if alive(p): p.kill()

def run_in_lab(page, base, token, nb: str, n_cells: int, code: str, marker: str) -> str:
    "Open `nb`, run its first `n_cells` cells (Shift+Enter each), type `code` in a new cell below them, run it: its output."
    page.goto(f"{base}/lab/tree/{nb}?reset&token={token}")          # reset: only this notebook open
    panel = page.locator(".jp-NotebookPanel:not(.lm-mod-hidden)")
    panel.locator(".jp-NotebookPanel-toolbar").get_by_text("Python 3 (ipykernel)").wait_for()   # its kernel has started
    panel.locator(".jp-Notebook-ExecutionIndicator[data-status='idle']").wait_for()
    panel.locator(".jp-Cell").first.locator(".jp-InputPrompt").click()              # the first cell, command mode
    for _ in range(n_cells): page.keyboard.press("Shift+Enter")
    page.keyboard.press("Escape"); page.keyboard.press("a"); page.keyboard.press("Enter")   # a new cell above the next one
    page.keyboard.type(code); page.keyboard.press("Shift+Enter")
    out = panel.locator(".jp-OutputArea-output[data-mime-type='application/vnd.jupyter.stdout']", has_text=marker)
    try: out.wait_for()
    except Exception:
        texts = panel.locator(".jp-OutputArea-output").all_inner_texts()
        raise AssertionError(f"{nb}: no output with {marker!r}; the outputs shown: {texts}")
    return out.inner_text().strip()

@pytest.mark.timeout(600)
def test_make_lab_runs_a_library_and_a_paper_notebook_in_chromium(tmp_path):
    from playwright.sync_api import sync_playwright
    from personalwab.data.schema import TASK_TYPES
    def git_status(): return subprocess.run(["git", "status", "--porcelain"], cwd=ROOT, capture_output=True, text=True).stdout
    before = git_status(), jupyter_files()
    with make_lab(tmp_path) as (base, token, log, seen), sync_playwright() as pw:
        assert re.search(r"JupyterLab on .*kernel python3 = ", log.read_text()), log.read_text()[:500]
        browser = pw.chromium.launch(executable_path=chromium_path(), headless=True, args=list(CHROMIUM_FLAGS))
        try:
            page = browser.new_page(viewport={"width": 1280, "height": 900})
            page.set_default_timeout(60_000)
            # the library notebook: its imports, repo_root, DEFAULT_LLM and `root = repo_root()` (cells 0-8), then a reader's cell
            got = run_in_lab(page, base, token, "core/00_config.ipynb", 9,
                             'import sys; print("kernel:", sys.prefix, "|", DEFAULT_LLM, (root/"nbs").is_dir())', "kernel:")
            assert got == f"kernel: {sys.prefix} | smollm2 True", got          # the project's venv is the kernel
            # a paper notebook: its parameters (papermill's, then the injected ones) and imports (cells 0-4), then a reader's cell
            got = run_in_lab(page, base, token, "paper/table2_fig3_fig4_statistics.ipynb", 5,
                             'import sys; print("paper:", sys.prefix, "|", data, smoke, table2.__module__, TASK_TYPES)', "paper:")
            assert got == f"paper: {sys.prefix} | default False personalwab.data.stats {TASK_TYPES}", got
        finally:
            browser.close()
    # shut down: the server, its kernels and the make that started it are gone, and the checkout is as it was
    wait_for(lambda: not [p for p in seen if alive(p)], "every lab process gone", log, seconds=30)
    kernels = [p for p, cmd in seen.items() if "ipykernel_launcher" in cmd]
    assert len(kernels) == 2, list(seen.values())   # one per notebook, both stopped with the server
    assert (git_status(), jupyter_files()) == before
