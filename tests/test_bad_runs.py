"""Bad input never ends a run (issue #14, runtime half).

- A real local model (the project's tiny Llama on the `hf` backend) whose decoded text gets lone
  UTF-16 surrogates at the one point where model text enters the system: the run finishes, every
  record is written, the LLM cache (on) stores the answers, and a resume reproduces the result.
- Hostile actions (lone surrogates in queries, reviews and respond) never make `WebEnv.step` raise.
- One bad line in results.jsonl, or a half-written summary/env/config file, does not block score,
  view or resume.
- The CLI ends mistakes with one line and exit status 2 (usage) or 1 (data/disk), before a run
  folder exists; a disk that refuses the write ends the run with one line naming the file.
- Ctrl-C (SIGINT) and SIGTERM stop a real run (default pyserini engine) promptly, exit 130/143,
  say how many tasks are done and how to resume; the resume completes.
"""
import json, os, re, resource, shlex, signal, subprocess, sys, time
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st
from typer.testing import CliRunner

from personalwab.cli import app
from personalwab.data.load import load_benchmark
from personalwab.env.environment import Action, StepResult, WebEnv
from personalwab.llm.base import register_backend
from personalwab.llm.cache import ResponseCache
from personalwab.llm.hf import HFLLM, tiny_model_path
from personalwab.run.runner import RunConfig, load_results, read_jsonl, run, score, view
from personalwab.llm.toolcalls import parse_tool_call

B = load_benchmark(progress=False)
EXE = str(Path(sys.executable).parent/"personalwab")
LONE = ["\ud800", "\udbff", "\udc00", "\udfff"]


# --- 1. a model that emits lone surrogates -------------------------------------------------------

class SurrogateLLM(HFLLM):
    """The tiny Llama, generating for real; its decoded text then gets lone surrogates (raw, and as a
    `\\ud800` escape inside a tool call's JSON) before anything else sees it: the only injection point."""
    def _generate(self, convs, tools, params):
        out = super()._generate(convs, tools, params)
        for conv, comps in zip(convs, out):
            text = "\n".join(str(m.get("content")) for m in conv)
            multi, asked = "You may talk with the user" in text, sum(m["role"] == "assistant" for m in conv)
            for c in comps:
                real = c.text.replace('"', "'").replace("\\", "")[:40]
                if not tools:                                            # the user simulator
                    c.text = f"{real} \udfff I want \ud800 that"
                elif multi and asked == 0:                               # multi-turn, first step: a question
                    c.text = f"Which one \ud800 do you like? {real}"
                elif multi:
                    c.text = '{"name": "search_product_by_query", "arguments": {"query": "%s \\udfff"}}' % real
                else:
                    fn, arg = (("add_product_review", "review") if "Here is the product information" in text
                               else ("search_product_by_query", "query"))
                    c.text = '{"name": "%s", "arguments": {"%s": "%s \\ud800 water bottle \\udc00"}} \udbff' % (fn, arg, real)
                c.tool_call, c.error = parse_tool_call(c.text, tools) if tools else (None, None)
        return out


@pytest.fixture(scope="module")
def surrogate_cache(tmp_path_factory):
    cache = ResponseCache(tmp_path_factory.mktemp("llm-cache"))
    register_backend("surrogate", lambda **kw: SurrogateLLM(tiny_model_path(), name="tiny-surrogate", cache=cache, **kw))
    return cache


# a search, a recommendation, and the review whose prompt is shortest (the tiny model's context is 2,048 tokens)
TASK_IDS = [next(t.id for t in B.split("test") if t.type == k) for k in ("search", "recommend")] + [
    min((t for t in B.split("test") if t.type == "review"), key=lambda t: len(t.target.product_info.model_dump_json())).id]
SAME = ["task_id", "trial", "status", "function_acc", "result_acc", "steps", "rewards", "actions", "observations", "error"]


