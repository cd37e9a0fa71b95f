"""Benchmark: the web track's observation sizes and per-step environment time, and the library choices.

1. Observation sizes (SmolLM2 tokens) on the default benchmark's pages, for every --every-th test task:
   home, search results (the instruction as the query), your orders, the target's product page and
   recommendation results (the user's last 30 orders): the page as served, the page as served with a
   `node` id on every element (what pruning starts from), after pruning, and after the --budget cut.
2. Per-step environment time of the in-process driver: gold trajectories of the test tasks replayed in
   `ShopEnv` (parse + check + act + serve + next observation), with the time spent inside the models
   (BM25, SASRec, MiniLM: the function track's cost, measured separately) subtracted. Target: median <= 20 ms.
3. The same for real Chromium (Playwright, Debian's chromium) on --chromium-tasks tasks.
4. HTML parsers on a results page: lxml vs BeautifulSoup (html.parser, lxml backend), parse + number.
5. Browser automation, offline: Playwright (the project's choice) vs Selenium + chromedriver (only if
   --selenium points at a folder holding selenium, which needs a newer certifi than the project pins).

Usage:
    .venv/bin/python benchmarks/bench_web.py [--every 5] [--limit N] [--chromium-tasks 6] [--selenium /tmp/selenium_try]
"""
from __future__ import annotations
import argparse, statistics, sys, tempfile, time
from collections import defaultdict

from bench_env import Timed          # the model-time proxy of the function track's benchmark (benchmarks/ is on the path)


def med(xs): return statistics.median(xs) if xs else float("nan")


def sizes(b, res, every, budget):
    from personalwab.env.environment import make_env
    from personalwab.web.env import ShopEnv
    from personalwab.web.gold import SEARCH_BOX
    from personalwab.web.observation import number_nodes, parse_page, smollm2_tokens
    from lxml import html as lhtml
    se = ShopEnv(make_env(b, "single", resources=res), budget=budget, measure_raw=True)
    rows = defaultdict(list)
    def measure(kind):
        o = se.observe()
        numbered = lhtml.tostring(number_nodes(parse_page(se.driver.raw)), encoding="unicode")
        rows[kind].append((o.raw_tokens, smollm2_tokens(numbered), o.pruned_tokens, o.tokens))
    for task in b.split("test")[::every]:
        se.reset(task); measure("home")
        for path, kind in [("/orders", "orders"), (f"/product/{task.target_asin}", "product")]:
            se.driver.open(path); measure(kind)
        se.driver.open("/orders")
        for box in se.driver.tree().xpath('//input[@name="asin"]')[-30:]: box.set("checked", "")
        se.driver.click(se.driver.tree().xpath('//form[@action="/recommend"]//button')[0]); measure("recommendations")
        se.reset(task)
        se.step(f"type({se.driver.tree().xpath(SEARCH_BOX)[0].get('node')}, {task.task!r}, submit=True)"); measure("search results")
    print(f"\n1. Observation sizes, SmolLM2 tokens, median [max], {len(rows['home'])} tasks (every {every}th test task), budget {budget}")
    print(f"{'page':<16}{'as served':>18}{'+ node ids':>18}{'pruned':>18}{'given':>18}{'pruned/numbered':>17}")
    for k, v in rows.items():
        cols = [f"{med([r[i] for r in v]):>8.0f} [{max(r[i] for r in v):>6}]" for i in range(4)]
        ratio = med([r[2] / r[1] for r in v])
        print(f"{k:<16}" + "".join(f"{c:>18}" for c in cols) + f"{ratio:>17.2f}")


def step_times(b, res, tasks, driver, label):
    from personalwab.env.environment import make_env
    from personalwab.web.env import ShopEnv
    from personalwab.web.gold import gold_trajectory
    clock = {}
    env = make_env(b, "single", searcher=Timed(res.searcher("pyserini"), clock, "s"), recommender=Timed(res.recommender(), clock, "s"),
                   review_scorer=Timed(res.review_scorer(), clock, "s"))
    per_kind, resets = defaultdict(list), []
    with ShopEnv(env, driver=driver) as se:
        for task in tasks:
            t = time.perf_counter(); se.reset(task); resets.append(time.perf_counter() - t)
            for g in gold_trajectory(b, task):
                before = clock.get("s", 0.0)
                _, done, st = se.step(g.on(se.driver.tree()))
                kind = "function call" if st.calls else ("navigation" if st.url != se.driver.url else "same page")
                per_kind[kind].append(st.env_s - (clock.get("s", 0.0) - before))
                if done: break
    allv = [x for v in per_kind.values() for x in v]
    print(f"\n{label}: {len(tasks)} tasks, {len(allv)} steps; environment ms per step (models excluded): median {1000 * med(allv):.1f}, "
          f"p90 {1000 * sorted(allv)[int(0.9 * len(allv))]:.1f}; reset median {1000 * med(resets):.1f}")
    for k, v in per_kind.items(): print(f"   {k:<14} n={len(v):<5} median {1000 * med(v):6.1f} ms")


