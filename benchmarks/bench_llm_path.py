"""The local LLM path before and after issue #15 (prefix cache + stop at a complete call), per method.

    .venv/bin/python benchmarks/bench_llm_path.py [--methods no_memory,recmind]
        [--tracks single,multi] [--tasks 1] [--max-steps 2] [--threads 1] [--no-rates]

Runs each method of Tables 3 and 4 on the same tasks (the first `--tasks` of the test split) with
SmolLM2 through two backends that share one loaded model:

  old   HFLLM(prefix_cache=False, stop_at_call=False): every prompt is read in full, every reply
        runs to EOS or max_tokens (the path before this change)
  new   the defaults: keys/values of earlier prompts reused, replies end at a complete call

Old and new alternate task by task (old first on even tasks, new first on odd ones) so that load
on a shared machine hits both alike. Each backend's user simulator is the same backend (as in a
run), response caches are off, and the new backend starts each (method, track) with an empty
prefix cache, then keeps it across that method's tasks, as a run does. Printed per method and
track: median seconds per task, prefill tokens computed per task (prompt tokens minus those read
from the prefix cache), decode tokens per task, the old/new ratios, and whether both paths took
the same actions. Then prefill and decode tokens/s at 1 and 2 threads. Nothing asserts on time.
"""
import argparse, os, statistics, time

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")


def episode_stats(ep) -> dict:
    us = [u for u in ep.usage if not u.get("cached")]
    return dict(prefill=sum(u.get("prompt_tokens", 0) - u.get("reused_tokens", 0) for u in us),
                prompt=sum(u.get("prompt_tokens", 0) for u in us), decode=sum(u.get("completion_tokens", 0) for u in us),
                calls=sum(u.get("index", 0) == 0 for u in us), actions=[(a["name"], a.get("arguments")) for a in ep.actions])


def run_task(method, llm, b, task, track, max_steps, max_tokens):
    from personalwab.agents.methods import get_agent
    from personalwab.env.environment import make_env
    env = make_env(b, track, max_steps=max_steps)
    if env.simulator is not None: env.simulator.llm = llm
    agent = get_agent(method, llm, b, max_tokens=max_tokens)
    t0 = time.perf_counter()
    ep = agent.solve(env, task, seed=0)
    return time.perf_counter() - t0, episode_stats(ep)


def model_rates(model, prompt_len: int = 1024, decode: int = 32) -> tuple[float, float]:
    "(prefill, decode) tokens/s of `model` at the current torch threads: one forward of `prompt_len` tokens, then `decode` greedy steps."
    import torch
    ids = torch.randint(100, 20000, (1, prompt_len), generator=torch.Generator().manual_seed(0))
    with torch.inference_mode():
        model(ids[:, :64])  # warm-up
        t0 = time.perf_counter(); out = model(ids, use_cache=True); tp = time.perf_counter() - t0
        past, nxt = out.past_key_values, out.logits[:, -1:].argmax(-1)
        t0 = time.perf_counter()
        for _ in range(decode):
            o = model(nxt, past_key_values=past, use_cache=True); past, nxt = o.past_key_values, o.logits[:, -1:].argmax(-1)
        td = time.perf_counter() - t0
    return prompt_len / tp, decode / td


def rates(threads: int, prompt_len: int = 1024, decode: int = 32) -> tuple[float, float]:
    "(prefill, decode) tokens/s of SmolLM2 at `threads` threads (`model_rates` of the offline model)."
    import torch
    from personalwab.llm.hf import load_model, smollm2_path
    model, tok, _ = load_model(smollm2_path())
    torch.set_num_threads(threads)
    return model_rates(model, prompt_len, decode)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--methods", default="no_memory,recmind")
    ap.add_argument("--tracks", default="single,multi")
    ap.add_argument("--tasks", type=int, default=1)
    ap.add_argument("--max-steps", type=int, default=2, help="multi-turn step cap (the paper's is 10; kept small here)")
    ap.add_argument("--max-tokens", type=int, default=256, help="the agents' max_tokens")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--no-rates", action="store_true", help="skip the prefill/decode tokens/s at 1 and 2 threads")
    a = ap.parse_args()
    import torch
    from tabulate import tabulate
    from personalwab.data.load import load_benchmark
    from personalwab.llm.hf import smollm2
    torch.set_num_threads(a.threads)
    b = load_benchmark(progress=False)
    tasks = b.tasks["test"][:a.tasks]
    rows = []
    for track in a.tracks.split(","):
        for method in a.methods.split(","):
            old = smollm2(cache=False, prefix_cache=False, stop_at_call=False)
            new = smollm2(cache=False)
            res = {"old": [], "new": []}
            for i, t in enumerate(tasks):
                for name in (("old", "new") if i % 2 == 0 else ("new", "old")):
                    res[name].append(run_task(method, old if name == "old" else new, b, t, track, a.max_steps, a.max_tokens))
                    sec, st = res[name][-1]
                    print(f"  {method} {track} task {t.id} {name}: {sec:.1f}s, {st['calls']} calls, prompt {st['prompt']}, "
                          f"prefill computed {st['prefill']}, decode {st['decode']}", flush=True)
            med = {k: statistics.median(s for s, _ in v) for k, v in res.items()}
            pre = {k: statistics.mean(st["prefill"] for _, st in v) for k, v in res.items()}
            dec = {k: statistics.mean(st["decode"] for _, st in v) for k, v in res.items()}
            same = sum(o[1]["actions"] == n[1]["actions"] for o, n in zip(res["old"], res["new"]))
            rows.append([method, track, f"{med['old']:.1f}", f"{med['new']:.1f}", f"{med['old'] / med['new']:.2f}x",
                         f"{pre['old']:.0f}", f"{pre['new']:.0f}", f"{pre['old'] / max(pre['new'], 1):.2f}x",
                         f"{dec['old']:.0f}", f"{dec['new']:.0f}", f"{same}/{len(tasks)}"])
            print(tabulate([rows[-1]], tablefmt="plain"), flush=True)
    print()
    print(tabulate(rows, headers=["method", "track", "s/task old", "s/task new", "speed-up", "prefill old", "prefill new",
                                  "prefill ratio", "decode old", "decode new", "same actions"]))
    if not a.no_rates:
        print()
        print(tabulate([[n, *(f"{r:.0f}" for r in rates(n))] for n in (1, 2)], headers=["threads", "prefill tok/s", "decode tok/s"]))


if __name__ == "__main__":
    main()
