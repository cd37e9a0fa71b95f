"""End-to-end PUMA training on a tiny in-process Llama (configs/puma/tiny.yaml): prepare -> LoRA SFT ->
candidates scored in the real environment (BM25, SASRec, MiniLM) -> DPO -> merge, asserting that
something is really learned, not only that the plumbing runs:

* the SFT loss falls;
* the SFT model names the right function, in a parseable answer, on held-out test instructions
  (and far better than the untrained base);
* DPO's reward accuracy is above 0.5 and its loss moves;
* the merged model is a plain checkpoint the LLM layer serves as `hf:<path>`;
* a second run skips every finished stage.
"""
import json
import pytest

from personalwab.core.config import repo_root


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    from personalwab.puma.pipeline import load_config, run_pipeline
    cfg = load_config(repo_root()/"configs/puma/tiny.yaml", {"work_dir": str(tmp_path_factory.mktemp("puma"))})
    return cfg, run_pipeline(cfg)


def test_sft_learns(trained):
    cfg, res = trained
    sft = res["sft"]
    assert sft["steps"] == cfg.sft.max_steps and sft["loss_last"] < sft["loss_first"], sft
    logs = [json.loads(l) for l in (cfg.dir("sft")/"log_history.jsonl").read_text().splitlines()]
    assert sum("loss" in h for h in logs) >= 3


def test_sft_model_identifies_functions_on_held_out_tasks(trained):
    from personalwab.puma.pipeline import benchmark, base_model_path, sample_split
    from personalwab.puma.train import function_accuracy
    cfg, _ = trained
    test = sample_split(benchmark(cfg), "test", 45, seed=1)            # held out: the test split
    before = function_accuracy(base_model_path(cfg), test)
    after = function_accuracy(cfg.dir("sft")/"merged", test)
    assert after["parseable"] >= 0.9, after["predictions"][:5]
    assert after["overall"] >= 0.6 and after["overall"] > before["overall"] + 0.3, (before["overall"], after["overall"])


def test_dpo_prefers_chosen(trained):
    cfg, res = trained
    counts, dpo = res["candidates"], res["dpo"]
    assert counts["pairs"] > 0 and counts["pairs"] + counts["ties_dropped"] + counts["too_few_candidates"] == counts["instructions"]
    assert dpo["rewards/accuracies_mean"] > 0.5 and not dpo["loss_constant"], dpo
    rows = [json.loads(l) for l in (cfg.dir("candidates")/"dpo.jsonl").read_text().splitlines()]
    assert all(r["scores"][0] > r["scores"][1] and r["chosen"] != r["rejected"] for r in rows)


def test_final_model_served_and_resume(trained):
    from personalwab.llm.base import get_llm
    from personalwab.puma.pipeline import run_pipeline, STAGES
    cfg, res = trained
    assert res["merge"]["model"] == f"hf:{cfg.final_model}"
    assert not any("lora" in p.name for p in cfg.final_model.iterdir())
    c = get_llm(res["merge"]["model"], cache=False).chat([{"role": "user", "content": "Find me running shoes"}], max_tokens=8)[0]
    assert c.error is None
    logs = []
    run_pipeline(cfg, log=logs.append)
    assert len(logs) == len(STAGES) and all("skipped" in l for l in logs), logs


def test_stage_configs_match_all_yaml():
    "configs/puma/<stage>.yaml hold exactly the settings of all.yaml, so stage-by-stage and 'all' runs agree."
    from personalwab.puma.pipeline import STAGES, load_config
    root = repo_root()/"configs/puma"
    full = load_config(root/"all.yaml")
    for s in STAGES:
        part = load_config(root/f"{s}.yaml")
        assert getattr(part, s) == getattr(full, s), s
        assert (part.work_dir, part.data, part.base_model, part.seed) == (full.work_dir, full.data, full.base_model, full.seed), s
    for f in root.glob("*.yaml"): load_config(f)          # every config parses (unknown keys are errors)


def test_train_cfg_fields_are_train_params():
    "The training settings are declared once (puma_train.TrainSettings): the stage settings and the trainer parameters take them from there."
    from personalwab.puma.pipeline import DPOCfg, SFTCfg, TrainCfg
    from personalwab.puma.train import TrainParams, TrainSettings
    assert issubclass(TrainCfg, TrainSettings) and issubclass(TrainParams, TrainSettings) and "learning_rate" not in vars(TrainCfg).get("__annotations__", {})
    assert list(TrainCfg.model_fields) == list(TrainSettings.model_fields) == list(TrainParams.model_fields)[:-1]
    assert list(SFTCfg.model_fields)[-1] == "kinds" and list(DPOCfg.model_fields)[-1] == "beta"
    assert SFTCfg(lora_r=8).params(3) == TrainParams(lora_r=8, seed=3)
