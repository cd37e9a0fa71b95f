"""Batched decoding against one thread per episode on this CPU (issue #15 item 3).

    .venv/bin/python benchmarks/bench_batching.py [--pairs 8] [--new-tokens 48] [--threads 2]

Two episodes running at the same time (the runner's `workers=2`) each need a greedy generation.
Three ways to serve them with SmolLM2-135M-Instruct on `--threads` cores:

  sequential   one generation after the other, each with all `--threads` torch threads
  threads      two Python threads, one generation each, torch threads split between them
  batched      one `generate` call over both prompts (left-padded, attention mask), all threads

For `--pairs` pairs of real prompts of the default benchmark (PUMA parameter prompts with 128 tokens
of task-specific memory, of different lengths, as two episodes' prompts are), each way generates
`--new-tokens` tokens for both prompts (`min_new_tokens` = `max_new_tokens`, so every way decodes the
same number of tokens). Ways alternate in a rotating order per pair; printed: median wall seconds per
pair, the ratios to `sequential`, and whether the batched outputs equal the single ones (padding can
change floating-point sums). Nothing is asserted; the numbers decide whether a shared batched decoder
is worth building into the local backend.
"""
import argparse, os, statistics, threading, time

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")


def prompts(n: int) -> list[str]:
    from personalwab.data.load import load_benchmark
    from personalwab.agents.memory import taskspecific_memory
    from personalwab.agents.puma_prompts import param_prompt
    from personalwab.data.schema import FUNCTION_FOR_TYPE
    b = load_benchmark(progress=False)
    return [param_prompt(t, FUNCTION_FOR_TYPE[t.type], taskspecific_memory(b, t, t.type, 100, 128, None)) for t in b.split("test")[:n]]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--pairs", type=int, default=8)
    ap.add_argument("--new-tokens", type=int, default=48)
    ap.add_argument("--threads", type=int, default=2)
    a = ap.parse_args()
    import torch
    from personalwab.llm.hf import load_model, smollm2_path
    model, tok, _ = load_model(smollm2_path())
    tok.padding_side = "left"
    if tok.pad_token is None: tok.pad_token = tok.eos_token
    enc = lambda texts: tok.apply_chat_template([[{"role": "user", "content": t}] for t in texts], add_generation_prompt=True,
                                               return_tensors="pt", padding=True, return_dict=True)
    gen = dict(max_new_tokens=a.new_tokens, min_new_tokens=a.new_tokens, do_sample=False, pad_token_id=tok.pad_token_id)

    def one(text, out, i):
        x = enc([text])
        with torch.inference_mode(): out[i] = model.generate(**x, **gen)[0, x["input_ids"].shape[1]:].tolist()

    def sequential(pair):
        torch.set_num_threads(a.threads); out = [None, None]
        for i, t in enumerate(pair): one(t, out, i)
        return out

    def threads(pair):
        torch.set_num_threads(max(1, a.threads // 2)); out = [None, None]
        ts = [threading.Thread(target=one, args=(t, out, i)) for i, t in enumerate(pair)]
        for t in ts: t.start()
        for t in ts: t.join()
        return out

    def batched(pair):
        torch.set_num_threads(a.threads); x = enc(list(pair))
        with torch.inference_mode(): o = model.generate(**x, **gen)
        return [r[x["input_ids"].shape[1]:].tolist() for r in o]

    ways = {"sequential": sequential, "threads": threads, "batched": batched}
    ps = prompts(2 * a.pairs)
    pairs = [(ps[2 * i], ps[2 * i + 1]) for i in range(a.pairs)]
    with torch.inference_mode(): model.generate(**enc(["warm up"]), max_new_tokens=2, do_sample=False, pad_token_id=tok.pad_token_id)
    secs, same = {k: [] for k in ways}, 0
    names = list(ways)
    for i, pair in enumerate(pairs):
        outs = {}
        for k in names[i % 3:] + names[:i % 3]:
            t0 = time.perf_counter(); outs[k] = ways[k](pair); secs[k].append(time.perf_counter() - t0)
        same += outs["batched"] == outs["sequential"]
    lens = [len(tok(p)["input_ids"]) for p in ps]
    print(f"{a.pairs} pairs of PUMA parameter prompts ({min(lens)}-{max(lens)} tokens), {a.new_tokens} new tokens each, {a.threads} cores")
    base = statistics.median(secs["sequential"])
    for k, v in secs.items():
        m = statistics.median(v)
        print(f"  {k:10s}: median {m:6.2f} s per pair   x{base / m:.2f} vs sequential   ({2 * a.new_tokens / m:.1f} decoded tokens/s)")
    print(f"  batched outputs equal to sequential ones: {same}/{a.pairs} pairs")


if __name__ == "__main__":
    main()