@pytest.mark.timeout(900)
@pytest.mark.parametrize("track", ["single", "multi"])
def test_lone_surrogates_run_finishes_and_resumes(tmp_path, surrogate_cache, track):
    cfg = RunConfig(method="no_memory", track=track, agent_llm="surrogate", user_llm="surrogate", max_steps=3,
                    task_ids=TASK_IDS,
                    params={"max_tokens": 16}, env_params={"engine": "bm25s"})
    full = run(cfg, out_dir=tmp_path/"a", progress=False, benchmark=B)
    assert (full.ran, full.errors) == (3, 0), load_results(full.dir)["error"].tolist()
    recs = read_jsonl(full.dir/"results.jsonl")
    assert len(recs) == 3 and all(r["status"] == "ok" for r in recs)
    text = (full.dir/"results.jsonl").read_text(encoding="utf-8")
    assert "\ufffd" in text                                           # the surrogates reached the record, made encodable
    assert len(surrogate_cache) > 0                                   # and the cache stored the answers
    args = [a["arguments"] for r in recs for a in r["actions"] if a["name"] in ("search_product_by_query", "add_product_review")]
    assert args and all("\ufffd" in json.dumps(a, ensure_ascii=False) for a in args)
    if track == "single":
        review = next(r for r in recs if r["type"] == "review")
        assert review["rewards"][0][0] == 1.0 and review["rewards"][0][1] > 0.0   # scored by the real MiniLM as usual

    # resume: keep only the first record, run again (a fresh directory copy), same result task by task
    part = tmp_path/"b"/full.dir.name; part.mkdir(parents=True)
    (part/"results.jsonl").write_text(text.splitlines(keepends=True)[0], encoding="utf-8")
    resumed = run(cfg, out_dir=tmp_path/"b", progress=False, benchmark=B)
    assert (resumed.ran, resumed.skipped, resumed.errors) == (2, 1, 0)
    a = load_results(full.dir)[SAME].sort_values("task_id").reset_index(drop=True)
    b = load_results(resumed.dir)[SAME].sort_values("task_id").reset_index(drop=True)
    assert a.to_dict("records") == b.to_dict("records")
    assert resumed.summary["scores"] == full.summary["scores"]


# --- 2. hostile actions never make step raise ----------------------------------------------------

@pytest.fixture(scope="module")
def envs():
    from personalwab.llm.base import get_llm
    from personalwab.env.metrics import get_review_scorer
    from personalwab.env.sasrec import get_recommender
    from personalwab.env.search import get_searcher
    from personalwab.env.simulator import UserSimulator
    s, r, sc = get_searcher(B, "bm25s"), get_recommender(B), get_review_scorer()
    return {"single": WebEnv(B, "single", 4, s, r, review_scorer=sc),
            "multi": WebEnv(B, "multi", 4, s, r, simulator=UserSimulator(get_llm("tiny", cache=False), B, max_tokens=4), review_scorer=sc)}


lone_text = st.lists(st.sampled_from(LONE) | st.text(max_size=6), min_size=1, max_size=8).map("".join)
hostile = st.sampled_from(["search_product_by_query", "add_product_review", "respond", "get_product_details_by_asin"]).flatmap(
    lambda n: st.builds(lambda v, k: Action(n, {k: v}), lone_text | st.just("{" * 3000),
                        st.sampled_from({"search_product_by_query": ["query"], "add_product_review": ["review"],
                                         "respond": ["content"], "get_product_details_by_asin": ["product_asin"]}[n]))
) | lone_text.map(lambda s: {"name": s, "arguments": s}) | lone_text.map(lambda s: {"name": "add_product_review", "arguments": '{"review": "' + s.replace('"', "") + '"}'})


@settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
@given(track=st.sampled_from(["single", "multi"]), task=st.sampled_from(B.split("test")[:20]), actions=st.lists(hostile, min_size=1, max_size=3))
def test_step_never_raises_on_surrogates(envs, track, task, actions):
    env = envs[track]
    env.reset(task)
    for a in actions:
        r = env.step(a)
        assert isinstance(r, StepResult) and isinstance(r.observation, str)
        r.observation.encode("utf-8")
        if r.done: break
    json.dumps(env.episode().to_dict(), ensure_ascii=False).encode("utf-8")


# --- 3. bad lines and half-written files do not block score, view, resume ------------------------

def _oracle_run(out: Path):
    return run(RunConfig(method="oracle", limit=6, env_params={"engine": "bm25s"}), out_dir=out, progress=False, benchmark=B)


