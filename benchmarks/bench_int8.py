"""Dynamic int8 quantisation of SmolLM2's linear layers (issue #15 item 6): speed and how often greedy outputs change.

    .venv/bin/python benchmarks/bench_int8.py [--prompts 200] [--new-tokens 32] [--reps 5] [--threads 1]

Two copies of the offline SmolLM2-135M-Instruct: the float32 model every table uses, and the same
model after `torch.ao.quantization.quantize_dynamic` of its `nn.Linear` layers to int8 (weights int8,
activations quantised on the fly; nothing else changes). Printed:

1. prefill tokens/s (one forward over a 1,024-token prompt) and decode tokens/s (32 greedy steps with
   the key/value cache), median of `--reps` alternating repetitions (fp32 first on even, int8 first
   on odd ones), and the int8/fp32 ratio;
2. on `--prompts` real prompts of the default benchmark (half PUMA function prompts, half PUMA
   parameter prompts with 128 tokens of task-specific memory, over the first test tasks), greedy
   generation of `--new-tokens` tokens with both: how many outputs are token-for-token identical,
   the median position of the first differing token where they differ, and median seconds per
   prompt for each model.

Nothing here is used by the tables; the result decides whether int8 is offered as an option.
"""
import argparse, copy, os, statistics, time, warnings
from bench_llm_path import model_rates   # the same prefill/decode measurement as the LLM-path benchmark

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")


def quantised(model):
    import torch
    from torch.ao.quantization import quantize_dynamic
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")   # torch deprecates quantised tensor constructors; the path still works in 2.13
        return quantize_dynamic(copy.deepcopy(model), {torch.nn.Linear}, dtype=torch.qint8)


def prompts(n: int) -> list[str]:
    "Half PUMA function prompts, half parameter prompts (128-token task-specific memory) of the first test tasks."
    from personalwab.data.load import load_benchmark
    from personalwab.agents.memory import taskspecific_memory
    from personalwab.agents.puma_prompts import function_prompt, param_prompt
    from personalwab.data.schema import FUNCTION_FOR_TYPE
    b = load_benchmark(progress=False)
    tasks = b.split("test")[: (n + 1) // 2]
    out = [function_prompt(t) for t in tasks]
    out += [param_prompt(t, FUNCTION_FOR_TYPE[t.type], taskspecific_memory(b, t, t.type, 100, 128, None)) for t in tasks]
    return out[:n]


def generate(model, tok, text: str, new_tokens: int):
    import torch
    ids = tok.apply_chat_template([{"role": "user", "content": text}], add_generation_prompt=True, return_tensors="pt")
    if not isinstance(ids, torch.Tensor): ids = ids["input_ids"]
    t0 = time.perf_counter()
    with torch.inference_mode():
        out = model.generate(ids, max_new_tokens=new_tokens, do_sample=False, pad_token_id=tok.eos_token_id)
    return out[0, ids.shape[1]:].tolist(), time.perf_counter() - t0


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--prompts", type=int, default=200)
    ap.add_argument("--new-tokens", type=int, default=32)
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--threads", type=int, default=1)
    a = ap.parse_args()
    import torch
    from personalwab.llm.hf import load_model, smollm2_path
    torch.set_num_threads(a.threads)
    fp32, tok, _ = load_model(smollm2_path())
    int8 = quantised(fp32)
    models = {"fp32": fp32, "int8": int8}
    with torch.inference_mode(): [m(torch.tensor([[1, 2, 3]])) for m in models.values()]   # warm-up
    r = {k: [] for k in models}
    for i in range(a.reps):
        for k in (["fp32", "int8"] if i % 2 == 0 else ["int8", "fp32"]): r[k].append(model_rates(models[k]))
    print(f"threads {a.threads}; SmolLM2-135M-Instruct; medians of {a.reps} alternating repetitions")
    med = {k: (statistics.median(x[0] for x in v), statistics.median(x[1] for x in v)) for k, v in r.items()}
    for k, (p, d) in med.items(): print(f"  {k}: prefill {p:8.0f} tok/s   decode {d:6.1f} tok/s")
    print(f"  int8/fp32: prefill x{med['int8'][0] / med['fp32'][0]:.2f}   decode x{med['int8'][1] / med['fp32'][1]:.2f}")
    ps = prompts(a.prompts)
    same, first_diff, secs = 0, [], {k: [] for k in models}
    for i, text in enumerate(ps):
        order = ["fp32", "int8"] if i % 2 == 0 else ["int8", "fp32"]
        outs = {}
        for k in order: outs[k], s = generate(models[k], tok, text, a.new_tokens); secs[k].append(s)
        if outs["fp32"] == outs["int8"]: same += 1
        else: first_diff.append(next((j for j, (x, y) in enumerate(zip(outs["fp32"], outs["int8"])) if x != y),
                                     min(len(outs["fp32"]), len(outs["int8"]))))
    print(f"greedy outputs on {len(ps)} prompts ({a.new_tokens} new tokens): identical {same}/{len(ps)} ({same / len(ps):.0%})"
          + (f"; where they differ, median first differing token {statistics.median(first_diff):.0f}" if first_diff else ""))
    for k, v in secs.items(): print(f"  {k}: median {statistics.median(v):.2f} s per prompt")
    print(f"  int8/fp32 time per prompt: x{statistics.median(secs['int8']) / statistics.median(secs['fp32']):.2f}")


if __name__ == "__main__":
    main()
