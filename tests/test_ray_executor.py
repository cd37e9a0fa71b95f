"""`--executor ray` (personalwab.run.executor): the same records as a local run, and the faults of a cluster.

A cluster of three Ray nodes on this machine (`ray.cluster_utils.Cluster`: a head without CPUs, two nodes of one CPU)
plays the episodes. Checked here: a local and a Ray run of the rules agent and of SmolLM2 record the same episodes
(but for times, worker names and prefix-cache reuse, and scores within re-grading's tolerance); `--address auto` joining a cluster that `ray start --head`
started; a node removed in the middle of a run, a driver killed, Ctrl-C, SIGTERM and a missing Ray or cluster.
Everything Ray writes goes to a temporary HOME and RAY_TMPDIR (no token in ~/.ray), removed at the end; the episodes
that must last are the oracle's with a pause (no model: a model is not the point).
"""
import json, os, re, shlex, shutil, signal, socket, subprocess, sys, tempfile, time, uuid
from pathlib import Path
import pytest

ray = pytest.importorskip("ray")
from typer.testing import CliRunner
from personalwab.cli import app
from personalwab.run.config import RunConfig
from personalwab.run.executor import RayExecutor, executing, executor_of
from personalwab.run.records import read_jsonl
from personalwab.evidence.verify import SCORE_TOLERANCE
from personalwab.run.runner import run
from personalwab.core.config import UsageError, torch_threads

pytestmark = pytest.mark.xdist_group("ray")
BIN = Path(sys.executable).parent/"personalwab"
IGNORED = {"started", "finished", "wall_s", "worker", "latency_s", "env_s", "invocation", "reused_tokens"}


def fields(r):
    """A record without what depends on when and where it ran: times (a web step's `env_s`), the worker's name, the
    prefix cache's reuse."""
    if isinstance(r, dict): return {k: fields(v) for k, v in r.items() if k not in IGNORED}
    return [fields(x) for x in r] if isinstance(r, list) else r


def same(a, b, at="") -> str | None:
    """Where `a` and `b` (records as `fields` leaves them) differ, or None: equal but that a float may differ by
    `SCORE_TOLERANCE`. A record's floats are its scores (times are left out): a review's MiniLM similarity is a float32
    sum whose last bits depend on the batch its texts were embedded in, and a process that embedded a text before (a
    pytest worker that ran other tests; a fresh Ray worker did not) embeds it in another batch (seen in CI: 0.45116618
    locally, 0.45116615 on Ray). Re-grading and the verification allow the same."""
    if isinstance(a, float) and isinstance(b, float):
        return None if abs(a - b) <= SCORE_TOLERANCE else f"{at}: {a!r} != {b!r}"
    if isinstance(a, dict) and isinstance(b, dict):
        if a.keys() != b.keys(): return f"{at}: keys {sorted(a.keys() ^ b.keys())} in one only"
        return next((d for k in a if (d := same(a[k], b[k], f"{at}.{k}"))), None)
    if isinstance(a, list) and isinstance(b, list):
        if len(a) != len(b): return f"{at}: {len(a)} != {len(b)} items"
        return next((d for i, (x, y) in enumerate(zip(a, b)) if (d := same(x, y, f"{at}[{i}]"))), None)
    return None if a == b else f"{at}: {a!r} != {b!r}"


def test_same_tells_a_score_within_tolerance_from_a_difference():
    r = {"task_id": "t", "result_acc": 0.45116618275642395, "rewards": [[1.0, 0.45116618275642395]], "actions": ["a"]}
    assert same(r, r | {"result_acc": 0.45116615295410156, "rewards": [[1.0, 0.45116615295410156]]}) is None
    assert same(r, r | {"result_acc": 0.4512}) == ".result_acc: 0.45116618275642395 != 0.4512"
    assert same(r, r | {"actions": ["b"]}) == ".actions[0]: 'a' != 'b'"
    assert same(r, r | {"steps": 1}) == ": keys ['steps'] in one only"
    assert same([r], [r, r]) == ": 1 != 2 items"


def same_records(a: list[dict], b: list[dict]) -> str | None:
    "`same` of two runs' records, each without what depends on when and where it ran."
    return same([fields(r) for r in a], [fields(r) for r in b])