def test_bad_lines_and_torn_files_are_skipped_and_rebuilt(tmp_path):
    res = _oracle_run(tmp_path)
    p = res.dir/"results.jsonl"
    good = p.read_text()
    with open(p, "a") as f:
        f.write('{"status": "ok", "function_acc": 1}\n')                                   # no task_id
        f.write('{"task_id": "test-00000", "trial": 0, "status": "ok", "function_acc": "1", "result_acc": 1}\n')  # non-numeric
        f.write('{"task_id": "test-00000", "trial": "zero", "status": "ok"}\n')            # bad trial
        f.write('["not", "a", "record"]\n')
    (res.dir/"summary.json").write_text('{"run": "x", "scores": {"overall"')                # half-written
    (res.dir/"env.json").write_text('{"invocations": [{"time"')
    with pytest.warns(UserWarning, match="line 7 skipped: no task_id"):
        s = score(res.dir)
    assert s["scores"] == res.summary["scores"] and json.loads((res.dir/"summary.json").read_text())["finished"] == 6  # rebuilt
    (res.dir/"summary.json").write_text("{")
    (res.dir/"config.json").write_text('{"name": ')
    with pytest.warns(UserWarning, match="summary.json: unreadable summary"):
        txt = view(res.dir, file=open(os.devnull, "w"))
    assert "6" in txt and json.loads((res.dir/"summary.json").read_text())["finished"] == 6
    r = CliRunner().invoke(app, ["score", str(res.dir)])
    assert r.exit_code == 0 and "overall" in r.stdout
    r = CliRunner().invoke(app, ["view", str(res.dir)])
    assert r.exit_code == 0
    with pytest.warns(UserWarning, match="env.json: unreadable environment record"):
        again = _oracle_run(tmp_path)                                                      # resume
    assert again.ran == 0 and again.summary["finished"] == 6 and again.summary["complete"]
    assert len(json.loads((res.dir/"env.json").read_text())["invocations"]) == 1
    assert p.read_text().startswith(good)                                                  # nothing rewritten


# --- 4. CLI errors: one line, exit 2 (usage) or 1 (data/disk), no run folder --------------------

@pytest.mark.parametrize("args, code, needle", [
    (["run", "no_memroy", "--data", "tiny"], 2, "unknown method 'no_memroy'"),
    (["run", "--method", "reacct", "--data", "tiny"], 2, "unknown method 'reacct'"),
    (["run", "no_memory", "--agent-llm", "smolm2", "--data", "tiny"], 2, "agent_llm: unknown LLM backend 'smolm2'"),
    (["run", "oracle", "--track", "multi", "--user-llm", "opnai:gpt", "--data", "tiny"], 2, "user_llm: unknown LLM backend 'opnai'"),
    (["run", "oracle", "--data", "/nonexistent/bench"], 2, "no benchmark folder at /nonexistent/bench"),
    (["run", "oracle", "--data", "tiny", "--task-id", "test-99999"], 2, "test-99999"),
    (["run", "oracle", "--data", "tiny", "--workers", "0"], 2, "workers: Input should be greater than or equal to 1"),
    (["run", "oracle", "--data", "tiny", "--track", "dual"], 2, "track: Input should be 'single' or 'multi'"),
    (["run", "oracle", "--data", "tiny", "-p", "oops"], 2, "--param: expected key=value"),
])
def test_cli_run_errors(tmp_path, args, code, needle):
    r = CliRunner().invoke(app, args + ["--out-dir", str(tmp_path/"runs"), "--no-progress"])
    assert r.exit_code == code, r.output
    if needle:
        assert needle in r.stderr and len(r.stderr.strip().splitlines()) == 1 and "Traceback" not in r.output
        assert not (tmp_path/"runs").exists()


@pytest.mark.parametrize("content, needle", [
    (None, "no such file"),
    ("method: oracle\nlimit: [1\n", "not valid YAML at line 3"),
    ("method: oracle\nlimt: 3\n", "limt: Extra inputs are not permitted"),
    ("- oracle\n", "expected a mapping of RunConfig fields"),
    ("method: oracle\ntemperature: -1\n", "temperature: Input should be greater than or equal to 0"),
])
def test_cli_config_errors(tmp_path, content, needle):
    cf = tmp_path/"run.yaml"
    if content is not None: cf.write_text(content)
    r = CliRunner().invoke(app, ["run", "--config", str(cf), "--out-dir", str(tmp_path/"runs")])
    assert r.exit_code == 2 and needle in r.stderr and str(cf) in r.stderr, r.output
    assert len(r.stderr.strip().splitlines()) == 1 and not (tmp_path/"runs").exists()


def test_cli_unwritable_out_dir_and_missing_paths(tmp_path):
    (tmp_path/"file").write_text("x")
    r = CliRunner().invoke(app, ["run", "oracle", "--data", "tiny", "--out-dir", str(tmp_path/"file"/"runs"), "--no-progress"])
    assert r.exit_code == 1 and "Not a directory" in r.stderr and str(tmp_path/"file") in r.stderr
    for cmd in (["score", str(tmp_path/"nope")], ["view", str(tmp_path/"nope"), str(tmp_path/"file")]):
        r = CliRunner().invoke(app, cmd)
        assert r.exit_code == 2 and "nope" in r.stderr and len(r.stderr.strip().splitlines()) == 1


