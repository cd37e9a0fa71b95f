"""Tokens one SFT epoch of a PUMA recipe costs at two memory budgets: the recipe's own and the paper's 768.

Reads the parameter examples' labels from the recipe's finished `prepare` stage, rebuilds each training task's
parameter example at both budgets (the same memory retrieval and tokenizer as `prepare`), and prints the tokens of
the function and parameter examples. SFT time on a CPU is about proportional to these tokens (the published recipe's
SFT read 198,283 tokens in 1,605 s here). Usage:
    .venv/bin/python benchmarks/puma_budget_tokens.py [--config configs/puma/published.yaml] [--budget 768 --max-length 1024]
"""
from __future__ import annotations
import argparse, json


def main(argv=None):
    from personalwab.data.load import load_benchmark
    from personalwab.reproduce.experiments import puma_config
    from personalwab.puma.data import param_example, function_example, prompt_len, completion_len, _load_tok
    from personalwab.puma.pipeline import base_model_path
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--config", default="configs/puma/published.yaml")
    ap.add_argument("--budget", type=int, default=768); ap.add_argument("--max-length", type=int, default=1024)
    args = ap.parse_args(argv)
    pc = puma_config(args.config)
    tok, b = _load_tok(base_model_path(pc)), load_benchmark(pc.data, progress=False)
    labels = {r["id"]: r["completion"] for r in map(json.loads, open(pc.dir("prepare")/"param.jsonl"))}
    tasks = [t for t in b.split(pc.prepare.split) if t.id in labels]
    fn = sum(prompt_len(tok, function_example(t).prompt) + completion_len(tok, t.function) for t in tasks)
    for budget, mx in ((pc.prepare.token_budget, pc.prepare.max_length), (args.budget, args.max_length)):
        p = [param_example(b, t, labels[t.id], tok, pc.prepare.k, budget, mx, pc.prepare.max_completion_tokens).meta["tokens"] for t in tasks]
        print(f"budget {budget} (max_length {mx}): {len(p)} parameter examples, {sum(p):,} tokens (mean {sum(p)/len(p):.0f}); "
              f"function examples {fn:,} tokens; an epoch {sum(p) + fn:,} tokens")

if __name__ == "__main__": main()
