"""An oracle episode in real Chromium equals the in-process one: the same URLs, observations, logged calls and
scores; screenshots are saved with the acted-on element outlined. Skipped only where no Chromium is installed."""
import pytest
from personalwab.data.load import load_benchmark
from personalwab.env.environment import make_env
from personalwab.env.resources import Resources
from personalwab.env.simulator import UserSimulator
from personalwab.web.drivers import chromium_path
from personalwab.web.env import ShopEnv
from personalwab.web.gold import REVIEW_BUTTON, gold_trajectory

pytestmark = [pytest.mark.browser, pytest.mark.xdist_group("web_chromium"),
              pytest.mark.skipif(chromium_path() is None, reason="no Chromium installed (Debian: apt-get install chromium)")]

def trace(se, task):
    "Replay the gold of `task` step by step, recording what each step saw and did."
    out = [(se.reset(task).url, se.obs.dom)]
    for g in gold_trajectory(se.env.b, se.session.task, se.env.track):
        obs, done, st = se.step(g.on(se.driver.tree()))
        out.append((st.url, st.action, st.ok, st.calls, obs.url, obs.dom, obs.tokens))
        if done: break
    e = se.episode().episode
    return out, (e.function_acc, e.result_acc, e.actions, e.end)

@pytest.mark.parametrize("track", ["single", "multi"])
def test_chromium_equals_in_process(track, tmp_path):
    b = load_benchmark(progress=False); res = Resources(b)
    tasks = [next(t for t in b.split("test") if t.type == k) for k in ("search", "recommend", "review")]
    sim = (lambda: UserSimulator(None, b)) if track == "multi" else (lambda: None)
    fast = ShopEnv(make_env(b, track, resources=res, simulator=sim()))
    with ShopEnv(make_env(b, track, resources=res, simulator=sim()), driver="chromium", shots=tmp_path) as real:
        for task in tasks:
            a, b_ = trace(fast, task), trace(real, task)
            assert a == b_, task.id
    shots = sorted(tmp_path.glob("*.png"))
    assert len(shots) == sum(len(gold_trajectory(b, t, track)) for t in tasks)
    from PIL import Image
    im = Image.open(shots[0]).convert("RGB")
    assert im.size == (1280, 900) and any(p == (255, 0, 0) for p in im.getdata())   # the outline is drawn


def test_text_area_line_breaks_and_markup_reach_the_function_alike(tmp_path):
    "A review typed with line breaks and markup is the same function argument from both drivers (browsers send CRLF)."
    b = load_benchmark(progress=False); res = Resources(b)
    task = next(t for t in b.split("test") if t.type == "review")
    text = "Line one.\nLine <b>two</b> & three.\n\nEnd"
    calls = []
    for driver in ("inprocess", "chromium"):
        with ShopEnv(make_env(b, "single", resources=res), driver=driver) as se:
            se.reset(task)
            se.driver.open(f"/product/{task.target_asin}"); se.observe()
            box = se.driver.tree().xpath('//textarea[@name="review"]')[0].get("node")
            se.step(f"type({box}, {text!r})")
            assert se.obs.dom.count("Line &lt;b&gt;two&lt;/b&gt;") == 1          # the typed text shows, escaped
            se.step(f"click({se.driver.tree().xpath(REVIEW_BUTTON)[0].get('node')})")
            calls.append(se.session.calls[0].arguments)
    assert calls == [{"review": text}, {"review": text}]


def test_a_chromium_run_leaves_no_browser_or_port(tmp_path):
    "`run_web` on Chromium with two workers: afterwards no browser or driver process of this test, and no port it listens on."
    import psutil, time
    from personalwab.run.config import RunConfig
    from personalwab.data.schema import tiny_benchmark
    from personalwab.web.run import run_web
    me = psutil.Process()
    def alive(): return {p.pid for p in me.children(recursive=True) if p.is_running() and p.status() != psutil.STATUS_ZOMBIE}
    def listening(): return {c.laddr.port for c in me.net_connections("tcp") if c.status == psutil.CONN_LISTEN}
    procs, ports = alive(), listening()
    cfg = RunConfig(method="oracle", split="train", workers=2, env_params={"engine": "bm25s"})
    r = run_web(cfg, tmp_path, driver="chromium", progress=False, benchmark=tiny_benchmark())
    assert r.ran > 0 and r.errors == 0
    for _ in range(50):                       # the browser's processes exit as its driver is stopped: wait for them, not a timing
        if alive() <= procs: break
        time.sleep(0.1)
    assert alive() <= procs and listening() <= ports


def test_kept_pages_of_a_chromium_run_name_their_screenshots(tmp_path):
    "`run_web(keep_pages=True)` on Chromium: each page step's record names its screenshot, saved in the run folder."
    import json
    from personalwab.run.config import RunConfig
    from personalwab.web.run import SHOTS, run_web
    r = run_web(RunConfig(method="oracle", data="tiny", env_params={"engine": "bm25s"}), tmp_path, driver="chromium", progress=False, keep_pages=True)
    rec = json.loads((r.dir/"results.jsonl").read_text().splitlines()[0])
    shots = [s["screenshot"] for s in rec["page_steps"]]
    assert rec["function_acc"] == 1.0 and len(shots) == 3     # a recommendation: the orders, "last 30", submit
    assert all(s.startswith(f"{SHOTS}/{rec['task_id']}/") and (r.dir/s).stat().st_size > 5_000 for s in shots), shots
    assert all(s["dom"] for s in rec["page_steps"])