def test_cli_puma_config_errors(tmp_path):
    cases = [("sft:\n  learning_rate: -0.01\n", "learning_rate must be > 0"), ("dpo:\n  epochs: -2\n", "epochs must be > 0"),
             ("candidates:\n  batch_size: 0\n", "batch_size must be > 0"), ("merge:\n  dtype: int3\n", "dtype must be one of"),
             ("sft:\n  lora_dropout: 1.5\n", "lora_dropout must be < 1"), ("sfft:\n  epochs: 1\n", "sfft: Extra inputs"),
             ("sft: [\n", "not valid YAML at line 2")]
    for text, needle in cases:
        cf = tmp_path/"p.yaml"; cf.write_text(text)
        r = CliRunner().invoke(app, ["puma", "sft", "--config", str(cf)])
        assert r.exit_code == 2 and needle in r.stderr and len(r.stderr.strip().splitlines()) == 1, (text, r.output)
    r = CliRunner().invoke(app, ["puma", "sft", "--config", str(tmp_path/"missing.yaml")])
    assert r.exit_code == 2 and "no such file" in r.stderr
    r = CliRunner().invoke(app, ["puma", "tune"])
    assert r.exit_code == 2 and "unknown stage 'tune'" in r.stderr


def test_full_disk_ends_run_with_one_line(tmp_path):
    """A real write limit: RLIMIT_FSIZE (SIGXFSZ ignored) makes the kernel refuse to grow any file past 12 kB,
    as a full disk refuses; results.jsonl reaches it after a few records."""
    def limit():
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (12_000, 12_000))
    cf = tmp_path/"run.yaml"; cf.write_text("method: oracle\nlimit: 40\nenv_params: {engine: bm25s}\n")
    r = subprocess.run([EXE, "run", "--config", str(cf), "--out-dir", str(tmp_path), "--no-progress"],
                       capture_output=True, text=True, preexec_fn=limit, timeout=600)
    err = [l for l in r.stderr.splitlines() if not l.startswith("warning:")]
    assert r.returncode == 1, r.stderr[-3000:]
    assert len(err) == 1 and "results.jsonl" in err[0] and "File too large" in err[0] and "Traceback" not in r.stderr, r.stderr[-3000:]


# --- 5. Ctrl-C and SIGTERM -----------------------------------------------------------------------

def _lines(d: Path) -> int: return sum(f.read_bytes().count(b"\n") for f in d.glob("*/results.jsonl"))


