"""Build the docs site and read it in a real headless Chromium (Debian's `chromium`)."""
import os, re, shutil, subprocess, sys, tempfile
from pathlib import Path
import pytest

ROOT = Path(__file__).resolve().parents[1]
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
         "--no-first-run", "--disable-sync", "--disable-quic", "--window-size=1280,900"]
ARTIFACTS = ROOT/"tests"/"artifacts"

@pytest.fixture(scope="module")
def site(tmp_path_factory):
    out = tmp_path_factory.mktemp("docs")/"_docs"
    r = subprocess.run([sys.executable, str(ROOT/"tools"/"build_docs.py"), "--out", str(out)], cwd=ROOT,
                       capture_output=True, text=True, stdin=subprocess.DEVNULL)
    assert r.returncode == 0, r.stdout + r.stderr
    return out

def browse(url: str, *extra: str) -> str:
    with tempfile.TemporaryDirectory() as ud:
        r = subprocess.run([CHROMIUM, *FLAGS, f"--user-data-dir={ud}", *extra, url], capture_output=True, text=True, timeout=120)
    return r.stdout

def test_site_has_every_notebook(site):
    nbs = [p for p in (ROOT/"nbs").glob("*.ipynb")]
    for nb in nbs:
        page = re.sub(r"^\d+[a-z]?_", "", nb.stem) + ".html"        # nbdev names pages without the number
        assert (site/page).exists(), f"no page {page} for {nb.name}"

@pytest.mark.browser
@pytest.mark.skipif(CHROMIUM is None, reason="Debian's chromium is not installed (make test installs it)")
def test_home_and_api_page_render_in_chromium(site):
    home = browse((site/"index.html").as_uri(), "--dump-dom")
    assert "<title>personalwab" in home and "id=\"sidebar\"" in home, home[:500]
    api = browse((site/"schema.html").as_uri(), "--dump-dom")
    assert re.search(r"<title>Schema", api), api[:300]
    assert "check_benchmark" in api and "Benchmark" in api          # show_doc rendered a documented function
    assert "schema.html" in api and "index.html" in api           # sidebar navigation
    ARTIFACTS.mkdir(exist_ok=True)
    shot = ARTIFACTS/"docs_schema.png"
    browse((site/"schema.html").as_uri(), f"--screenshot={shot}")
    assert shot.exists() and shot.stat().st_size > 10_000