def records(d) -> list[dict]:
    "The lines of a run folder's results.jsonl, in (task, trial) order."
    return sorted(read_jsonl(Path(d)/"results.jsonl"), key=lambda r: (r["task_id"], r["trial"]))


@pytest.fixture(scope="module")
def ray_env():
    """Ray's files in a temporary HOME and a short RAY_TMPDIR (its socket paths must stay short); no auth token. The
    project's cache stays where it was (`PERSONALWAB_CACHE`): the pytest worker keeps an LLM built here for its later
    tests (`env.resources.shared_llm`), and one whose checkpoint was converted into the temporary HOME pointed at a
    deleted folder once this module ended (a later web test's episodes failed with "no Hugging Face checkpoint")."""
    from personalwab.core.config import cache_dir
    home, tmp = tempfile.mkdtemp(prefix="pwab-ray-home-"), tempfile.mkdtemp(prefix="pr", dir="/tmp")
    env = {"HOME": home, "RAY_TMPDIR": tmp, "RAY_AUTH_MODE": "disabled", "RAY_USAGE_STATS_ENABLED": "0",
           "PERSONALWAB_CACHE": str(cache_dir())}
    old = {k: os.environ.get(k) for k in [*env, "RAY_ADDRESS"]}
    os.environ.update(env); os.environ.pop("RAY_ADDRESS", None)
    yield env
    for k, v in old.items():
        if v is None: os.environ.pop(k, None)
        else: os.environ[k] = v
    shutil.rmtree(home, ignore_errors=True); shutil.rmtree(tmp, ignore_errors=True)


@pytest.fixture(scope="module")
def cluster(ray_env):
    """A head with no CPU (it schedules nothing) and two one-CPU nodes; a lost node is noticed within a second or two.
    The worker's crash handlers are kept around the cluster's life (a JVM in this pytest worker needs its own:
    `executor.native_handlers_kept`)."""
    from ray.cluster_utils import Cluster
    from personalwab.run.executor import native_handlers, restore_native_handlers
    saved = native_handlers()
    for attempt in range(3):          # a node that does not register in Ray's fixed 30 s (a loaded machine): again
        c = Cluster(initialize_head=True, head_node_args={"num_cpus": 0, "include_dashboard": False, "_system_config": {
            "health_check_initial_delay_ms": 0, "health_check_period_ms": 500, "health_check_failure_threshold": 3}})
        try:
            for _ in range(2): c.add_node(num_cpus=1)
            c.wait_for_nodes(); break
        except Exception:
            c.shutdown()
            if attempt == 2: raise
    restore_native_handlers(saved)
    yield c
    if ray.is_initialized(): ray.shutdown()
    c.shutdown()
    restore_native_handlers(saved)


def on(cluster) -> RayExecutor: return RayExecutor(address=cluster.address, log=lambda s: None)


@pytest.mark.parametrize("method,extra", [("rules", {}),
                                          ("no_memory", {"agent_llm": "smollm2", "params": {"max_tokens": 48}})])
def test_local_and_ray_record_the_same_episodes(cluster, tmp_path, monkeypatch, method, extra):
    """The same tasks locally (one worker, one torch thread) and as Ray tasks on two nodes (one thread each): the same
    run, the same records but for times and worker names; the driver wrote them all."""
    from personalwab.env.resources import release
    monkeypatch.setenv("PERSONALWAB_LLM_CACHE", "0")       # both runs really call the model
    release("llm")
    cfg = RunConfig(method=method, data="default", limit=3 if extra else 6, sample="stratified", **extra)
    with torch_threads(1): here = run(cfg, out_dir=tmp_path/"local", progress=False)
    with executing(on(cluster)): there = run(cfg, out_dir=tmp_path/"ray", progress=False)
    assert here.dir.name == there.dir.name and (here.ran, here.errors) == (there.ran, there.errors) == (cfg.limit, 0)
    a, b = records(here.dir), records(there.dir)
    assert (d := same_records(a, b)) is None, d
    assert all(r["worker"].startswith("ray-") for r in b)
    if extra: assert all(u["completion_tokens"] > 0 and not u["cached"] for r in b for u in r["usage"])
    inv = lambda r: json.loads((r.dir/"env.json").read_text())["invocations"][-1]
    assert inv(here)["agent"] == inv(there)["agent"] and inv(here)["protocol"] == inv(there)["protocol"]
    assert (d := same(here.summary["scores"], there.summary["scores"])) is None, d