@pytest.mark.timeout(900)
@pytest.mark.parametrize("sig, code, as_timeout", [(signal.SIGINT, 130, False), (signal.SIGTERM, 143, False), (signal.SIGTERM, 143, True)])
def test_signal_stops_run_promptly_and_resume_completes(tmp_path, sig, code, as_timeout):
    "as_timeout: the signal as `timeout -s TERM` sends it, to the command and then to its process group (the command gets it twice)."
    n = 30
    cmd = [EXE, "run", "oracle", "--limit", str(n), "--param", "pause_s=0.5", "--out-dir", str(tmp_path), "--no-progress"]
    # a shell's background job ignores SIGINT; the child gets the default disposition, as in a terminal
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=as_timeout,
                         preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    deadline = time.time() + 600
    while _lines(tmp_path) < 1:
        assert p.poll() is None and time.time() < deadline, "the run ended before its first record"
        time.sleep(0.1)
    t0 = time.perf_counter(); p.send_signal(sig)
    if as_timeout: os.killpg(p.pid, sig)
    out, err = p.communicate(timeout=120)
    took = time.perf_counter() - t0
    print(f"{signal.Signals(sig).name}: exit {p.returncode} after {took:.2f} s")
    assert p.returncode == code and took < 30, (p.returncode, took, err[-2000:])
    m = re.search(r"interrupted \((Ctrl-C|SIGTERM)\): (\d+) of (\d+) tasks done, .*; resume with: (.+)$", err.strip())
    assert m and int(m[3]) == n and int(m[2]) == _lines(tmp_path) >= 1 and "Traceback" not in err, err[-2000:]
    resume = shlex.split(m[4]); assert resume[:2] == ["personalwab", "run"]
    r = subprocess.run([EXE, *resume[1:], "--no-progress"], capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr[-2000:]
    recs = read_jsonl(next(tmp_path.glob("*/results.jsonl")))
    assert sorted({x["task_id"] for x in recs if x["status"] == "ok"}) == [t.id for t in B.split("test")[:n]]


# --- 6. every local model call has a wall-clock bound ---------------------------------------------

def test_simulator_reply_is_time_bounded(tmp_path):
    from personalwab.llm.base import get_llm
    from personalwab.env.simulator import UserSimulator
    llm = get_llm("tiny", cache=ResponseCache(tmp_path), max_time_s=0.01)   # the real tiny model, a tiny bound
    from personalwab.data.schema import tiny_benchmark
    tb = tiny_benchmark()                                                   # short profiles: the prompt fits the tiny context
    sim = UserSimulator(llm, tb, max_tokens=600)
    sim.start(tb.split("test")[0])
    t0 = time.perf_counter()
    reply = sim.reply("What colour do you want?")
    assert reply == "(The user does not answer.)" and sim.errors[0].startswith("TimeoutError: generation stopped after")
    assert time.perf_counter() - t0 < 60 and len(llm.cache) == 0                    # a cut answer is never cached
    assert get_llm("tiny", cache=False).max_time_s == 300.0                        # the default bound


@pytest.mark.timeout(600)
def test_episode_with_a_cut_call_is_an_error_and_redone_on_resume(tmp_path):
    "A generation the clock cut depends on the machine's load, not on the model: the episode is an error record, computed again on resume."
    from personalwab.env.resources import shared_llm
    register_backend("clocked", lambda **kw: HFLLM(tiny_model_path(), name="tiny-clocked", cache=False, max_time_s=1e-4, **kw))
    cfg = RunConfig(method="no_memory", track="single", agent_llm="clocked", task_ids=TASK_IDS[:2],
                    params={"max_tokens": 16}, env_params={"engine": "bm25s"})
    cut = run(cfg, out_dir=tmp_path, progress=False, benchmark=B)
    assert (cut.ran, cut.errors) == (2, 2)
    recs = read_jsonl(cut.dir/"results.jsonl")
    assert all(r["status"] == "error" and r["error"].startswith("EpisodeTimedOut: 1 model call(s) cut") for r in recs), [r["error"] for r in recs]
    shared_llm("clocked").max_time_s = 300.0                                 # a machine with time to spare: the same run resumes
    done = run(cfg, out_dir=tmp_path, progress=False, benchmark=B)
    assert (done.ran, done.skipped, done.errors) == (2, 0, 0), load_results(done.dir)["error"].tolist()
    latest = {r["task_id"]: r for r in read_jsonl(done.dir/"results.jsonl")}
    assert all(r["status"] == "ok" and r["attempt"] == 2 for r in latest.values())
    assert not any(u.get("timed_out") for r in latest.values() for u in r["usage"])   # finished calls keep their record shape


# --- 7. property tests: parsers and result files ---------------------------------------------------

@settings(max_examples=80, deadline=None)
@given(st.one_of(st.integers(33, 3000).map(lambda n: "[" * n + "]" * n), st.integers(4301, 12000).map(lambda n: '{"k": ' + "9" * n + "}"),
                 st.lists(st.sampled_from(LONE + ['"', "{", "}", "query", ":", " "]), max_size=40).map("".join)),
       st.sampled_from(["search_product_by_query", "respond", ""]))
def test_parse_react_never_raises(args, name):
    from personalwab.agents.baselines import parse_react
    act, err = parse_react(f"Thought: x\nAction: {name}\nArguments: {args}")
    assert (act is None) != (err is None)
    if act is not None: json.dumps(act.arguments, ensure_ascii=False).encode("utf-8")


json_leaf = st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=5) | st.sampled_from(LONE)
record_ish = st.fixed_dictionaries({}, optional={"task_id": json_leaf | st.sampled_from(["test-00000", "test-00001"]), "trial": json_leaf,
                                                  "status": st.sampled_from(["ok", "error"]) | json_leaf, "function_acc": json_leaf,
                                                  "result_acc": json_leaf, "steps": json_leaf, "cost_usd": json_leaf, "wall_s": json_leaf})


@settings(max_examples=80, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.lists(record_ish.map(lambda d: json.dumps(d)) | st.text(max_size=20).map(lambda s: s.replace("\n", " ")), max_size=12))
def test_any_results_file_scores_and_views(tmp_path_factory, lines):
    import warnings
    d = tmp_path_factory.mktemp("run")
    (d/"results.jsonl").write_text("".join(l + "\n" for l in lines), encoding="utf-8", errors="surrogatepass")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        s = score(d, n_boot=20)
        view(d, file=open(os.devnull, "w"))
    assert s["finished"] + s["errors"] <= len(lines)
