"""A person plays the shop in real Chromium, as a person would: `personalwab shop --record` started from the command line,
the pages clicked and typed on through Playwright (no driver of the project, no environment action), the end page read,
the shop stopped with Ctrl-C; then the recorded run is graded again to exactly the scores the end page showed and
`personalwab view` shows its tasks. A search and a review of the default benchmark's test split: one run of two tasks.
Skipped only where no Chromium is installed."""
import json, os, queue, signal, socket, subprocess, sys, threading
from pathlib import Path
import pytest
from personalwab.web.drivers import CHROMIUM_FLAGS, chromium_path

pytestmark = [pytest.mark.browser, pytest.mark.xdist_group("web_chromium"),
              pytest.mark.skipif(chromium_path() is None, reason="no Chromium installed (Debian: apt-get install chromium)")]

BIN = Path(sys.executable).parent/"personalwab"
ENV = os.environ | {"PYTHONWARNINGS": "ignore", "COLUMNS": "200"}

def free_port() -> int:
    with socket.socket() as s: s.bind(("127.0.0.1", 0)); return s.getsockname()[1]

def cli(*args) -> subprocess.CompletedProcess:
    return subprocess.run([str(BIN), *args], capture_output=True, text=True, timeout=600, env=ENV)

class Shop:
    "`personalwab shop --record` in a process of its own, as a person starts it; `url` is the address it prints."
    def __init__(self, task: str, out: Path):
        self.port, self.lines = free_port(), queue.Queue()
        self.p = subprocess.Popen([str(BIN), "shop", "--record", "--task", task, "--engine", "bm25s", "--port", str(self.port),
                                   "--out-dir", str(out)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=ENV)
        threading.Thread(target=lambda: [self.lines.put(l) for l in self.p.stdout], daemon=True).start()
        self.out = [self.lines.get(timeout=300)]
        assert f"http://127.0.0.1:{self.port}/" in self.out[0], self.out

    @property
    def url(self) -> str: return f"http://127.0.0.1:{self.port}/"

    def stop(self) -> str:
        "Ctrl-C: the shop stops; what it printed."
        self.p.send_signal(signal.SIGINT)
        assert self.p.wait(timeout=60) == 0, self.p.stderr.read()
        while not self.lines.empty(): self.out.append(self.lines.get())
        return "".join(self.out)

@pytest.fixture(scope="module")
def browser(tmp_path_factory):
    from playwright.sync_api import sync_playwright
    with sync_playwright() as pw:
        ctx = pw.chromium.launch_persistent_context(str(tmp_path_factory.mktemp("profile")), executable_path=chromium_path(),
                                                    headless=True, args=list(CHROMIUM_FLAGS))
        try: yield ctx
        finally: ctx.close()

def shown(page) -> list[float]:
    "The scores the end page shows: their exact values, and the same rounded as the person reads them."
    vals = [float(page.locator(f"#{i}").get_attribute("value")) for i in ("function-accuracy", "result-accuracy")]
    assert [page.locator(f"#{i}").inner_text() for i in ("function-accuracy", "result-accuracy")] == [f"{v:.3f}" for v in vals]
    return vals

def test_a_person_plays_a_search_and_a_review_into_one_run(browser, tmp_path):
    from personalwab.run.config import load_data
    b = load_data("default", progress=False)
    search, review = b.task("test-00000"), b.task("test-00001")
    page = browser.new_page()

    shop = Shop(search.id, tmp_path)                      # a search: typed in the box, Enter
    page.goto(shop.url)
    assert search.task in page.locator("aside").inner_text()
    page.get_by_label("Search products").click()
    page.keyboard.type("power bank 26800mAh")
    with page.expect_navigation(): page.keyboard.press("Enter")
    assert page.url == shop.url + "end" and page.get_by_role("heading", name="The task is over").is_visible()
    s_scores = shown(page)
    assert page.locator("#target-product").inner_text() == search.target.product_info.title
    assert "the target was number 6 of the 10 products returned" in page.locator("main").inner_text()
    printed = shop.stop()
    d = tmp_path/next(p.name for p in tmp_path.iterdir())
    assert f"recorded in {d}" in printed

    shop = Shop(review.id, tmp_path)                      # a review of the same split: the same run
    page.goto(shop.url)
    page.locator("aside").get_by_role("link", name=review.target.product_info.title).click()
    page.get_by_label("Rating").select_option("3")
    page.get_by_label("Your review").click()
    page.keyboard.type("Just okay protein bars.\nGood after a workout, my husband likes them too.")
    with page.expect_navigation(): page.get_by_role("button", name="Submit review").click()
    assert page.url == shop.url + "end"
    r_scores = shown(page)
    assert page.locator("#real-review").inner_text() == review.target.review.text
    shop.stop()

    again = cli("shop", "--record", "--task", search.id, "--engine", "bm25s", "--port", str(free_port()), "--out-dir", str(tmp_path))
    assert again.returncode == 0 and f"task {search.id} is already recorded in {d}" in again.stdout, again.stderr

    assert [p.name for p in tmp_path.iterdir()] == [d.name] and d.name.startswith("human-single-")
    cfg = json.loads((d/"config.json").read_text())["config"]
    assert (cfg["method"], cfg["track"], cfg["split"], cfg["data"], cfg["task_ids"], cfg["env_params"]["interface"]) == \
        ("human", "single", "test", "default", [search.id, review.id], "web")
    recs = {r["task_id"]: r for r in map(json.loads, (d/"results.jsonl").read_text().splitlines())}
    assert [recs[t.id]["page_steps"][-1]["calls"][0]["name"] for t in (search, review)] == ["search_product_by_query", "add_product_review"]
    assert recs[review.id]["actions"][0]["arguments"]["review"] == "Just okay protein bars.\nGood after a workout, my husband likes them too."
    assert [[recs[t.id]["function_acc"], recs[t.id]["result_acc"]] for t in (search, review)] == [s_scores, r_scores]
    assert s_scores == [1.0, 0.5] and r_scores[0] == 1.0 and 0 < r_scores[1] < 1

    rs = cli("score", str(d), "--rescore")                # graded again: exactly what the end pages showed
    assert rs.returncode == 0 and "0 record(s) changed" in rs.stdout, rs.stdout + rs.stderr
    graded = {r["task_id"]: r for r in map(json.loads, next(d.glob("results.protocol-*.jsonl")).read_text().splitlines())}
    assert [[graded[t.id]["function_acc"], graded[t.id]["result_acc"]] for t in (search, review)] == [s_scores, r_scores]
    summary = json.loads(next(d.glob("summary.protocol-*.json")).read_text())
    assert (summary["finished"], summary["complete"], summary["scores"]["search"]["result_acc"], summary["scores"]["review"]["result_acc"]) == \
        (2, True, s_scores[1], r_scores[1])

    v = cli("view", str(d), "--task", search.id)
    assert v.returncode == 0 and f"task {search.id}  (search, single-turn)  status ok" in v.stdout, v.stderr
    assert 'submit(/search)  -> search_product_by_query(query="power bank 26800mAh")' in v.stdout
    assert "function accuracy 1.000, result accuracy 0.500" in v.stdout
    v = cli("view", str(d))
    assert v.returncode == 0 and d.name in v.stdout and "human" in v.stdout, v.stderr
