"""Resume from what a run printed (issue 46, item 3).

- For every field of a run configuration (`RunConfig`), on both interfaces (functions; web with the in-process driver) and
  for the web settings in `env_params`: a run made with the field at a value other than its default, stopped by a real
  Ctrl-C (SIGINT to this process) while a task runs, then resumed with exactly the command it printed, is the same run
  (the same folder, the same `config.json`) and finishes with 0 errors, running only the tasks left.
- A run that ends with errored tasks exits with status 4 (`cli.RUN_ERRORS`) and its last line is the command that retries
  them; once the cause is gone (here: the agent's model folder was missing), that command finishes the run.
- `--interface`/`--driver` against what the file says: obeyed (another run, and one warning line), or one usage line.

Everything runs on the tiny benchmark in this process through typer's runner (the console script itself in one test);
no-LLM methods, the `tiny` LLM where a field needs one.
"""
import json, os, re, shlex, signal, subprocess, sys, threading
from pathlib import Path

import pytest
from typer.testing import CliRunner

from personalwab.run import runner
from personalwab.commands.errors import RUN_ERRORS
from personalwab.cli import app
from personalwab.llm.hf import tiny_model_path
from personalwab.data.official import write_official
from personalwab.run.config import RunConfig
from personalwab.run.runner import read_jsonl, resume_command
from personalwab.data.schema import tiny_benchmark
from personalwab.web.site import SITE_VERSION

BIN = Path(sys.executable).parent/"personalwab"
RESULTS = re.compile(r"results: (.+)/results\.jsonl  \(ran (\d+), skipped (\d+), errors (\d+)\)$")
DEFAULTS = RunConfig(method="oracle").model_dump()


@pytest.fixture
def ctrl_c(monkeypatch):
    """`ctrl_c(n)`: the run's first `n` tasks run; when the next one starts, a real SIGINT goes to this process (the main
    thread stops the run, as Ctrl-C in a terminal) and that task waits, unfinished, until the test ends."""
    real, lock, ended, state = runner._solve_one, threading.Lock(), threading.Event(), {"left": 0, "sent": False}
    def solve(*a, **k):
        with lock:
            run_it = state["left"] > 0; state["left"] -= 1
            send = not run_it and not state["sent"]; state["sent"] |= send
        if run_it: return real(*a, **k)
        if send: os.kill(os.getpid(), signal.SIGINT)
        if not ended.wait(60): raise RuntimeError("the SIGINT did not stop the run")   # the run goes on: the test fails
        raise KeyboardInterrupt                           # the run stopped; its future is no longer read
    def arm(n: int = 0): state.update(left=n, sent=False); monkeypatch.setattr(runner, "_solve_one", solve)
    def disarm(): monkeypatch.setattr(runner, "_solve_one", real)
    arm.disarm = disarm
    # an xdist worker (make test) ignores SIGINT, as a shell's background job does; Ctrl-C in a terminal meets Python's own
    # handler: given here, so that the SIGINT stops the run (ignored, the run went on and this test failed)
    old = signal.signal(signal.SIGINT, signal.default_int_handler)
    try: yield arm
    finally: ended.set(); signal.signal(signal.SIGINT, old)


def _cli(*args: str):
    r = CliRunner().invoke(app, list(args))
    assert "Traceback" not in r.output, r.output[-3000:]
    return r


def _printed_resume(stderr: str) -> tuple[list[str], int, int]:
    "The command an interrupted run printed (its last line), and how many of how many tasks it says are done."
    m = re.search(r"interrupted \(Ctrl-C\): (\d+) of (\d+) tasks done, results in .+; resume with: (.+)$", stderr.strip())
    assert m, stderr[-2000:]
    cmd = shlex.split(m[3])
    assert cmd[:2] == ["personalwab", "run"], cmd
    return cmd[1:], int(m[1]), int(m[2])


def _data_folder(tmp: Path) -> str:
    write_official(tiny_benchmark(), tmp/"bench")
    return str(tmp/"bench")


