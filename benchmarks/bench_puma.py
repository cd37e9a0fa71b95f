"""Benchmark: PUMA training of the real offline model (SmolLM2-135M-Instruct) on a subset of the
default benchmark, and what it buys.

Runs the PUMA pipeline (prepare -> LoRA SFT -> candidates scored in the environment -> DPO ->
merge) with `--config` (default configs/puma/paper.yaml, the model `make reproduce` trains; add
`--set torch_threads=1` on a shared, oversubscribed CPU), then measures function-identification accuracy
of the untrained base, the SFT model and the final model on held-out *test* tasks:

* offline: greedy generation of the function prompt, parsed by the PUMA agent's parser
  (`puma.train.function_accuracy`);
* through the runner (unless `--no-runner`), single-turn track, method `puma`, agent LLM
  `smollm2` (untrained) vs `hf:<final>` (trained) — function and result accuracy per type,
  on the first `--runner-limit` of those tasks.

Records per stage wall time, SFT/DPO losses, seconds per step, DPO rewards/accuracies and
margins, pair counts, and the accuracies, as JSON (stdout and --out). Stages are resumable:
rerunning reuses finished stages. Usage:

    .venv/bin/python benchmarks/bench_puma.py [--config configs/puma/paper.yaml] [--eval-limit 60] [--runner-limit 30] [--no-runner]
"""
from __future__ import annotations
import argparse, json, os, time
from pathlib import Path

for k, v in {"HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1", "TOKENIZERS_PARALLELISM": "false"}.items():
    os.environ.setdefault(k, v)


def strip(d: dict) -> dict:
    return {k: v for k, v in d.items() if k != "predictions"}


def main(argv=None) -> dict:
    from personalwab.puma.pipeline import load_config, run_stage, STAGES, benchmark, base_model_path, sample_split
    from personalwab.puma.train import function_accuracy
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--config", default="configs/puma/paper.yaml")
    ap.add_argument("--set", nargs="*", default=[], help="config overrides key.sub=value")
    ap.add_argument("--eval-limit", type=int, default=60, help="held-out test tasks for function accuracy")
    ap.add_argument("--no-runner", dest="runner", action="store_false", help="skip the evaluation through the runner")
    ap.add_argument("--runner-limit", type=int, default=30, help="held-out test tasks evaluated through the runner")
    ap.add_argument("--max-tokens", type=int, default=64, help="parameter tokens the PUMA agent may generate in the runner")
    ap.add_argument("--eval-models", default="untrained,sft,puma", help="comma-separated subset of untrained,sft,puma for the offline measure")
    ap.add_argument("--out", default=None, help="JSON file for the figures (default: <work_dir>/bench.json)")
    a = ap.parse_args(argv)
    cfg = load_config(a.config, a.set)
    if cfg.torch_threads:
        import torch; torch.set_num_threads(cfg.torch_threads)
    out = {"config": a.config, "overrides": a.set, "stages": {}}
    for s in STAGES:
        t0 = time.time(); m = run_stage(cfg, s)
        out["stages"][s] = {"wall_s_this_call": round(time.time() - t0, 1), **m}
    b = benchmark(cfg)
    test = sample_split(b, "test", a.eval_limit, cfg.seed + 1)
    out["eval"] = {"tasks": len(test), "offline_function_accuracy": {}}
    models = [("untrained", base_model_path(cfg)), ("sft", str(cfg.dir("sft")/"merged")), ("puma", str(cfg.final_model))]
    for name, path in [m for m in models if m[0] in a.eval_models.split(",")]:
        t0 = time.time(); r = function_accuracy(path, test)
        out["eval"]["offline_function_accuracy"][name] = strip(r) | {"wall_s": round(time.time() - t0, 1), "examples": r["predictions"][:3]}
    if a.runner:
        from personalwab.run.runner import RunConfig, run
        ids = [t.id for t in test[:a.runner_limit]]
        out["eval"]["runner"] = {}
        for name, llm in [("untrained", cfg.base_model if cfg.base_model != "tiny" else f"hf:{base_model_path(cfg)}"), ("puma", f"hf:{cfg.final_model}")]:
            rc = RunConfig(method="puma", track="single", agent_llm=llm, task_ids=ids, data=cfg.data, params={"max_tokens": a.max_tokens, "token_budget": cfg.prepare.token_budget})
            t0 = time.time(); res = run(rc, progress=False)
            out["eval"]["runner"][name] = {"dir": str(res.dir), "summary": res.summary, "wall_s": round(time.time() - t0, 1)}
    path = Path(a.out) if a.out else cfg.root/"bench.json"
    path.write_text(json.dumps(out, indent=1, default=str))
    print(json.dumps(out, indent=1, default=str))
    return out


if __name__ == "__main__":
    main()
