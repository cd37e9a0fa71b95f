"""Run identities survive the run-layer refactoring (issue #26) and the move into subpackages (issue 47).

The hashes below were computed by the code before the change (commit 7947f77); a run folder made
by that code (tests/fixtures/run_before_26: the oracle on the first 6 test tasks, bm25s search; the
last two records dropped and the fourth replaced by an error record, as a killed or failed run
leaves it) must resume after the change under the same name: the three missing or failed tasks
run, the others are reused, the old bytes stay a prefix of the file.
"""
import json, shutil
from pathlib import Path

import pytest

from personalwab.run.config import RunConfig, load_config_file
from personalwab.run.runner import run
from personalwab.run.records import latest_records, read_jsonl

PINNED = [  # (config, hash before #26)
    (dict(method="oracle"), "4992de8a94c0acdc6068d94aa25de506979808e7001fcc0031e0a0325b9e480f"),
    (dict(method="oracle", track="multi"), "8621f13b75b34b95ccd5f1eb4e9f27ebc49e08d2e22a31b6a0594df065be156e"),
    (dict(method="no_memory", track="single", limit=12, workers=2), "5d34ca2c82cfaef49fe5ee9d2704b1df00b47bacbd916a956d4497a7a99b68d4"),
    (dict(method="relevant_memory", track="multi", params={"k": 5, "mode": "x"}, env_params={"engine": "bm25s"}, memory_length=50),
     "9230a6a5694178af30dda556cb3be73887daa5d4da8bdb2af8ba279691c6ec97"),
    (dict(method="puma", track="single", agent_llm="hf:/models/puma", model_version="abc123", temperature=0.7, seed=7),
     "9d0015600c5964a7d26b9eb7664c6954f3b2905f4365a304da36c4f5da820064"),
    (dict(method="puma", track="multi", user_llm="scripted", model_version="abc123", max_steps=4, split="train", data="tiny"),
     "02878e03f729693b41955125a1923cb4e3985aba9748fd33767622fd0bc628db"),
    (dict(method="random_memory", track="single", user_llm="other-llm", trials=3, sample="stratified"),
     "ca08d681a5f23ca1913368961736273c9fbe3b59be70afb5df341135991c9731"),
]


@pytest.mark.parametrize("fields,h", PINNED)
def test_run_hashes_pinned(fields, h):
    cfg = RunConfig(**fields)
    assert cfg.hash == h
    assert cfg.name == f"{fields['method']}-{fields.get('track', 'single')}-{h[:8]}"


FIXTURE = Path(__file__).parent/"fixtures"/"run_before_26"/"oracle-single-3b0cc1da"
SCORES = {"test-00000": (1.0, 1.0), "test-00001": (1.0, 1.0), "test-00002": (1.0, 0.0),
          "test-00003": (1.0, 1.0), "test-00004": (1.0, 1.0), "test-00005": (1.0, 1.0)}


@pytest.mark.timeout(600)
def test_run_folder_before_26_resumes(tmp_path):
    d = tmp_path/FIXTURE.name
    shutil.copytree(FIXTURE, d)
    old = (d/"results.jsonl").read_bytes()
    cfg = RunConfig(**load_config_file(d/"config.json"))
    assert cfg.name == FIXTURE.name and cfg.hash == json.loads((FIXTURE/"config.json").read_text())["hash"]
    res = run(cfg, out_dir=tmp_path, progress=False)
    assert res.dir == d and (res.ran, res.skipped, res.errors) == (3, 3, 0)
    assert (d/"results.jsonl").read_bytes().startswith(old)
    recs = read_jsonl(d/"results.jsonl")
    assert [r["task_id"] for r in recs[4:]] and sorted(r["task_id"] for r in recs[4:]) == ["test-00003", "test-00004", "test-00005"]
    assert {r["task_id"]: (r["function_acc"], r["result_acc"]) for r in latest_records(recs)} == SCORES
    assert next(r for r in recs[4:] if r["task_id"] == "test-00003")["attempt"] == 2
    assert len(json.loads((d/"env.json").read_text())["invocations"]) == 2
    summary = json.loads((d/"summary.json").read_text())
    assert summary["complete"] and summary["finished"] == 6 and summary["run"] == FIXTURE.name
    assert json.loads((d/"config.json").read_text())["hash"] == cfg.hash
    assert not list(d.glob(".*.tmp"))


def test_the_published_plan_names_exactly_the_published_runs(tmp_path, monkeypatch):
    """The plan in configs/published.yaml yields exactly the run names under results/runs/ (issue 47: a refactoring that
    moves modules keeps every run's identity). PUMA's runs are named after its trained model, so its published pipeline is
    restored first (into a scratch runs folder) for `trained_puma` to find it."""
    from personalwab.core.config import results_dir
    from personalwab.evidence.plan import load_plan, plan_runs, trained_puma
    from personalwab.puma.publish import restore_puma
    from personalwab.reproduce.experiments import puma_config
    monkeypatch.setenv("PERSONALWAB_RUNS", str(tmp_path/"runs"))
    plan = load_plan()
    published = sorted(p.name for p in (results_dir()/"runs").iterdir() if (p/"run.json").exists())
    assert published, "no published runs in results/runs/"
    meta = restore_puma(puma_config(plan.puma_config, data=plan.data), log=lambda *a: None)
    assert meta is not None, "no published PUMA model in results/puma/"
    puma = trained_puma(plan)
    assert puma is not None, "the restored PUMA pipeline is not complete"
    planned = sorted({c.name for c, _ in plan_runs(plan, puma).values()})
    assert planned == published, (f"planned only: {sorted(set(planned) - set(published))}; "
                                  f"published only: {sorted(set(published) - set(planned))}")
