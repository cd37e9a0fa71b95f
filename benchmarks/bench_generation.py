"""Generation throughput of the `hf` backend with SmolLM2-135M-Instruct on CPU.

    .venv/bin/python benchmarks/bench_generation.py [--prompts 8] [--max-tokens 32] [--runs 3] [--threads N] [--quick]

Measures tokens/s (generated tokens, up to and including EOS, divided by wall time; median of
`--runs`) through the project's own backend (`HFLLM.chat_many`, batched with left padding, cache
off) for the three decoding modes PUMA needs:

  greedy        n=1
  sample n=10   T=1.5, top-k 50, num_return_sequences=10
  beam 10       num_beams=10, num_return_sequences=10

and four model variants: fp32, bf16, fp32 + an unmerged LoRA adapter (PEFT, r=16, all-linear)
and fp32 with that adapter merged (`merge_and_unload`). The adapter is randomly initialised
(non-zero B), which costs the same compute as a trained one.

Timings depend heavily on machine load (2-4x jitter on a shared 2-core machine): compare rows of
one run, not numbers across machines. Nothing here asserts on time.
"""
import argparse, os, statistics, tempfile, time
from pathlib import Path

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

PROMPTS = ["Find me a waterproof hiking backpack under $80.",
           "I need wireless earbuds with long battery life for running.",
           "Recommend a good coffee grinder for espresso.",
           "Write a short review of the yoga mat I bought last month: it is thick and does not slip.",
           "What is a good gift for a teenager who likes video games?",
           "Search for a compact air fryer for a small kitchen.",
           "I want a stylish desk lamp with adjustable brightness.",
           "Suggest a durable phone case for an iPhone."]

MODES = {"greedy": dict(n=1),
         "sample n=10": dict(n=10, temperature=1.5, seed=0),
         "beam 10": dict(n=10, num_beams=10)}


def make_adapter(base: Path, out: Path) -> tuple[Path, Path]:
    "A random LoRA adapter for `base` (saved to out/adapter) and the merged checkpoint (out/merged)."
    import torch
    from peft import LoraConfig, get_peft_model
    from transformers import AutoModelForCausalLM, AutoTokenizer
    torch.manual_seed(0)
    m = AutoModelForCausalLM.from_pretrained(str(base), dtype=torch.float32)
    pm = get_peft_model(m, LoraConfig(r=16, lora_alpha=32, target_modules="all-linear", init_lora_weights=False, task_type="CAUSAL_LM"))
    pm.save_pretrained(str(out/"adapter"))
    merged = pm.merge_and_unload()
    merged.save_pretrained(str(out/"merged")); AutoTokenizer.from_pretrained(str(base)).save_pretrained(str(out/"merged"))
    return out/"adapter", out/"merged"


def bench(llm, convs, mode_kw, max_tokens, runs):
    rates, secs = [], []
    llm.chat_many(convs[:1], max_tokens=4, **{k: v for k, v in mode_kw.items() if k != "n"})  # warm-up
    for _ in range(runs):
        t0 = time.perf_counter()
        out = llm.chat_many(convs, max_tokens=max_tokens, **mode_kw)
        dt = time.perf_counter() - t0
        errs = [c.error for cs in out for c in cs if getattr(c, "failed", False)]
        if errs: raise RuntimeError(errs[0])
        toks = sum(c.usage.completion_tokens for cs in out for c in cs)
        rates.append(toks / dt); secs.append(dt)
    return statistics.median(rates), statistics.median(secs), toks


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--prompts", type=int, default=8)
    ap.add_argument("--max-tokens", type=int, default=32)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--threads", type=int, default=None, help="torch intra-op threads (default: torch's choice)")
    ap.add_argument("--quick", action="store_true", help="2 prompts, 16 tokens, 1 run")
    ap.add_argument("--variants", default="fp32,bf16,lora-unmerged,lora-merged")
    a = ap.parse_args()
    if a.quick: a.prompts, a.max_tokens, a.runs = 2, 16, 1
    import torch
    from tabulate import tabulate
    from personalwab.llm.hf import HFLLM, smollm2_path
    if a.threads: torch.set_num_threads(a.threads)
    base = smollm2_path()
    convs = [[{"role": "user", "content": p}] for p in (PROMPTS * 4)[:a.prompts]]
    variants = a.variants.split(",")
    tmp = Path(tempfile.mkdtemp(prefix="bench-lora-"))
    adapter = merged = None
    if any(v.startswith("lora") for v in variants): adapter, merged = make_adapter(base, tmp)
    make = {"fp32": lambda: HFLLM(base, cache=False),
            "bf16": lambda: HFLLM(base, dtype="bfloat16", cache=False),
            "lora-unmerged": lambda: HFLLM(base, adapter=str(adapter), cache=False),
            "lora-merged": lambda: HFLLM(merged, cache=False)}
    rows = []
    print(f"SmolLM2-135M-Instruct, {a.prompts} prompts x {a.max_tokens} new tokens, median of {a.runs} run(s), "
          f"torch {torch.__version__}, {torch.get_num_threads()} threads, load avg {os.getloadavg()[0]:.1f}", flush=True)
    for v in variants:
        llm = make[v]()
        for mode, kw in MODES.items():
            rate, sec, toks = bench(llm, convs, kw, a.max_tokens, a.runs)
            rows.append([v, mode, toks, round(sec, 2), round(rate, 1)])
            print(f"  {v:14s} {mode:12s} {toks:5d} tok {sec:7.2f}s {rate:7.1f} tok/s", flush=True)
    print()
    print(tabulate(rows, headers=["model", "decoding", "tokens", "seconds", "tokens/s"], tablefmt="github"))


if __name__ == "__main__":
    main()
