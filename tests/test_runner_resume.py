"""Kill-and-resume integration test of the runner.

A real run (the oracle agent on the real environment: pyserini search, SASRec, MiniLM review
scoring, default benchmark, 2 worker threads) is started in a subprocess and SIGKILLed once a
few records are on disk. A torn half-record is then appended, as a kill in the middle of a
write would leave it. Re-running the same configuration in a fresh process must:

- keep every byte written before the kill (append-only: the old file is a prefix of the new one),
- cut the torn line off (saved to results.jsonl.torn) and leave only valid JSON lines,
- run exactly the tasks that had no record, with no duplicates,
- end with results equal, task by task, to a clean uninterrupted run of the same configuration.
"""
import json, os, signal, subprocess, sys, time
from pathlib import Path

import pytest

from personalwab.run.runner import RunConfig, latest_records, load_results, read_jsonl

N_TASKS = 40
CHILD = """
import sys
from personalwab.run.runner import RunConfig, run
run(RunConfig.model_validate_json(sys.argv[1]), out_dir=sys.argv[2], progress=False)
"""
# What must be identical between the resumed and the clean run (timings, seeds-of-attempt and
# worker names legitimately differ).
SAME = ["task_id", "trial", "status", "type", "user_id", "target_asin", "function_acc", "result_acc",
        "steps", "rewards", "actions", "observations", "error", "seed"]


def _cfg() -> RunConfig:
    return RunConfig(method="oracle", track="single", split="test", limit=N_TASKS, workers=2,
                     params={"pause_s": 0.05}, data="default")


def _child(cfg: RunConfig, out: Path) -> list[str]:
    return [sys.executable, "-c", CHILD, cfg.model_dump_json(), str(out)]


def _lines(p: Path) -> int:
    try: return p.read_bytes().count(b"\n")
    except FileNotFoundError: return 0


def _table(path: Path):
    df = load_results(path)
    return df[SAME].sort_values(["task_id", "trial"]).reset_index(drop=True)


@pytest.mark.timeout(900)
def test_kill_and_resume_equals_clean_run(tmp_path):
    cfg = _cfg()
    killed, clean = tmp_path/"killed", tmp_path/"clean"
    res = killed/cfg.name/"results.jsonl"

    # 1. start a real run and SIGKILL it mid-way
    proc = subprocess.Popen(_child(cfg, killed), stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    deadline = time.time() + 600
    while _lines(res) < 5:
        if proc.poll() is not None:
            pytest.fail(f"run ended before it could be killed (rc={proc.returncode}):\n{proc.stdout.read().decode()[-4000:]}")
        if time.time() > deadline:
            proc.kill(); pytest.fail("no results within 600 s")
        time.sleep(0.005)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    assert proc.returncode == -signal.SIGKILL
    written = res.read_bytes()
    whole = written[:written.rfind(b"\n") + 1]
    n_killed = whole.count(b"\n")
    assert 0 < n_killed < N_TASKS, f"kill was not mid-way: {n_killed} of {N_TASKS} records"

    # 2. a kill in the middle of a write leaves half a record: simulate one (on top of whatever the kill left)
    with open(res, "ab") as f: f.write(b'{"task_id": "test-00999", "trial": 0, "status": "ok", "actio')

    # 3. resume in a fresh process
    r = subprocess.run(_child(cfg, killed), capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    after = res.read_bytes()
    assert after.startswith(whole), "bytes written before the kill were changed"
    assert after.endswith(b"\n")
    assert (res.parent/"results.jsonl.torn").exists()
    recs = read_jsonl(res)                                   # every line is a JSON record
    assert len(recs) == after.count(b"\n")
    keys = [(x["task_id"], x["trial"]) for x in recs]
    assert len(keys) == len(set(keys)) == N_TASKS, "a finished task was run twice or a task is missing"
    assert all(x["status"] == "ok" for x in recs)
    summary = json.loads((res.parent/"summary.json").read_text())
    assert summary["complete"] and summary["finished"] == N_TASKS
    env = json.loads((res.parent/"env.json").read_text())
    assert len(env["invocations"]) == 2 and env["invocations"][1]["skipped"] == n_killed

    # 4. the union equals a clean, uninterrupted run
    r = subprocess.run(_child(cfg, clean), capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    a, b = _table(res), _table(clean/cfg.name/"results.jsonl")
    assert a.to_dict("records") == b.to_dict("records")
    clean_summary = json.loads((clean/cfg.name/"summary.json").read_text())
    assert summary["scores"] == clean_summary["scores"]
    # the oracle's ceiling on the default benchmark (issue 5's definition of done)
    assert summary["scores"]["overall"]["function_acc"] == 1.0


def test_second_process_on_same_run_is_refused(tmp_path):
    "Two processes appending to one results file would interleave lines: the second must fail at once."
    from filelock import FileLock
    from personalwab.run.runner import run, run_dir
    cfg = _cfg()
    d = run_dir(cfg, tmp_path); d.mkdir(parents=True)
    with FileLock(str(d/".lock")):
        with pytest.raises(RuntimeError, match="another process"):
            run(cfg, out_dir=tmp_path, progress=False)
