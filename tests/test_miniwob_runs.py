"""MiniWoB++ runs on the command line (`personalwab miniwob run`, personalwab.web.miniwob_runs), end to end: real
BrowserGym, real Chromium (Debian's, for both of BrowserGym's browsers), MiniWoB++'s pages from the `miniwob` wheel.
A run stopped by SIGTERM keeps every record it wrote and prints the command that resumes it; that command plays only
the episodes the run does not have, also when the stop goes to its whole process group, Chromium included. Skipped
only where no Chromium is installed."""
import json, os, signal, subprocess, sys, time
from pathlib import Path
import pytest
from personalwab.web.drivers import chromium_path

ROOT = Path(__file__).resolve().parents[1]
pytestmark = [pytest.mark.browser, pytest.mark.xdist_group("browsergym"),
              pytest.mark.skipif(chromium_path() is None, reason="no Chromium installed (Debian: apt-get install chromium)")]

def lines(p: Path) -> list[str]: return [l for l in p.read_text().splitlines() if l.strip()] if p.exists() else []

def test_a_stopped_run_resumes_without_redoing_finished_episodes(tmp_path):
    """The random agent on click-test, three seeds: SIGTERM to the run's whole process group once the first episode is
    written (as `kill -- -PGID` or a job runner stops it: Chromium, in the same group, is gone before the run closes
    it), and the run ends as an interruption (exit 143, the resume command printed, no traceback, no Playwright error);
    then the same command: the episodes written before the stop are kept as they were, the others are played, once
    each; a third start plays nothing."""
    cmd = [sys.executable, "-m", "personalwab.cli", "miniwob", "run", "--agent", "random", "--tasks", "click-test",
           "--seeds", "3", "--out-dir", str(tmp_path)]
    p = subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)
    deadline, results = time.monotonic() + 600, None
    try:
        while time.monotonic() < deadline and p.poll() is None:
            found = list(tmp_path.glob("miniwob-random-*/results.jsonl"))
            if found and lines(found[0]): results = found[0]; break
            time.sleep(0.1)
        assert results is not None, "no episode written: " + "".join(p.communicate(timeout=60))
        os.killpg(p.pid, signal.SIGTERM)
        out, err = p.communicate(timeout=300)
    finally:
        if p.poll() is None: os.killpg(p.pid, signal.SIGKILL); p.wait()
    assert p.returncode == 143 and "Traceback" not in err and "Error" not in err, (out, err)
    before = lines(results)
    k = len(before)
    assert 1 <= k < 3 and f"interrupted (SIGTERM): {k} of 3 episodes done" in err, err
    assert err.rstrip().endswith("resume with: personalwab miniwob run --agent random --seeds 3 --tasks click-test "
                                 f"--out-dir {tmp_path}"), err
    r = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, (r.stdout, r.stderr)
    after = lines(results)
    assert after[:k] == before and len(after) == 3, after                # kept as written; the rest added
    recs = [json.loads(l) for l in after]
    assert sorted(x["trial"] for x in recs) == [0, 1, 2] and all(x["status"] == "ok" and x["success"] for x in recs)
    played = [l for l in r.stderr.splitlines() if l.startswith("[")]
    assert len(played) == 3 - k and all(" click-test seed " in l for l in played), r.stderr
    assert "3 of 3 episodes done, 0 errors; success 1.000 [1.000, 1.000]" in r.stdout, r.stdout
    invs = json.loads((results.parent/"env.json").read_text())["invocations"]
    assert [(i["todo"], i["skipped"]) for i in invs] == [(3, 0), (3 - k, k)]
    r = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert r.returncode == 0 and lines(results) == after and not [l for l in r.stderr.splitlines() if l.startswith("[")]
    v = subprocess.run([sys.executable, "-m", "personalwab.cli", "miniwob", "view", str(results.parent)], cwd=ROOT,
                       capture_output=True, text=True, timeout=300)
    assert v.returncode == 0 and v.stdout.splitlines()[-1].startswith("3 episodes, 0 errors"), v.stdout