W = {"interface": "web"}                        # a configuration file's env_params for a web run
# field: (options, configuration file or None, the values the run's config.json must hold); the benchmark is tiny unless said
CASES = {
    "method": (["-m", "rules"], None, {"method": "rules"}),
    "track": (["oracle", "--track", "multi", "--user-llm", "tiny"], None, {"track": "multi"}),
    "split": (["oracle", "--split", "train"], None, {"split": "train"}),
    "agent_llm": (["no_memory", "--agent-llm", "tiny", "--max-steps", "2"], None, {"agent_llm": "tiny"}),
    "user_llm": (["oracle", "--track", "multi", "--user-llm", f"hf:{tiny_model_path()}"], None, {"user_llm": f"hf:{tiny_model_path()}"}),
    "model_version": (["oracle"], {"model_version": "v2"}, {"model_version": "v2"}),
    "temperature": (["oracle", "--temperature", "0.7"], None, {"temperature": 0.7}),
    "limit": (["oracle", "--limit", "1"], None, {"limit": 1}),
    "sample": (["oracle", "--sample", "stratified"], None, {"sample": "stratified"}),
    "task_ids": (["oracle", "--task-id", "test-00000"], None, {"task_ids": ["test-00000"]}),
    "workers": (["oracle", "--workers", "2", "--trials", "2"], None, {"workers": 2}),
    "seed": (["oracle", "--seed", "7"], None, {"seed": 7}),
    "trials": (["oracle", "--trials", "2"], None, {"trials": 2}),
    "memory_length": (["oracle", "--memory-length", "3"], None, {"memory_length": 3}),
    "max_steps": (["oracle", "--max-steps", "3"], None, {"max_steps": 3}),
    "params": (["oracle", "-p", "history=20"], None, {"params": {"history": 20}}),
    "env_params": (["oracle"], {"env_params": {"engine": "bm25s"}}, {"env_params": {"engine": "bm25s"}}),
    "data": (["oracle", "--data", "FOLDER"], None, {"data": "FOLDER"}),
}
WEB_CASES = {                                   # the web run's own settings, in its env_params
    "interface": (["oracle"], {"env_params": W}, {}),
    "driver": (["oracle", "--driver", "inprocess"], {"env_params": W}, {"driver": "inprocess"}),
    "site": (["oracle"], {"env_params": W | {"site": SITE_VERSION}}, {"site": SITE_VERSION}),
    "budget": (["oracle"], {"env_params": W | {"budget": 2048}}, {"budget": 2048}),
    "max_page_steps": (["oracle"], {"env_params": W | {"max_page_steps": 20}}, {"max_page_steps": 20}),
    "repeat_limit": (["oracle"], {"env_params": W | {"repeat_limit": 3}}, {"repeat_limit": 3}),
}
PARAMS = ([pytest.param(f, "functions", id=f"functions-{f}") for f in CASES] + [pytest.param(f, "web", id=f"web-{f}") for f in CASES]
          + [pytest.param(f, "web-settings", id=f"web-{f}-setting") for f in WEB_CASES])


@pytest.mark.timeout(300)
@pytest.mark.parametrize("field, interface", PARAMS)
def test_resume_with_the_printed_command(tmp_path, ctrl_c, field, interface):
    args, file, want = (WEB_CASES if interface == "web-settings" else CASES)[field]
    folder = _data_folder(tmp_path) if field == "data" else None
    args = [folder if a == "FOLDER" else a for a in args]
    want = {k: folder if v == "FOLDER" else v for k, v in want.items()}
    opts = [*args, "--out-dir", str(tmp_path/"runs"), "--no-progress"] + ([] if "--data" in args else ["--data", "tiny"])
    if interface == "web": opts += ["--interface", "web"]
    if file: (tmp_path/"run.json").write_text(json.dumps(file)); opts += ["--config", str(tmp_path/"run.json")]
    trials = 2 if "--trials" in args else 1
    first = trials - 1 if "--workers" not in args else 0  # one worker, two trials: the first is done before the stop

    ctrl_c(first)
    r = _cli("run", *opts)
    assert r.exit_code == 130, r.output[-3000:]
    cmd, done, total = _printed_resume(r.stderr)
    assert (done, total) == (first, trials), r.stderr
    (d,) = (tmp_path/"runs").iterdir()
    before = json.loads((d/"config.json").read_text())
    cfg, env = before["config"], before["config"]["env_params"]
    web = interface != "functions"
    assert (env.get("interface") == "web") == web and (env.get("driver") == "inprocess") == web, env
    got = {k: cfg[k] if k in cfg else env[k] for k in want}           # a field, or a web setting in env_params
    if "env_params" in want: got["env_params"] = {k: env.get(k) for k in want["env_params"]}
    assert got == want, (cfg, want)
    assert all(cfg[k] != DEFAULTS[k] for k in want if k in cfg), "not a value other than the default"

    ctrl_c.disarm()
    r = _cli(*cmd)                                       # exactly the command printed
    assert r.exit_code == 0 and "warning: --config" not in r.stderr, r.output[-3000:]
    m = RESULTS.search(r.stdout.strip())
    assert m and Path(m[1]) == d and (int(m[2]), int(m[3]), int(m[4])) == (total - done, done, 0), r.stdout[-1500:]
    assert [p.name for p in (tmp_path/"runs").iterdir()] == [d.name]                # the same folder: the same hash
    assert json.loads((d/"config.json").read_text()) == before                     # every field as the run had it
    recs = read_jsonl(d/"results.jsonl")
    assert len(recs) == total and all(x["status"] == "ok" for x in recs), [x.get("error") for x in recs]
    assert all((x.get("interface") == "web") == web for x in recs)