def test_a_web_run_on_the_cluster(cluster, tmp_path):
    "A web run (the in-process driver: the shop and its pages in each worker) records on Ray what it records locally."
    from personalwab.web.run import run_web
    cfg = RunConfig(method="oracle", data="default", limit=3, sample="stratified")
    here = run_web(cfg, tmp_path/"local", driver="inprocess", progress=False)
    with executing(on(cluster)): there = run_web(cfg, tmp_path/"ray", driver="inprocess", progress=False)
    assert here.dir.name == there.dir.name and there.errors == 0 and there.ran == 3
    assert (d := same_records(records(here.dir), records(there.dir))) is None, d


@pytest.mark.browser
def test_a_chromium_run_on_ray_leaves_no_browser(ray_env, tmp_path, monkeypatch):
    """The Chromium driver in Ray's workers (a Ray started for the run): the records of a local run, and once the Ray
    is stopped no browser of its workers is left (the driver hands its PERSONALWAB_* settings, and so this mark, to the
    workers, whose browsers inherit it)."""
    from personalwab.web.drivers import chromium_path
    from personalwab.web.run import run_web
    if chromium_path() is None: pytest.skip("no Chromium installed (Debian: apt-get install chromium)")
    mark = f"PERSONALWAB_TEST_MARK_{uuid.uuid4().hex}"
    monkeypatch.setenv(mark, "1")
    cfg = RunConfig(method="oracle", data="default", limit=2, sample="stratified", workers=2)
    here = run_web(cfg, tmp_path/"local", driver="chromium", progress=False)
    with executing(RayExecutor(log=lambda s: None)):
        there = run_web(cfg, tmp_path/"ray", driver="chromium", progress=False)
    assert there.errors == 0
    for a, b in zip(records(here.dir), records(there.dir)):
        assert (d := same(fields(a), fields(b))) is None, d
    me = os.getpid()
    for _ in range(100):
        if not (left := [q for q in _processes_with(mark) if q != me]): break
        time.sleep(0.3)
    assert not left, [Path(f"/proc/{q}/cmdline").read_bytes()[:200] for q in left if Path(f"/proc/{q}").exists()]


def test_a_node_removed_mid_run(cluster, tmp_path):
    """A node dies while it plays an episode: Ray runs that episode again on the other node; the run completes with
    every episode once, as a run without the fault records them."""
    import threading
    cfg = RunConfig(method="oracle", data="tiny", trials=6, params={"pause_s": 1.5})
    want = records(run(cfg, out_dir=tmp_path/"local", progress=False).dir)
    victim = sorted(cluster.worker_nodes, key=lambda n: n.unique_id)[-1]
    removed = threading.Event()
    def remove_after_first_record():
        f = tmp_path/"ray"/cfg.name/"results.jsonl"
        while not (f.exists() and f.read_text().count("\n") >= 1): time.sleep(0.1)
        cluster.remove_node(victim, allow_graceful=False); removed.set()
    t = threading.Thread(target=remove_after_first_record, daemon=True); t.start()
    try:
        with executing(on(cluster)): got = run(cfg, out_dir=tmp_path/"ray", progress=False)
    finally:
        t.join(timeout=600)
        cluster.add_node(num_cpus=1); cluster.wait_for_nodes()
    assert removed.is_set()
    recs = read_jsonl(got.dir/"results.jsonl")
    assert sorted((r["task_id"], r["trial"]) for r in recs) == sorted((r["task_id"], r["trial"]) for r in want)
    assert all(r["status"] == "ok" for r in recs) and (got.ran, got.errors) == (6, 0)
    assert (d := same_records(records(got.dir), want)) is None, d


def _cli(args, env, **kw) -> subprocess.Popen:
    "`personalwab run ARGS` with Ctrl-C's default meaning (a shell's background job would start it ignored)."
    return subprocess.Popen([str(BIN), "run", *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env=os.environ | env, preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL), **kw)


