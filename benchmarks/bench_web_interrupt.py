"""Seconds from a signal to the exit of a web run (`personalwab run oracle --interface web`), and what survives it.

Each try starts `personalwab run oracle --interface web --driver D --data tiny --trials 400 --workers W` in its own session,
waits for its first record, sends SIGTERM (or SIGINT), and times the exit. The run's process tree (node driver,
Chromium and its helpers) is tracked by pid and start time while it runs; any of them alive after the exit is a survivor.
Prints one line per try and the median per (driver, signal).

`--chat`: the signal lands while a page step waits on the server (0.3 s into the second step). The run is the multi-turn
track with the simulated user on smollm2 (its replies not cached), and its web agent (this script's `ChatAgent`, put in
place of the oracle's in the child process) sends chat messages: each step's answer is the simulated user's reply,
computed in the shop's server for seconds. `--group`: the signal goes to the run's process group (as a terminal's
Ctrl-C), so the browser and Playwright's driver get it too.

    python benchmarks/bench_web_interrupt.py [--tries 3] [--driver chromium inprocess] [--signal TERM INT] [--workers 1]
                                             [--chat] [--group]
Before/after: run it with PYTHONPATH pointing at the checkout to measure (from a folder outside any checkout).
"""
import argparse, os, signal, statistics, subprocess, sys, tempfile, time
from pathlib import Path
import psutil

EXE = Path(sys.executable).parent/"personalwab"

sys.path.insert(0, str(Path(__file__).resolve().parents[1]/"tests"))
from test_web_cli import _alive as alive, _descendants as tree   # the tests' own process-tree checks: one definition

CHAT = "Tell me everything about the products you want: what, for whom, and why, in detail."

class ChatAgent:
    "A web agent that only chats: a few messages to the simulated user per task (the `--chat` scenario)."
    name = "oracle"
    def __init__(self, b): self.b = b
    @property
    def params(self) -> dict: return {"method": self.name, "interface": "web"}
    def solve(self, env, task, seed=None) -> dict:
        env.reset(task)
        for _ in range(3):
            env.log_call({"role": "agent", "model": "chat"})
            with open(os.environ["CHAT_LOG"], "a") as f: f.write("step\n")   # a step starts: its answer is the user's reply
            if env.step(f"message({CHAT!r})")[1]: break
        return env.record()

def chat_child(args: list[str]) -> None:
    "The CLI's `personalwab run ...` with `ChatAgent` as the web agent."
    from personalwab.web import run as web_run
    from personalwab.llm.base import get_llm
    from personalwab.env.resources import shared
    shared(("llm", "smollm2"), lambda: get_llm("smollm2", cache=False))   # the shared simulator LLM: every reply computed, none cached
    web_run.web_agent_factory = lambda cfg, b: ChatAgent(b)
    from personalwab.cli import main
    sys.argv = ["personalwab", "run", *args]
    main()

def one(driver: str, sig: int, trials: int = 400, wait_lines: int = 1, workers: int = 1, chat: bool = False, group: bool = False) -> tuple[float, int, str, list[str]]:
    "One try: (seconds from the signal to the exit, exit status, stderr, survivors)."
    with tempfile.TemporaryDirectory() as d:
        args = ["oracle", "--interface", "web", "--driver", driver, "--data", "tiny", "--trials", str(trials),
                "--workers", str(workers), "--out-dir", d, "--no-progress"]
        if chat: args += ["--track", "multi", "--user-llm", "smollm2"]
        cmd = [sys.executable, __file__, "--chat-child", *args] if chat else [str(EXE), "run", *args]
        log = Path(d)/"steps.log"
        errf = open(Path(d)/"stderr.txt", "w+")      # a file, not a pipe: a child writing much would block on a full pipe
        p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=errf, text=True, start_new_session=True,
                             env=os.environ | {"CHAT_LOG": str(log)}, preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
        me, seen, deadline = psutil.Process(p.pid), set(), time.time() + 600
        lines = lambda: sum(f.read_bytes().count(b"\n") for f in Path(d).glob("*/results.jsonl"))
        while (lines() < wait_lines) if not chat else (not log.exists() or log.read_text().count("step") < 2):
            assert p.poll() is None and time.time() < deadline, f"the run ended early: {(Path(d)/'stderr.txt').read_text()[-2000:]}"
            seen |= tree(me); time.sleep(0.05)
        seen |= tree(me)
        if chat: time.sleep(0.3)                 # 0.3 s into the second chat step (the model loaded): the user's reply under way
        t0 = time.perf_counter()
        if group: os.killpg(p.pid, sig)          # to the run's process group, as a terminal's Ctrl-C or `timeout` sends it
        else: p.send_signal(sig)
        while p.poll() is None:
            seen |= tree(me); time.sleep(0.01)
        took = time.perf_counter() - t0
        err = (Path(d)/"stderr.txt").read_text(); errf.close()
        time.sleep(0.5)                          # a child the run killed is reaped by init: give it a moment
        return took, p.returncode, err, alive(seen)

if __name__ == "__main__":
    if sys.argv[1:2] == ["--chat-child"]: chat_child(sys.argv[2:]); sys.exit()
    ap = argparse.ArgumentParser()
    ap.add_argument("--tries", type=int, default=3)
    ap.add_argument("--driver", nargs="+", default=["chromium", "inprocess"])
    ap.add_argument("--signal", nargs="+", default=["TERM", "INT"])
    ap.add_argument("--workers", type=int, default=1)
    ap.add_argument("--chat", action="store_true")
    ap.add_argument("--group", action="store_true", help="signal the run's process group (browser and driver too)")
    a = ap.parse_args()
    for drv in a.driver:
        for s in a.signal:
            sig = getattr(signal, "SIG" + s)
            times = []
            for i in range(a.tries):
                took, rc, err, left = one(drv, sig, workers=a.workers, chat=a.chat, group=a.group)
                resume = "resume with:" in err
                other = [l for l in err.splitlines() if l.startswith(("warning", "Traceback", "Exception"))]
                times.append(took)
                print(f"{drv} w{a.workers}{' chat' if a.chat else ''}{' group' if a.group else ''} SIG{s} try {i}: exit {rc} after {took:.2f} s; resume line: {resume}; survivors: {left or 'none'}"
                      + (f"; other lines: {other}" if other else ""), flush=True)
                if not resume or left: print("   stderr tail:", err[-1500:].replace("\n", "\n   "), flush=True)
            print(f"{drv} w{a.workers}{' chat' if a.chat else ''}{' group' if a.group else ''} SIG{s}: median {statistics.median(times):.2f} s over {len(times)} tries", flush=True)