@pytest.mark.timeout(300)
def test_errored_run_exits_4_and_its_last_line_retries(tmp_path):
    "The console script itself: stdout and stderr into one stream, as `... 2>&1 | tee log` keeps them."
    model = tmp_path/"model"                             # the agent's model folder: not there yet, every task errors
    def sh(*args):
        return subprocess.run([str(BIN), *args], capture_output=False, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                              text=True, timeout=600, env=os.environ | {"PYTHONWARNINGS": "ignore"})
    r = sh("run", "no_memory", "--agent-llm", f"hf:{model}", "--max-steps", "2", "--data", "tiny",
           "--out-dir", str(tmp_path/"runs"), "--no-progress")
    (d,) = (tmp_path/"runs").iterdir()
    last = r.stdout.strip().splitlines()[-1]
    assert r.returncode == RUN_ERRORS == 4, r.stdout[-3000:]
    assert last == f"1 task ended in an error (the `error` of its record in results.jsonl); retry with: {resume_command(d)}", last
    assert "Traceback" not in r.stdout
    (rec,) = read_jsonl(d/"results.jsonl")
    assert rec["status"] == "error" and "no Hugging Face checkpoint" in rec["error"], rec
    model.symlink_to(tiny_model_path(), target_is_directory=True)                 # the cause fixed
    cmd = shlex.split(last.partition("retry with: ")[2])
    r = sh(*cmd[1:])
    assert r.returncode == 0, r.stdout[-3000:]
    assert [p.name for p in (tmp_path/"runs").iterdir()] == [d.name]
    assert RESULTS.search(r.stdout.strip()).groups()[1:] == ("1", "0", "0"), r.stdout[-1500:]
    assert [x["status"] for x in read_jsonl(d/"results.jsonl")] == ["error", "ok"]   # the error kept, the retry beside it


def test_errored_web_run_retries_on_its_pages(tmp_path):
    "The reported case: a web run's retry (its config.json) stays a web run; it ran every task into WebEnv's TypeError."
    model = tmp_path/"model"
    r = _cli("run", "no_memory", "--interface", "web", "--agent-llm", f"hf:{model}", "--max-steps", "2", "--data", "tiny",
             "--out-dir", str(tmp_path/"runs"), "--no-progress")
    assert r.exit_code == RUN_ERRORS, r.output[-3000:]
    cmd = shlex.split(r.stderr.strip().splitlines()[-1].partition("retry with: ")[2])
    model.symlink_to(tiny_model_path(), target_is_directory=True)
    r = _cli(*cmd[1:])
    assert r.exit_code == 0, r.output[-3000:]
    (d,) = (tmp_path/"runs").iterdir()
    recs = read_jsonl(d/"results.jsonl")
    assert [(x["status"], x.get("interface")) for x in recs] == [("error", None), ("ok", "web")], [x.get("error") for x in recs]
    assert "no Hugging Face checkpoint" in recs[0]["error"]


def test_interface_or_driver_against_the_file(tmp_path):
    out = ["--out-dir", str(tmp_path/"runs"), "--no-progress"]
    assert _cli("run", "oracle", "--interface", "web", "--data", "tiny", *out).exit_code == 0
    (web,) = (tmp_path/"runs").iterdir()
    r = _cli("run", "--config", str(web/"config.json"), "--interface", "functions", *out)   # obeyed: the function-track run
    assert r.exit_code == 0, r.output[-3000:]
    (fun,) = {p for p in (tmp_path/"runs").iterdir()} - {web}
    assert fun.name == RunConfig(method="oracle", data="tiny").name
    warn = [l for l in r.stderr.splitlines() if l.startswith("warning: --config")]
    assert warn == [f"warning: --config {web/'config.json'} is the run {web.name}; the options given make another run, "
                    f"{fun.name}; resume it with: {resume_command(web)}"], r.stderr
    for args, needle in [(["--config", str(fun/"config.json"), "--driver", "chromium"], "--driver chromium: a driver shows the shop's pages"),
                         (["--config", str(web/"config.json"), "--driver", "firefox"], "--driver must be one of inprocess, chromium")]:
        r = _cli("run", *args, *out)
        assert r.exit_code == 2 and needle in r.stderr and len(r.stderr.strip().splitlines()) == 1, r.output
    (tmp_path/"bad.yaml").write_text("method: oracle\ndata: tiny\nenv_params: {budget: 2048}\n")  # a web setting, no web
    r = _cli("run", "--config", str(tmp_path/"bad.yaml"), *out)
    assert r.exit_code == 2 and "env_params.budget: a setting of the web interface" in r.stderr, r.output
    assert len(list((tmp_path/"runs").iterdir())) == 2