def _wait_for_records(f: Path, n: int, p: subprocess.Popen):
    while not (f.exists() and f.read_text().count("\n") >= n):
        assert p.poll() is None, p.communicate()
        time.sleep(0.2)


def _resume_line(err: str) -> list[str]:
    "The command a run printed to resume it, as arguments."
    line = next(l for l in err.splitlines() if "resume with: " in l)
    return shlex.split(line.split("resume with: ", 1)[1])


def test_a_killed_driver_is_resumed_by_the_printed_command(cluster, tmp_path, ray_env):
    """The driver is killed (SIGKILL: it prints nothing then); the command it printed first completes the run on the
    cluster: every task once, as an uninterrupted run records them."""
    args = ["oracle", "--data", "tiny", "--trials", "6", "-p", "pause_s=1.5", "--out-dir", str(tmp_path),
            "--no-progress"]
    cfg = RunConfig(method="oracle", data="tiny", trials=6, params={"pause_s": 1.5})
    p = _cli([*args, "--executor", "ray", "--address", cluster.address], ray_env)
    _wait_for_records(tmp_path/cfg.name/"results.jsonl", 1, p)
    p.kill(); _, err = p.communicate()
    cmd = _resume_line(err)
    assert cmd[:2] == ["personalwab", "run"] and cmd[-4:] == ["--executor", "ray", "--address", cluster.address]
    r = subprocess.run([str(BIN), *cmd[1:], "--no-progress"], capture_output=True, text=True, env=os.environ | ray_env)
    assert r.returncode == 0, r.stderr
    recs = read_jsonl(tmp_path/cfg.name/"results.jsonl")
    keys = [(x["task_id"], x["trial"]) for x in recs if x["status"] == "ok"]
    assert len(keys) == len(set(keys)) == 6
    want = records(run(cfg, out_dir=tmp_path/"local", progress=False).dir)
    latest = {(x["task_id"], x["trial"]): x for x in recs if x["status"] == "ok"}
    assert (d := same_records([latest[k] for k in sorted(latest)], want)) is None, d


def _processes_with(mark: str) -> list[int]:
    "The processes whose environment holds `mark` (the driver and whatever it started)."
    out = []
    for p in Path("/proc").iterdir():
        if not p.name.isdigit(): continue
        try:
            if mark.encode() in (p/"environ").read_bytes(): out.append(int(p.name))
        except OSError: pass
    return out


def test_ctrl_c_stops_with_the_resume_line_and_leaves_no_process(ray_env, tmp_path):
    """Ctrl-C (SIGINT to the command's process group, as a terminal sends it) during a run on a Ray started for the
    command: exit 130, the line that resumes it (on Ray), and no process left behind (Ray's own included)."""
    mark = f"PWAB_RAY_TEST_{uuid.uuid4().hex}"
    p = _cli(["oracle", "--data", "tiny", "--trials", "6", "-p", "pause_s=1.5", "-w", "2", "--out-dir", str(tmp_path),
              "--no-progress", "--executor", "ray"], ray_env | {mark: "1"}, start_new_session=True)
    cfg = RunConfig(method="oracle", data="tiny", trials=6, params={"pause_s": 1.5})
    _wait_for_records(tmp_path/cfg.name/"results.jsonl", 1, p)
    os.killpg(p.pid, signal.SIGINT)
    _, err = p.communicate(timeout=300)
    assert p.returncode == 130, err
    assert "interrupted (Ctrl-C)" in err and _resume_line(err.splitlines()[-1])[-2:] == ["--executor", "ray"]
    for _ in range(100):                       # Ray's processes end as the command leaves (not a timed assertion)
        if not (left := _processes_with(mark)): break
        time.sleep(0.3)
    assert not left, [Path(f"/proc/{q}/cmdline").read_bytes()[:200] for q in left if Path(f"/proc/{q}").exists()]


def _wait_gone(mark: str, what: str = "") -> None:
    "Wait until no process carries `mark` (they end as their parent stops them: waited for, not timed)."
    for _ in range(100):
        if not (left := _processes_with(mark)): return
        time.sleep(0.3)
    assert not left, (what, [Path(f"/proc/{q}/cmdline").read_bytes()[:200] for q in left
                             if Path(f"/proc/{q}").exists()])


