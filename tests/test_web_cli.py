"""`personalwab run --interface web`: the oracle's page trajectories through the console script, as a user runs them;
a web run stopped by Ctrl-C or SIGTERM (both drivers); `personalwab shop` on a port already in use."""
import json, os, subprocess, sys
from pathlib import Path

BIN = Path(sys.executable).parent/"personalwab"

def _run(*args, cwd):
    return subprocess.run([str(BIN), "run", *args], cwd=cwd, capture_output=True, text=True, timeout=600,
                          env=os.environ | {"PYTHONWARNINGS": "ignore"})

def test_run_on_pages_scores_as_the_function_track(tmp_path):
    web = _run("oracle", "--interface", "web", "--data", "tiny", "--out-dir", str(tmp_path/"web"), "--no-progress", cwd=tmp_path)
    fun = _run("oracle", "--data", "tiny", "--out-dir", str(tmp_path/"fun"), "--no-progress", cwd=tmp_path)
    assert web.returncode == 0 and fun.returncode == 0, web.stderr[-2000:] + fun.stderr[-2000:]
    (w,), (f,) = ([json.loads(l) for l in p.read_text().splitlines()] for p in (*(tmp_path/"web").glob("*/results.jsonl"),
                                                                                 *(tmp_path/"fun").glob("*/results.jsonl")))
    assert w["interface"] == "web" and w["page_steps"] and all(s["url"] for s in w["page_steps"])
    assert (w["function_acc"], w["result_acc"], w["rewards"]) == (f["function_acc"], f["result_acc"], f["rewards"])

def test_unknown_interface_or_driver_is_one_usage_line(tmp_path):
    for args in (["--interface", "pages"], ["--interface", "web", "--driver", "firefox"]):
        r = _run("oracle", "--data", "tiny", "--out-dir", str(tmp_path), *args, cwd=tmp_path)
        assert r.returncode == 2 and len(r.stderr.strip().splitlines()) == 1, r.stderr


# --- Ctrl-C and SIGTERM during a web run; the shop on a port in use ---------------------------------------------

import re, signal, socket, time
import psutil, pytest
from personalwab.web.drivers import chromium_path

CHROMIUM = [pytest.mark.browser, pytest.mark.xdist_group("web_chromium"),
            pytest.mark.skipif(chromium_path() is None, reason="no Chromium installed (Debian: apt-get install chromium)")]

def _descendants(p: psutil.Process) -> set[tuple[int, float]]:
    "The (pid, start time) of `p`'s descendants now (a process killed later is no longer under `p`: its pid is what finds it)."
    out = set()
    for c in p.children(recursive=True):
        try: out.add((c.pid, c.create_time()))
        except psutil.Error: pass
    return out

def _alive(procs) -> list[str]:
    "Those of `procs` still running: same pid and start time, not a zombie."
    out = []
    for pid, t in procs:
        try:
            q = psutil.Process(pid)
            if q.create_time() == t and q.status() != psutil.STATUS_ZOMBIE: out.append(f"{pid} {q.name()} {' '.join(q.cmdline())[:120]}")
        except psutil.Error: pass
    return out

@pytest.mark.timeout(600)
@pytest.mark.parametrize("driver, sig, group", [pytest.param("chromium", signal.SIGTERM, False, marks=CHROMIUM),
                                                pytest.param("chromium", signal.SIGINT, False, marks=CHROMIUM),
                                                pytest.param("chromium", signal.SIGINT, True, marks=CHROMIUM),
                                                ("inprocess", signal.SIGTERM, False), ("inprocess", signal.SIGINT, False)])
def test_interrupted_web_run_stops_at_once_and_leaves_no_process(tmp_path, driver, sig, group):
    """A web run signalled mid-run exits within 2 s with the interrupted status and the resume line, and no process it
    started (Playwright's driver, Chromium and its helpers) survives. group: the signal to the run's process group, as a
    terminal's Ctrl-C sends it (the browser and its driver get it too)."""
    cmd = [str(BIN), "run", "oracle", "--interface", "web", "--driver", driver, "--data", "tiny", "--trials", "400",
           "--out-dir", str(tmp_path), "--no-progress"]
    errf = (tmp_path/"stderr.txt").open("w")          # a file, not a pipe nobody reads while the run writes
    p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=errf, text=True, start_new_session=True, cwd=tmp_path,
                         env=os.environ | {"PYTHONWARNINGS": "ignore"}, preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    me, seen, deadline = psutil.Process(p.pid), set(), time.time() + 500
    while sum(f.read_bytes().count(b"\n") for f in tmp_path.glob("*/results.jsonl")) < 1:
        assert p.poll() is None and time.time() < deadline, "the run ended before its first record"
        seen |= _descendants(me); time.sleep(0.05)
    seen |= _descendants(me)
    assert driver == "inprocess" or any("chromium" in x for x in _alive(seen))     # the browser is there to be stopped
    t0 = time.perf_counter()
    if group: os.killpg(p.pid, sig)
    else: p.send_signal(sig)
    while p.poll() is None:
        seen |= _descendants(me); time.sleep(0.01)
    took, err = time.perf_counter() - t0, (tmp_path/"stderr.txt").read_text(); errf.close()
    print(f"{driver} {signal.Signals(sig).name}{' (group)' if group else ''}: exit {p.returncode} after {took:.2f} s")
    assert p.returncode == 128 + sig and took < 2, (p.returncode, took, err[-2000:])
    last = err.strip().splitlines()[-1]
    assert re.fullmatch(rf"interrupted \({'SIGTERM' if sig == signal.SIGTERM else 'Ctrl-C'}\): \d+ of 400 tasks done, .*; "
                        r"resume with: personalwab run --config .+", last), err[-2000:]
    assert "Traceback" not in err and not [l for l in err.splitlines() if l.startswith("warning")], err[-2000:]
    time.sleep(0.5)                                  # a killed helper is reaped by init: a moment for it
    assert _alive(seen) == []


def test_shop_on_a_port_in_use_is_one_usage_line(tmp_path):
    "`personalwab shop` on a port someone listens on: one line of its own naming the port, exit 2, nothing announced."
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0)); s.listen(1); port = s.getsockname()[1]
        r = subprocess.run([str(BIN), "shop", "--data", "tiny", "--port", str(port)], cwd=tmp_path, capture_output=True, text=True,
                           timeout=300, env=os.environ | {"PYTHONWARNINGS": "ignore"})
    assert r.returncode == 2 and r.stdout == "", (r.returncode, r.stdout, r.stderr)
    assert r.stderr.strip().splitlines() == [f"personalwab shop: error: --port {port}: port {port} on 127.0.0.1 is already in use "
                                             "(another server listens there: stop it or choose another --port)"], r.stderr
