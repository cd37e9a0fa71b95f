"""The model web agents run for real: SmolLM2 on one task of each type of the default benchmark through `run_web`
(three memories and ReAct's thoughts), and `personalwab run METHOD --interface web` on the tiny benchmark with the tiny
Llama (a prompted, a ReAct, the fine-tuned and a planner method: the rules), as a user runs them."""
import json, os, subprocess, sys
from pathlib import Path
import pytest
from personalwab.run.config import RunConfig

BIN = Path(sys.executable).parent/"personalwab"
TASKS = ["test-00000", "test-00028", "test-00001"]          # a search, the shortest recommendation, a review

def records(d: Path) -> list[dict]: return [json.loads(l) for l in (d/"results.jsonl").read_text().splitlines()]

def check(rec: dict, steps: int) -> None:
    "A finished web record: its page steps, one logged agent call per page step, and the step scores on the gold trajectory."
    assert rec.get("error") is None and rec["interface"] == "web", rec.get("error")
    assert 1 <= len(rec["page_steps"]) <= steps and all(s["url"] and s["dom_tokens"] > 0 for s in rec["page_steps"])
    counted = [u for u in rec["usage"] if u.get("role") == "agent" and u.get("counted") is not False]
    assert len(counted) == len(rec["page_steps"]) and all(u["prompt_tokens"] > 0 for u in counted)
    m = rec["step_metrics"]
    assert m["steps"] == len(rec["step_scores"]) >= 1 and all(0 <= m[k] <= 1 for k in ("element_acc", "op_f1", "step_sr"))

@pytest.mark.slow                                             # SmolLM2 reads ~1,500-token prompts: minutes on a shared CPU
@pytest.mark.xdist_group("web_agents_smollm2")
@pytest.mark.parametrize("method", ["no_memory", "relevant_memory", "puma_gpt", "react"])
def test_smollm2_on_pages(method, tmp_path):
    from personalwab.data.load import load_benchmark
    from personalwab.web.run import run_web
    b = load_benchmark(progress=False)
    cfg = RunConfig(method=method, agent_llm="smollm2", split="test", task_ids=TASKS, params={"max_tokens": 48, "step_eval_limit": 2, "memory_length": 5})
    r = run_web(cfg, tmp_path, progress=False, benchmark=b, budget=768, max_page_steps=2)
    assert (r.ran, r.errors) == (3, 0), [str(x.get("error"))[:600] for x in records(r.dir) if x.get("error")]
    recs = records(r.dir)
    assert sorted(x["task_id"] for x in recs) == sorted(TASKS)
    for rec in recs: check(rec, 2)
    if method == "relevant_memory": assert any(u.get("memory_fit", {}).get("given", 0) > 0 for x in recs for u in x["usage"])
    if method == "puma_gpt": assert all(any(u.get("purpose") == "function_identification" for u in x["usage"]) for x in recs)

def _run(*args, cwd):
    return subprocess.run([str(BIN), "run", *args], cwd=cwd, capture_output=True, text=True, timeout=600,
                          env=os.environ | {"PYTHONWARNINGS": "ignore"})

def test_cli_runs_model_agents_on_pages(tmp_path):
    from personalwab.llm.hf import tiny_model_path
    (tmp_path/"web.yaml").write_text("env_params: {engine: bm25s, max_page_steps: 2}\nparams: {max_tokens: 16}\n")
    for method, extra in (("no_memory", []), ("react", []), ("rules", []), ("scribe", ["--param", f"model={tiny_model_path()}"])):
        r = _run(method, "--interface", "web", "--data", "tiny", "--agent-llm", "tiny", "--config", str(tmp_path/"web.yaml"),
                 "--out-dir", str(tmp_path/"runs"), "--no-progress", *extra, cwd=tmp_path)
        assert r.returncode == 0, r.stderr[-3000:]
        (d,) = (tmp_path/"runs").glob(f"{method}-single-*")
        (rec,) = records(d)
        if method == "rules":                                 # a planner: one logged call per function call, not per page step
            assert rec.get("error") is None and rec["step_metrics"]["steps"] >= 1 and all(s["ok"] for s in rec["page_steps"])
        else: check(rec, 2)
    env = json.loads(next((tmp_path/"runs").glob("scribe-single-*/env.json")).read_text())
    assert str(tiny_model_path()) in json.dumps(env)

@pytest.mark.parametrize("args,why", [(["nonesuch"], "no web agent for method 'nonesuch'"),
                                      (["no_memory", "--param", "memroy_length=3"], "params.memroy_length: no such parameter"),
                                      (["no_memory", "--agent-llm", "smolm2"], "agent_llm: unknown LLM backend 'smolm2'"),
                                      (["scribe", "--param", "model=/nowhere/final"], "params.model: no model at /nowhere/final"),
                                      (["no_memory", "--estimate"], "--estimate covers the function track only")])
def test_cli_web_usage_errors_are_one_line(args, why, tmp_path):
    r = _run(*args, "--interface", "web", "--data", "tiny", "--out-dir", str(tmp_path), cwd=tmp_path)
    assert r.returncode == 2 and len(r.stderr.strip().splitlines()) == 1 and why in r.stderr, r.stderr
