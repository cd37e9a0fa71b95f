"""Benchmark: web-environment overhead per task and review-scoring throughput.

1. Env overhead: a full single-turn pass of the oracle agent (right function; target title as the
   query; the user's 30 most recent pre-task behaviours for recommendation; the real review) over
   the test split of the benchmark, timing reset + step + scoring + episode() per task and
   subtracting the time spent inside the models (BM25 search, SASRec, MiniLM), which are measured
   separately. Target on the 2-core reference machine: < 2 ms per task.
2. Review scoring throughput: `ReviewScorer.similarity` over (instruction, real review) pairs of
   all review tasks with an empty embedding cache (both sides embedded), batched and one pair per
   call (as `WebEnv.step` scores).

Figures are medians over --repeats passes. Usage:
    .venv/bin/python benchmarks/bench_env.py [--data default] [--engine pyserini] [--repeats 3] [--limit N]
"""
from __future__ import annotations
import argparse, statistics, time

import pandas as pd


class Timed:
    "Proxy that accumulates the wall time spent in the wrapped object's methods."
    def __init__(self, obj, clock: dict, key: str): self._obj, self._clock, self._key = obj, clock, key
    def __getattr__(self, name):
        f = getattr(self._obj, name)
        if not callable(f): return f
        def timed(*a, **kw):
            t = time.perf_counter()
            try: return f(*a, **kw)
            finally: self._clock[self._key] = self._clock.get(self._key, 0.0) + time.perf_counter() - t
        return timed


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", default="default")
    ap.add_argument("--engine", default="pyserini")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--limit", type=int, default=None)
    ap.add_argument("--threads", type=int, default=None, help="torch intra-op threads (default: torch's choice)")
    args = ap.parse_args(argv)

    from personalwab.core.config import offline; offline()
    if args.threads:
        import torch; torch.set_num_threads(args.threads)
    from personalwab.data.load import load_benchmark
    from personalwab.env.environment import WebEnv, oracle_action
    from personalwab.env.metrics import ReviewScorer, aggregate, get_review_scorer
    from personalwab.env.sasrec import get_recommender
    from personalwab.env.search import get_searcher

    t = time.perf_counter()
    b = load_benchmark(None if args.data == "default" else args.data)
    tasks = b.split("test")[: args.limit]
    searcher, recommender, scorer = get_searcher(b, args.engine), get_recommender(b), get_review_scorer()
    print(f"benchmark {b.name}: {len(b.products)} products, {len(tasks)} test tasks; parts ready in {time.perf_counter() - t:.1f}s")

    clock: dict[str, float] = {}
    env = WebEnv(b, "single", searcher=Timed(searcher, clock, "search"), recommender=Timed(recommender, clock, "sasrec"),
                 review_scorer=Timed(scorer, clock, "minilm"))
    actions = [oracle_action(b, x) for x in tasks]
    for x, a in list(zip(tasks, actions))[:20]: env.reset(x); env.step(a)          # warm-up (JVM, torch kernels)

    per_task_ms, model_ms, eps = [], [], []
    for _ in range(args.repeats):
        clock.clear(); eps = []
        t0 = time.perf_counter()
        for x, a in zip(tasks, actions):
            env.reset(x); env.log_call({"model": "oracle"}); env.step(a); eps.append(env.episode())
        total = time.perf_counter() - t0
        model = sum(clock.values())
        per_task_ms.append(1000 * (total - model) / len(tasks))
        model_ms.append({k: 1000 * v / len(tasks) for k, v in clock.items()})

    med = statistics.median(per_task_ms)
    print(f"\nenv overhead per task (reset + step + scoring + episode, model time excluded): "
          f"median {med:.3f} ms over {args.repeats} passes (all: {', '.join(f'{v:.3f}' for v in per_task_ms)}); target < 2 ms: {'OK' if med < 2 else 'MISSED'}")
    print("model time per task (ms, averaged over all tasks): " +
          ", ".join(f"{k} {statistics.median(m.get(k, 0.0) for m in model_ms):.2f}" for k in ("search", "sasrec", "minilm")))
    df = pd.DataFrame([e.to_dict() for e in eps])
    print("\noracle scores (single-turn):")
    print(aggregate(df)[["n", "function_acc", "result_acc", "steps"]].round(3).to_string())

    reviews = [x for x in b.split("test") if x.type == "review"]
    preds, refs = [x.task for x in reviews], [x.target.review.text for x in reviews]
    batched, single = [], []
    for _ in range(args.repeats):
        fresh = ReviewScorer(scorer.model)                     # empty cache: both sides embedded
        t0 = time.perf_counter(); fresh.similarity(preds, refs); batched.append(len(preds) / (time.perf_counter() - t0))
        fresh = ReviewScorer(scorer.model)
        t0 = time.perf_counter()
        for p, r in zip(preds, refs): fresh.score(p, r)        # one pair per call, as env.step scores
        single.append(len(preds) / (time.perf_counter() - t0))
    import torch
    print(f"\nreview scoring ({len(preds)} (instruction, real review) pairs, MiniLM truncation {scorer.model.max_length}, "
          f"torch threads {torch.get_num_threads()}): {statistics.median(batched):.0f} pairs/s batched (batch {scorer.model.batch_size}), "
          f"{statistics.median(single):.0f} pairs/s one pair per call")

if __name__ == "__main__":
    main()