def test_a_planner_runs_alike_in_chromium(tmp_path):
    "The rules as a planner (web.planned) on the tiny benchmark's tasks: in Chromium the same page steps, calls and scores as in process."
    from personalwab.run.config import RunConfig
    from personalwab.data.schema import tiny_benchmark
    from personalwab.web.run import run_web
    import json
    cfg = RunConfig(method="rules", split="train", env_params={"engine": "bm25s"})
    got = {}
    for driver in ("inprocess", "chromium"):
        r = run_web(cfg, tmp_path/driver, driver=driver, progress=False, benchmark=tiny_benchmark())
        assert r.ran > 0 and r.errors == 0
        recs = sorted((json.loads(l) for l in (r.dir/"results.jsonl").read_text().splitlines()), key=lambda x: x["task_id"])
        got[driver] = [(x["task_id"], x["function_acc"], x["result_acc"], x["actions"],
                        [(s["url"], s["action"], s["ok"], s["calls"]) for s in x["page_steps"]], x["step_metrics"]) for x in recs]
    assert got["inprocess"] == got["chromium"]


CHAT_CHILD = '''
"`personalwab run` whose web agent only chats: each page step waits while the shop's server computes the simulated user's reply."
import sys
from pathlib import Path
from personalwab.llm.base import get_llm
from personalwab.env.resources import shared
from personalwab.web import run as web_run
shared(("llm", "smollm2"), lambda: get_llm("smollm2", cache=False))   # every reply computed (seconds), none from the cache
LOG = Path(sys.argv[1])
class ChatAgent:
    name = "oracle"
    def __init__(self, b): self.b = b
    @property
    def params(self): return {"method": self.name, "interface": "web"}
    def solve(self, env, task, seed=None):
        env.reset(task)
        for _ in range(3):
            env.log_call({"role": "agent", "model": "chat"})
            with LOG.open("a") as f: f.write("step\\n")               # a step starts: its answer is the user's reply
            if env.step('message("Tell me everything about the products you want: what, for whom, and why, in detail.")')[1]: break
        return env.record()
web_run.web_agent_factory = lambda cfg, b: ChatAgent(b)
from personalwab.cli import main
sys.argv = ["personalwab", "run", *sys.argv[2:]]
main()
'''

@pytest.mark.slow
@pytest.mark.timeout(900)
def test_a_run_interrupted_while_the_user_answers_stops_at_once(tmp_path):
    """SIGTERM while a page step waits on the server (the simulated user, SmolLM2, answering a chat message): the run
    exits within 2 s with the resume line, and no process it started survives. Before, the close of the browser
    waited for the step: until the reply came or Playwright's timeout (20 s) cut it."""
    import os, re, signal, subprocess, sys, time, psutil
    from test_web_cli import _alive, _descendants
    (tmp_path/"child.py").write_text(CHAT_CHILD)
    log = tmp_path/"steps.log"
    cmd = [sys.executable, str(tmp_path/"child.py"), str(log), "oracle", "--interface", "web", "--driver", "chromium", "--data", "tiny",
           "--trials", "20", "--track", "multi", "--user-llm", "smollm2", "--out-dir", str(tmp_path/"runs"), "--no-progress"]
    errf = (tmp_path/"stderr.txt").open("w")          # a file, not a pipe nobody reads while the run writes
    p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=errf, text=True, start_new_session=True,
                         env=os.environ | {"PYTHONWARNINGS": "ignore"})
    me, seen, deadline = psutil.Process(p.pid), set(), time.time() + 800
    while not log.exists() or log.read_text().count("step") < 2:     # the second step: the model is loaded, a reply under way
        assert p.poll() is None and time.time() < deadline, (tmp_path/"stderr.txt").read_text()[-2000:]
        seen |= _descendants(me); time.sleep(0.05)
    time.sleep(0.3); seen |= _descendants(me)
    t0 = time.perf_counter(); p.send_signal(signal.SIGTERM)
    while p.poll() is None:
        seen |= _descendants(me); time.sleep(0.01)
    took, err = time.perf_counter() - t0, (tmp_path/"stderr.txt").read_text(); errf.close()
    print(f"SIGTERM during a reply: exit {p.returncode} after {took:.2f} s")
    assert p.returncode == 143 and took < 2, (p.returncode, took, err[-2000:])
    assert re.search(r"interrupted \(SIGTERM\): \d+ of 20 tasks done, .*; resume with: personalwab run --config .+$", err.strip()), err[-2000:]
    assert "Traceback" not in err and not [l for l in err.splitlines() if l.startswith("warning")], err[-2000:]
    time.sleep(0.5)
    assert _alive(seen) == []
