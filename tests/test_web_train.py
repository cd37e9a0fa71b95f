"""The specialised web agent's pipeline on the tiny configuration: every stage runs, resumes by configuration (a changed
SFT setting runs SFT, merge and gate again, not the examples), and the merged model runs as the `scribe` web method."""
import json
from pathlib import Path
import pytest
from personalwab.core.config import repo_root
from personalwab.web.train import WEB_STAGES, load_web_config, run_pipeline

def test_configs_load_and_match_the_evaluation():
    from personalwab.web.observation import DOM_BUDGET
    full = load_web_config(repo_root()/"configs/web/scribe-full.yaml")
    assert full.base_model == "smollm2" and full.prepare.limit is None and full.prepare.budget == DOM_BUDGET
    assert full.sft.max_length >= 8192 and full.gate.require_gain
    cpu = load_web_config(repo_root()/"configs/web/scribe.yaml")          # the one trained here: the web track's budget
    assert (cpu.prepare.per_type, cpu.prepare.steps_per_task, cpu.prepare.budget, cpu.gate.require_gain) == (40, 6, 1024, True)
    load_web_config(repo_root()/"configs/web/tiny.yaml")

@pytest.mark.slow                                             # a LoRA SFT loop, twice (about a minute)
def test_tiny_pipeline_resumes_and_serves_scribe(tmp_path):
    cfg = load_web_config(repo_root()/"configs/web/tiny.yaml", {"work_dir": str(tmp_path/"w")})
    logs = []
    first = run_pipeline(cfg, log=logs.append)
    assert first["prepare"]["examples"] >= 1 and first["sft"]["steps"] == cfg.sft.max_steps
    from safetensors.torch import load_file                   # the merged (and published) adapter is the SFT one in float16
    sft, merged = (load_file(str(cfg.dir(s)/"adapter"/"adapter_model.safetensors")) for s in ("sft", "merge"))
    assert sft.keys() == merged.keys() and all(v.dtype.itemsize == 2 and (v.float() - sft[k]).abs().max() < 1e-2 for k, v in merged.items())
    assert not any("skipped" in l for l in logs)
    logs.clear()
    again = run_pipeline(load_web_config(repo_root()/"configs/web/tiny.yaml", {"work_dir": str(tmp_path/"w"), "sft.max_steps": 2}), log=logs.append)
    skipped = [s for s in WEB_STAGES if any(l.startswith(f"[web] {s}: done already") for l in logs)]
    assert skipped == ["prepare"] and again["sft"]["steps"] == 2 and again["prepare"] == first["prepare"]
    from personalwab.run.config import RunConfig
    from personalwab.data.schema import tiny_benchmark
    from personalwab.web.run import run_web
    run = RunConfig(method="scribe", agent_llm="tiny", split="test", env_params={"engine": "bm25s"},
                    params={"model": str(cfg.final_model), "max_tokens": 16, "step_eval_limit": 1})
    r = run_web(run, tmp_path/"runs", progress=False, benchmark=tiny_benchmark(), max_page_steps=1)
    assert (r.ran, r.errors) == (1, 0)
    rec = json.loads((r.dir/"results.jsonl").read_text().splitlines()[0])
    assert len(rec["page_steps"]) == 1 and rec["step_metrics"]["steps"] == 1
    assert str(cfg.final_model) in json.dumps(json.loads((r.dir/"env.json").read_text()))

def test_command_line_runs_a_stage(tmp_path):
    import subprocess, sys
    cmd = [sys.executable, "-m", "personalwab.web.train"]
    r = subprocess.run([*cmd, "prepare", "--config", str(repo_root()/"configs/web/tiny.yaml"), "--set", f"work_dir={tmp_path}", "prepare.limit=1"],
                       capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr[-2000:]
    assert json.loads((tmp_path/"prepare"/"DONE.json").read_text())["metrics"]["tasks"] == 1 and "[web] prepare: finished" in r.stdout
    bad = subprocess.run([*cmd, "candidates"], capture_output=True, text=True, timeout=120)
    assert bad.returncode == 2 and "invalid choice: 'candidates'" in bad.stderr