def test_sigterm_stops_with_the_resume_line_and_leaves_no_process(ray_env, tmp_path):
    """SIGTERM to the driver alone (`kill PID`, a batch scheduler at its time limit) during a run on a Ray started for
    the command: exit 143 (as the command line's exit statuses say), the line that resumes it, no process left (the
    driver stops the Ray it started: its processes got no signal), and every record written before the stop kept: the
    printed command completes the run, every task once."""
    mark = f"PWAB_RAY_TEST_{uuid.uuid4().hex}"
    cfg = RunConfig(method="oracle", data="tiny", trials=6, params={"pause_s": 1.5})
    f = tmp_path/cfg.name/"results.jsonl"
    p = _cli(["oracle", "--data", "tiny", "--trials", "6", "-p", "pause_s=1.5", "-w", "2", "--out-dir", str(tmp_path),
              "--no-progress", "--executor", "ray"], ray_env | {mark: "1"}, start_new_session=True)
    _wait_for_records(f, 1, p)
    t0 = time.perf_counter()
    p.send_signal(signal.SIGTERM)
    _, err = p.communicate(timeout=300)
    print(f"SIGTERM: the driver exited {time.perf_counter() - t0:.1f} s after the signal")      # shown, not asserted
    assert p.returncode == 143, err
    last = err.splitlines()[-1]
    assert last.startswith("interrupted (SIGTERM): ") and _resume_line(last)[-2:] == ["--executor", "ray"], err
    _wait_gone(mark, "after SIGTERM")
    before = f.read_text().splitlines()
    done = int(re.search(r"(\d+) of 6 tasks done", last)[1])
    assert 1 <= len(before) == done and all(json.loads(x)["status"] == "ok" for x in before)
    r = subprocess.run([str(BIN), *_resume_line(last)[1:], "--no-progress"], capture_output=True, text=True,
                       env=os.environ | ray_env | {mark: "1"})
    assert r.returncode == 0, r.stderr
    after = f.read_text().splitlines()
    assert after[:len(before)] == before                   # the records of the stopped command, as it left them
    keys = [(x["task_id"], x["trial"]) for x in map(json.loads, after)]
    assert len(keys) == len(set(keys)) == 6
    _wait_gone(mark, "after the resume")


JVM_THEN_RAY = """
import sys, time
from personalwab.env.search import java_class
from personalwab.run.executor import RayExecutor, native_handlers, handler_addresses
System = java_class("java.lang.System")                 # the JVM first, as a pytest worker that searched before
before = handler_addresses(native_handlers())
ex = RayExecutor(cpus=1, log=lambda s: None); ex.start(); ex.stop()
print("kept" if handler_addresses(native_handlers()) == before else "changed", flush=True)
ArrayList, Random = java_class("java.util.ArrayList"), java_class("java.util.Random")
Collectors = java_class("java.util.stream.Collectors")
l, r = ArrayList(), Random(0)
for i in range(100000): l.add(str(r.nextInt()))
t = time.time()
while time.time() - t < 10: l.parallelStream().sorted().distinct().collect(Collectors.toList())
print("survived", flush=True)
"""


def test_a_jvm_started_before_ray_survives_it(ray_env):
    """A process whose JVM (pyserini's) started before Ray: after `RayExecutor.start` and `stop` its crash handlers are
    the JVM's, and Java code that the JVM's handler must serve (a parallel sort on two threads: its compiled code
    faults at safepoints by design) runs on. Plain `ray.init()` and `ray.shutdown()` leave SIGSEGV at the default, and
    the same process dies of it within seconds (3 of 3 here, after 0.9 to 4.7 s): what killed a CI worker in a web
    test after this file's tests had run in it, and left `make test` waiting for it until CI's time was up."""
    r = subprocess.run([sys.executable, "-c", JVM_THEN_RAY], capture_output=True, text=True, timeout=600,
                       env=os.environ | ray_env)
    assert r.returncode == 0 and r.stdout.split() == ["kept", "survived"], (r.returncode, r.stdout, r.stderr[-2000:])


def _free_port() -> int:
    with socket.socket() as s: s.bind(("127.0.0.1", 0)); return s.getsockname()[1]