def parsers(b, res):
    from personalwab.env.environment import make_env
    from personalwab.web.site import ShopSession, shop_app
    from personalwab.web.drivers import InProcessDriver
    from personalwab.web.observation import number_nodes, parse_page
    s = ShopSession(make_env(b, "single", resources=res)); task = b.split("test")[0]; s.reset(task)
    d = InProcessDriver(shop_app(s)); d.open("/orders"); page = d.raw
    from bs4 import BeautifulSoup
    def bs(features):
        def f():
            soup = BeautifulSoup(page, features)
            for i, t in enumerate(soup.find_all(True)): t["node"] = str(i)
        return f
    cands = {"lxml": lambda: number_nodes(parse_page(page)), "bs4 html.parser": bs("html.parser"), "bs4 lxml": bs("lxml")}
    print(f"\n4. Parse + number the orders page ({len(page):,} characters), median of 30 runs")
    for name, f in cands.items():
        ts = []
        for _ in range(30): t = time.perf_counter(); f(); ts.append(time.perf_counter() - t)
        print(f"   {name:<16} {1000 * med(ts):6.2f} ms")


def browsers(b, res, selenium_dir):
    from personalwab.env.environment import make_env
    from personalwab.web.site import ShopSession, shop_app
    from personalwab.web.drivers import CHROMIUM_FLAGS, ShopServer, chromium_path
    s = ShopSession(make_env(b, "single", resources=res)); s.reset(b.split("test")[0])
    print("\n5. Browser automation with Debian's chromium, offline: launch, then 20 x (open /orders, fill the chat box, read the DOM)")
    with ShopServer(shop_app(s)) as srv:
        from playwright.sync_api import sync_playwright
        t = time.perf_counter()
        with sync_playwright() as p, tempfile.TemporaryDirectory() as prof:
            ctx = p.chromium.launch_persistent_context(prof, executable_path=chromium_path(), headless=True, args=list(CHROMIUM_FLAGS))
            page = ctx.pages[0]; launch = time.perf_counter() - t; ts = []
            for _ in range(20):
                t = time.perf_counter(); page.goto(srv.url + "/orders"); page.fill('textarea[name="message"]', "hello"); page.content(); ts.append(time.perf_counter() - t)
            ctx.close()
        print(f"   playwright  works offline: yes; launch {launch:.2f} s; per round median {1000 * med(ts):.1f} ms")
        if not selenium_dir: print("   selenium    not measured (pass --selenium DIR)"); return
        sys.path.insert(0, selenium_dir)
        try:
            from selenium import webdriver
            from selenium.webdriver.chrome.service import Service
            from selenium.webdriver.common.by import By
            o = webdriver.ChromeOptions(); o.binary_location = chromium_path()
            prof = tempfile.TemporaryDirectory()
            for f in (*CHROMIUM_FLAGS, f"--user-data-dir={prof.name}"): o.add_argument(f)
            t = time.perf_counter()
            drv = webdriver.Chrome(options=o, service=Service("/usr/bin/chromedriver")); launch = time.perf_counter() - t; ts = []
            for _ in range(20):
                t = time.perf_counter(); drv.get(srv.url + "/orders"); el = drv.find_element(By.CSS_SELECTOR, 'textarea[name="message"]'); el.clear(); el.send_keys("hello"); drv.page_source; ts.append(time.perf_counter() - t)
            drv.quit(); prof.cleanup()
            print(f"   selenium    works offline: yes (chromedriver); launch {launch:.2f} s; per round median {1000 * med(ts):.1f} ms")
        except Exception as e: print(f"   selenium    failed: {type(e).__name__}: {str(e)[:200]}")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--every", type=int, default=5, help="sizes: every N-th test task")
    ap.add_argument("--limit", type=int, default=None, help="step times: the first N test tasks (default all)")
    ap.add_argument("--budget", type=int, default=None, help="DOM token budget (default: the module's)")
    ap.add_argument("--chromium-tasks", type=int, default=6)
    ap.add_argument("--selenium", default=None, help="a folder holding the selenium package (pip install --target DIR selenium)")
    ap.add_argument("--skip", default="", help="comma-separated parts to skip: sizes,inprocess,chromium,parsers,browsers")
    args = ap.parse_args(argv)
    from personalwab.core.config import offline; offline()
    from personalwab.data.load import load_benchmark
    from personalwab.env.resources import Resources
    from personalwab.web.observation import DOM_BUDGET
    from personalwab.web.drivers import chromium_path
    b = load_benchmark(progress=False); res = Resources(b); skip = set(args.skip.split(","))
    tasks = b.split("test")[:args.limit]
    if "sizes" not in skip: sizes(b, res, args.every, args.budget or DOM_BUDGET)
    if "inprocess" not in skip: step_times(b, res, tasks, "inprocess", "2. In-process driver")
    if "chromium" not in skip and chromium_path():
        picked = [t for k in ("search", "recommend", "review") for t in [x for x in tasks if x.type == k][:max(1, args.chromium_tasks // 3)]]
        step_times(b, res, picked, "chromium", "3. Chromium driver (Playwright)")
    if "parsers" not in skip: parsers(b, res)
    if "browsers" not in skip and chromium_path(): browsers(b, res, args.selenium)


if __name__ == "__main__": main()
