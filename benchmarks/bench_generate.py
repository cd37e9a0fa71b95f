"""Time the raw-data generator and the construction pipeline at the default and the release scale.

    .venv/bin/python benchmarks/bench_generate.py [--runs 3] [--skip-release] [--llm smollm2 --llm-users 2]

Prints the median wall time of `generate_raw` and `build_benchmark` (template generator) over
`--runs` runs, and the size of what they produce. Release scale = spec §1.4 (1,000 users,
35,772 products, ~40k behaviours). With `--llm SPEC`, also builds a few users with the LLM
generator and prints how many profiles/instructions parsed and how many fell back to templates.
"""
import argparse, statistics, time
from collections import Counter
from personalwab.data.generate import GenConfig, generate_raw
from personalwab.data.build import build_benchmark, LLMGenerator


def timed(f, runs):
    ts, out = [], None
    for _ in range(runs):
        t0 = time.perf_counter(); out = f(); ts.append(time.perf_counter() - t0)
    return statistics.median(ts), out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--skip-release", action="store_true")
    ap.add_argument("--llm", default=None, help="LLM spec for the LLM generator (e.g. smollm2)")
    ap.add_argument("--llm-users", type=int, default=2)
    a = ap.parse_args()
    if a.llm:
        raw = generate_raw(n_users=a.llm_users, n_products=300, seed=1, mean_behaviours=12, min_behaviours=10)
        g = LLMGenerator(a.llm, max_tokens=160)
        t0 = time.perf_counter(); b = build_benchmark(raw, generator=g, seed=1, progress=False); dt = time.perf_counter() - t0
        print(f"llm={a.llm} users={len(b.users)} calls={g.stats['calls']} {dict(sorted(g.stats.items()))} wall={dt:.1f}s")
        for s in ("train", "test"):
            for t in b.tasks[s]: print(f"  [{t.type}] {t.task}")
    scales = [("default", GenConfig())] + ([] if a.skip_release else [("release", GenConfig.release())])
    for name, cfg in scales:
        t_gen, raw = timed(lambda: generate_raw(cfg), a.runs)
        t_build, b = timed(lambda: build_benchmark(raw, seed=cfg.seed, progress=False), a.runs)
        n_beh = sum(len(u.behaviours) for u in b.users.values())
        types = {s: dict(Counter(t.type for t in ts)) for s, ts in b.tasks.items()}
        print(f"{name:8s} users={len(b.users):5d} products={len(b.products):6d} reviews={len(raw.reviews):6d} behaviours={n_beh:6d} "
              f"tasks={ {s: len(v) for s, v in b.tasks.items()} }")
        print(f"{'':8s} test types={types['test']}  train types={types['train']}")
        print(f"{'':8s} generate_raw median {t_gen:6.2f}s | build_benchmark (template) median {t_build:6.2f}s | runs={a.runs}")


if __name__ == "__main__":
    main()