def _stop_by_pid(mark: str) -> None:
    """Stop the processes that carry `mark` (a cluster `ray start` started: its GCS, raylet, agents, workers) by their
    pids: SIGTERM, then SIGKILL for those still there after a grace (`ray stop` would stop every Ray of the machine)."""
    for sig in (signal.SIGTERM, signal.SIGKILL):
        for q in _processes_with(mark):
            try: os.kill(q, sig)
            except ProcessLookupError: pass
        for _ in range(50):
            if not _processes_with(mark): return
            time.sleep(0.2)


def test_address_auto_joins_a_cluster_started_with_ray_start(ray_env, tmp_path):
    """A cluster that `ray start --head` started (its node at 127.0.0.1, two CPUs, no dashboard; its files in the test's
    RAY_TMPDIR), and `personalwab run ... --executor ray --address auto` with RAY_ADDRESS unset: Ray finds the cluster
    as it defines `auto` (the address the last `ray start` wrote to `$RAY_TMPDIR/ray/ray_current_cluster`) and the run
    plays its episodes there, with the records of a local run and a resume line that joins it again. The cluster is
    then stopped by its processes' pids; nothing is left."""
    mark = f"PWAB_RAY_TEST_{uuid.uuid4().hex}"
    env = os.environ | ray_env | {mark: "1"}
    env.pop("RAY_ADDRESS", None)
    cfg = RunConfig(method="rules", data="default", limit=6, sample="stratified")
    try:
        for attempt in range(3):      # a node that does not register in Ray's fixed 30 s (a loaded machine): again
            r = subprocess.run([str(BIN.parent/"ray"), "start", "--head", "--node-ip-address", "127.0.0.1",
                                "--port", str(_free_port()), "--dashboard-agent-listen-port", str(_free_port()),
                                "--num-cpus", "2", "--include-dashboard", "false", "--disable-usage-stats",
                                "--object-store-memory", str(256 * 2**20)], capture_output=True, text=True, env=env,
                               timeout=300)
            if r.returncode == 0 or attempt == 2: break
            _stop_by_pid(mark)
        assert r.returncode == 0, r.stdout + r.stderr
        assert (Path(ray_env["RAY_TMPDIR"])/"ray"/"ray_current_cluster").exists()
        r = subprocess.run([str(BIN), "run", "rules", "--data", "default", "--limit", "6", "--sample", "stratified",
                            "--out-dir", str(tmp_path/"ray"), "--no-progress", "--executor", "ray",
                            "--address", "auto"],
                           capture_output=True, text=True, env=env, timeout=600)
        assert r.returncode == 0, r.stderr
        assert re.search(r"ray 2\.\d+\.\d+: joined at auto, 1 node, 2 CPUs", r.stderr), r.stderr
        assert _resume_line(r.stderr)[-4:] == ["--executor", "ray", "--address", "auto"]
    finally:
        _stop_by_pid(mark)
    _wait_gone(mark, "after the cluster was stopped")
    there = records(tmp_path/"ray"/cfg.name)
    here = records(run(cfg, out_dir=tmp_path/"local", progress=False).dir)
    assert len(there) == 6 and all(x["worker"].startswith("ray-") for x in there)
    assert (d := same_records(here, there)) is None, d


def test_missing_ray_or_cluster_is_one_line_exit_2(ray_env, monkeypatch, tmp_path):
    "Ray not installed, or an address where no cluster answers: one line naming what to do, exit 2, nothing run."
    def runs(*args):
        r = CliRunner().invoke(app, ["run", "rules", "--data", "tiny", "--out-dir", str(tmp_path), *args])
        return r.exit_code, r.output.strip().splitlines()
    code, lines = runs("--executor", "ray", "--address", "127.0.0.1:1")
    assert code == 2 and len(lines) == 1 and "no Ray cluster answers there" in lines[0], lines
    code, lines = runs("--address", "127.0.0.1:1")
    assert code == 2 and len(lines) == 1 and "needs --executor ray" in lines[0], lines
    monkeypatch.setitem(sys.modules, "ray", None)          # `import ray` fails as where it is not installed
    code, lines = runs("--executor", "ray")
    assert code == 2 and len(lines) == 1 and "pip install 'personalwab[ray]'" in lines[0], lines
    with pytest.raises(UsageError): executor_of("ray")
    assert not any(tmp_path.iterdir())
