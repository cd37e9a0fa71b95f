"""`personalwab run --interface web`: the oracle's page trajectories through the console script, as a user runs them."""
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
