"""The Chromium driver on a slow and a failing shop, with the real browser and the real shop: an observation taken at
once after an action that navigates is of the page the navigation brings, also on a loaded machine; and the shop's
server killed mid-episode, a page that never loads, an agent of 1,000 steps each end in a record (one line naming what
failed, computed again on resume), not a traceback. Skipped only where no Chromium is installed."""
import asyncio, json, subprocess, sys, time
import psutil, pytest
from personalwab.data.load import load_benchmark
from personalwab.data.schema import tiny_benchmark
from personalwab.env.environment import make_env
from personalwab.env.resources import Resources
from personalwab.run.config import RunConfig
from personalwab.web import run as web_run
from personalwab.web.drivers import LOAD_TIMEOUT_S, chromium_path
from personalwab.web.env import ShopEnv
from personalwab.web.gold import gold_trajectory

pytestmark = [pytest.mark.browser, pytest.mark.xdist_group("web_chromium"),
              pytest.mark.skipif(chromium_path() is None, reason="no Chromium installed (Debian: apt-get install chromium)")]

ME = psutil.Process()
def alive() -> set:
    return {p.pid for p in ME.children(recursive=True) if p.is_running() and p.status() != psutil.STATUS_ZOMBIE}
def listening() -> set: return {c.laddr.port for c in ME.net_connections("tcp") if c.status == psutil.CONN_LISTEN}

def nothing_left(procs: set, ports: set) -> None:
    "No process or listening port of this process beyond `procs` and `ports` (the browser's exit is waited for)."
    for _ in range(50):
        if alive() <= procs: break
        time.sleep(0.1)
    assert alive() <= procs and listening() <= ports


class Burner:
    "Busy loops on every core, in processes of their own (a loaded machine), stopped and reaped on exit."
    def __init__(self, n: int | None = None): self.n = n or psutil.cpu_count() or 2
    def __enter__(self):
        self.procs = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(self.n)]
        return self
    def __exit__(self, *exc):
        for p in self.procs: p.kill()
        for p in self.procs: p.wait(10)


def slow_posts(app, delay: float) -> None:
    "Every form the shop answers (a POST) takes `delay` seconds more, as a server computing under load."
    @app.middleware("http")
    async def _slow(request, call_next):
        if request.method == "POST": await asyncio.sleep(delay)
        return await call_next(request)


def trace(se, task):
    "Replay the gold of `task`, observing at once after each step: what each step saw and did."
    out = [(se.reset(task).url, se.obs.dom)]
    for g in gold_trajectory(se.env.b, se.session.task, se.env.track):
        obs, done, st = se.step(g.on(se.driver.tree()))
        out.append((st.url, st.action, st.ok, st.calls, obs.url, obs.dom))
        if done: break
    return out


def test_observations_after_slow_forms_on_a_loaded_machine_are_of_the_new_page():
    """Every form answered 1.5 s late, every core busy: each observation right after a step is the one the in-process
    driver shows (the page after the navigation, byte for byte); and a submission the driver did not start (not waited
    for) is observed on the page it brings, not the page before it."""
    b = load_benchmark(progress=False); res = Resources(b)
    task = next(t for t in b.split("test") if t.type == "search")
    procs, ports = alive(), listening()
    want = trace(ShopEnv(make_env(b, "single", resources=res)), task)
    real = ShopEnv(make_env(b, "single", resources=res), driver="chromium")
    slow_posts(real.app, 1.5)
    try:
        with Burner():
            got = trace(real, task)
            assert got == want
            assert any(s[4] != s[0] for s in got[1:])            # steps that navigated, observed after their page came
            # a search submitted in the page, not through the driver's action: nothing waits for it but the observation
            real.reset(task)
            box = real.driver.tree().xpath('//input[@name="q"]')[0].get("node")
            real.driver._own.submit(lambda: (real.driver.page.fill(f'[node="{box}"]', "drink mix"),
                                             real.driver.page.evaluate("document.forms[0].requestSubmit()"))).result()
            t0 = time.perf_counter()
            obs = real.observe()                                 # at once: the server answers 1.5 s later
            waited = time.perf_counter() - t0
    finally: real.close()
    assert obs.url.startswith("/results/") and "drink mix" in obs.dom, (obs.url, obs.dom[:300])
    assert waited > 0.5, waited                                   # it waited for the page, under way when it was taken
    assert real.session.calls[-1].arguments == {"query": "drink mix"}
    nothing_left(procs, ports)


