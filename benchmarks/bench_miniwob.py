"""Benchmark: seconds per MiniWoB++ episode of the page agents (`personalwab miniwob run`), and what the full
computation (every agent on BrowserGym's 125 tasks, 3 seeds each) would take at that pace.

Plays each of --agents (default: the random baseline and the fine-tuned `scribe`) on a systematic sample of the tasks
(every --every-th of BrowserGym's order from the --start-th: by default 5 tasks from easy clicks to a forwarded email)
x --seeds seeds, with `web.miniwob_runs.run_miniwob` in a temporary folder (a fine-tuned agent's model restored from
results/web/ first, as the command restores it). Prints, per agent, the median and mean seconds an episode, the mean
page steps and the seconds inside model calls; then the estimate of the full computation: 125 x 3 episodes per agent
at its mean (the model agents not measured at the mean of those measured: all five share SmolLM2-135M's size and the
step prompt), in hours of one process.

Usage:
    .venv/bin/python benchmarks/bench_miniwob.py [--agents random scribe] [--every 25] [--start 12] [--seeds 1] [--threads 1]
"""
from __future__ import annotations
import argparse, statistics, tempfile


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--agents", nargs="+", default=["random", "scribe"])
    ap.add_argument("--every", type=int, default=25)
    ap.add_argument("--start", type=int, default=12)
    ap.add_argument("--seeds", type=int, default=1)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--out", default=None, help="runs folder (default: a temporary one)")
    args = ap.parse_args()
    from personalwab.commands.miniwob import restore_model
    from personalwab.web.miniwob import MINIWOB_AGENTS, miniwob_tasks
    from personalwab.web.miniwob_runs import MiniWoBConfig, run_miniwob
    tasks = miniwob_tasks()[args.start::args.every]
    out = args.out or tempfile.mkdtemp(prefix="pwab-bench-miniwob-")
    print(f"tasks: {', '.join(tasks)}; seeds {args.seeds}; torch threads {args.threads}; runs in {out}")
    means = {}
    for agent in args.agents:
        cfg = MiniWoBConfig(agent=agent, tasks=tasks, seeds=args.seeds)
        restore_model(agent)
        r = run_miniwob(cfg, out, max_time_s=None, threads=args.threads,
                        on_record=lambda rec, i, n: print(f"  {agent} {rec['task_id']}#{rec['trial']}: {rec['status']}, "
                                                          f"reward {rec.get('reward')}, {rec['steps']} steps, "
                                                          f"{rec['wall_s']:.1f} s", flush=True))
        from personalwab.run.records import read_jsonl
        recs = [x for x in read_jsonl(r.dir/"results.jsonl") if x["status"] == "ok"]
        secs = [x["wall_s"] for x in recs]
        model = [sum(u.get("latency_s") or 0 for u in x.get("usage") or []) for x in recs]
        means[agent] = statistics.mean(secs)
        print(f"{agent}: {len(secs)} episodes, median {statistics.median(secs):.1f} s, mean {means[agent]:.1f} s an "
              f"episode; {statistics.mean(x['steps'] for x in recs):.1f} page steps, {statistics.mean(model):.1f} s in "
              f"model calls; success {sum(bool(x['success']) for x in recs)}/{len(recs)}")
    models = [m for a, m in means.items() if a != "random"]
    n = len(miniwob_tasks()) * 3
    total = 0.0
    print(f"\nthe full computation, {n} episodes an agent (125 tasks x 3 seeds), one process:")
    for agent in MINIWOB_AGENTS:
        m = means.get(agent, statistics.mean(models) if agent != "random" and models else None)
        if m is None: print(f"  {agent}: not estimated (not measured)"); continue
        total += n * m
        print(f"  {agent}: {n * m / 3600:.1f} h ({'measured' if agent in means else 'at the model agents measured'})")
    print(f"  all: {total / 3600:.1f} h")


if __name__ == "__main__":
    main()
