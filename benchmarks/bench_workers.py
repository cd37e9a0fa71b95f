"""One worker against two on this CPU, through the runner (issue #15 item 3, at the level of a whole run).

    .venv/bin/python benchmarks/bench_workers.py [--methods no_memory,relevant_memory] [--tracks single]
        [--tasks 6] [--reps 2] [--max-steps 3]

`benchmarks/bench_batching.py` compares three ways to serve two generations at once. This script
checks the way that won (one thread per episode, one torch thread each) where it matters: a run of
the runner over the same stratified test tasks with `workers=1` (torch's default threads) and with
`workers=2` (the runner then gives each worker one of the two cores). SmolLM2 answers, with the
response cache off (every call reaches the model) and a fresh backend per run (an empty prefix
cache each time). The two settings alternate, `--reps` times each (one worker first on even
repetitions). Printed per method and track: median wall seconds per task of each setting, the
ratio, and whether the two runs recorded the same actions and scores on every task (the number of
threads changes floating-point sums, so a rare near-tie may flip a token). Nothing asserts on time.
"""
import argparse, json, os, statistics, tempfile, time
from pathlib import Path

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")


def records(d: Path) -> dict:
    recs = [json.loads(l) for l in (d/"results.jsonl").read_text().splitlines()]
    return {r["task_id"]: (r["actions"], r["function_acc"], r["result_acc"]) for r in recs}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--methods", default="no_memory,relevant_memory")
    ap.add_argument("--tracks", default="single")
    ap.add_argument("--tasks", type=int, default=6)
    ap.add_argument("--reps", type=int, default=2)
    ap.add_argument("--max-steps", type=int, default=3)
    a = ap.parse_args()
    from tabulate import tabulate
    from personalwab.data.load import load_benchmark
    from personalwab.env.environment import make_env
    from personalwab.env.resources import Resources
    from personalwab.llm.hf import smollm2
    from personalwab.agents.methods import get_agent
    from personalwab.run.runner import RunConfig, run, agent_kwargs
    from personalwab.env.simulator import UserSimulator
    b = load_benchmark(progress=False)
    res = Resources(b)
    rows = []
    for track in a.tracks.split(","):
        for method in a.methods.split(","):
            secs, recs = {1: [], 2: []}, {1: [], 2: []}
            for rep in range(a.reps):
                for w in ((1, 2) if rep % 2 == 0 else (2, 1)):
                    llm = smollm2(cache=False)                      # fresh backend: empty prefix cache, no response cache
                    agents = lambda cfg, b: get_agent(cfg.method, llm, b, **agent_kwargs(cfg))
                    def envs(cfg, b, llm=llm):   # the runner's environments, with the simulator on this backend too
                        sim = UserSimulator(llm, b, seed=cfg.seed) if cfg.track == "multi" else None
                        return make_env(b, cfg.track, max_steps=cfg.max_steps, simulator=sim, resources=res)
                    cfg = RunConfig(method=method, track=track, limit=a.tasks, sample="stratified", workers=w,
                                    max_steps=a.max_steps, params={"constrained": True, "context_margin": 0.6})
                    with tempfile.TemporaryDirectory() as out:
                        t0 = time.perf_counter()
                        r = run(cfg, out_dir=out, progress=False, agent_factory=agents, env_factory=envs, benchmark=b)
                        secs[w].append((time.perf_counter() - t0) / a.tasks)
                        recs[w].append(records(r.dir))
                    print(f"  {method} {track} rep {rep} workers={w}: {secs[w][-1]:.1f} s/task", flush=True)
            m1, m2 = statistics.median(secs[1]), statistics.median(secs[2])
            same = sum(recs[1][0][t] == recs[2][0][t] for t in recs[1][0])
            rows.append([method, track, a.tasks, f"{m1:.1f}", f"{m2:.1f}", f"{m1 / m2:.2f}x", f"{same}/{len(recs[1][0])}"])
            print(tabulate([rows[-1]], tablefmt="plain"), flush=True)
    print()
    print(tabulate(rows, headers=["method", "track", "tasks", "s/task 1 worker", "s/task 2 workers", "speed-up", "same records"]))


if __name__ == "__main__":
    main()