class Faulty(web_run.GoldWebAgent):
    """The oracle, with a fault of `kind` in the first episode it plays, on its first page: `kill` stops the shop's
    server, `hang` makes every page of the shop never come (within a page-load bound of 2 s)."""
    played = 0
    def __init__(self, b, kind: str): super().__init__(b); self.kind = kind
    def solve(self, env, task, seed=None):
        Faulty.played += 1
        if Faulty.played > 1: return super().solve(env, task, seed)
        env.reset(task)
        gold = gold_trajectory(self.b, env.session.task, env.env.track)
        if self.kind == "kill": env.server.stop()
        else: hang = hang_pages(env); env.driver.load_timeout_s = 2
        try:
            for g in gold:
                env.log_call({"role": "agent", "model": "oracle"})
                if env.step(g.on(env.driver.tree()))[1]: break
            return env.record()
        finally:
            if self.kind == "hang": env.app.router.routes.remove(hang); env.driver.load_timeout_s = LOAD_TIMEOUT_S

def hang_pages(env):
    "Every page of the shop never comes from now on, until the route returned is removed."
    from fastapi.routing import APIRoute
    async def never(path: str): await asyncio.sleep(3600)
    route = APIRoute("/{path:path}", never, methods=["GET", "POST"])
    env.app.router.routes.insert(0, route)
    return route


def run_faulty(kind, tmp_path, monkeypatch):
    "A Chromium run of the tiny benchmark's search task, two trials, the first with a fault; then its resume."
    Faulty.played = 0
    monkeypatch.setattr(web_run, "web_agent_factory", lambda cfg, b: Faulty(b, kind))
    cfg = RunConfig(method="oracle", split="train", trials=2, env_params={"engine": "bm25s"})
    procs, ports = alive(), listening()
    t0 = time.perf_counter()
    r = web_run.run_web(cfg, tmp_path, driver="chromium", progress=False, benchmark=tiny_benchmark())
    took = time.perf_counter() - t0
    recs = [json.loads(l) for l in (r.dir/"results.jsonl").read_text().splitlines()]
    nothing_left(procs, ports)
    again = web_run.run_web(cfg, tmp_path, driver="chromium", progress=False, benchmark=tiny_benchmark())
    after = [json.loads(l) for l in (r.dir/"results.jsonl").read_text().splitlines()]
    nothing_left(procs, ports)
    return r, recs, took, again, after

def check_recorded(r, recs, again, after, line: str):
    "One error record (its one line starts with `line`), the other trial done; the resume computes the failed one."
    assert (r.ran, r.errors) == (2, 1)
    err, ok = sorted(recs, key=lambda x: x["status"] != "error")
    assert err["status"] == "error" and err["trial"] == 0 and err["error"].startswith(line), err["error"]
    assert "\n" not in err["error"] and len(err["error"]) < 300, err["error"]
    assert ok["status"] == "ok" and ok["function_acc"] == 1.0              # the next episode had the shop again
    assert (again.ran, again.errors, again.skipped) == (1, 0, 1)
    assert [(x["trial"], x["status"], x["function_acc"]) for x in after[2:]] == [(0, "ok", 1.0)]
    print(err["error"])
    return err["error"]


def test_the_shop_server_killed_mid_episode_is_one_error_record(tmp_path, monkeypatch):
    r, recs, took, again, after = run_faulty("kill", tmp_path, monkeypatch)
    line = check_recorded(r, recs, again, after, "ShopUnreachable: ")
    assert "the shop's server at http://127.0.0.1:" in line and line.endswith("did not answer (net::ERR_CONNECTION_REFUSED)")


def test_a_page_that_never_loads_is_one_error_record(tmp_path, monkeypatch):
    r, recs, took, again, after = run_faulty("hang", tmp_path, monkeypatch)
    line = check_recorded(r, recs, again, after, "PageTimeout: ")
    assert line.endswith("the page did not finish loading within 2 s")
    assert took < 60, took                       # cut at the bound, not waited out; and the server stopped at once


class Busy(web_run.GoldWebAgent):
    "An agent that takes 1,000 page steps, whatever the environment says."
    def solve(self, env, task, seed=None):
        env.reset(task)
        self.ends = [env.step("click(99999)")[1] for _ in range(1000)]
        return env.record()

def test_an_agent_of_a_thousand_steps_is_ended_by_the_step_limit(tmp_path, monkeypatch):
    agents = []
    monkeypatch.setattr(web_run, "web_agent_factory", lambda cfg, b: agents.append(Busy(b)) or agents[-1])
    cfg = RunConfig(method="oracle", split="train", env_params={"engine": "bm25s"})
    procs, ports = alive(), listening()
    t0 = time.perf_counter()
    r = web_run.run_web(cfg, tmp_path, driver="chromium", progress=False, benchmark=tiny_benchmark(), max_page_steps=50)
    took = time.perf_counter() - t0
    rec = json.loads((r.dir/"results.jsonl").read_text())
    assert (r.ran, r.errors) == (1, 0) and rec["status"] == "ok"
    assert rec["page_end"] == "max_page_steps" and len(rec["page_steps"]) == 50
    assert agents[0].ends.index(True) == 49 and all(agents[0].ends[49:])      # after the limit, no step is done
    assert all(not s["ok"] and "not on the page" in s["error"] for s in rec["page_steps"])
    assert took < 120, took
    nothing_left(procs, ports)
