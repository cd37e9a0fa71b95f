"""The verification of `make reproduce`: published runs one at a time against two at a time (`--processes`).

    .venv/bin/python benchmarks/bench_verify_processes.py [--runs NAME,NAME,...] [--reps 2] [--schedule-only]

Every published run's verification re-runs two or three of its episodes on the run's two workers; the episodes of a
sample seldom take as long as each other, so one core waits for the other. `verify_published(processes=2)` verifies two
runs at a time, each in its own process with its own workers and torch threads, the longest sample first.

Two measures:

  schedule   from the published seconds of every sampled episode of the plan (no model runs): the seconds of the
             samples scheduled run after run on two workers (each run's episodes in order, two at a time), against the
             same episodes packed onto two cores longest first (the bound two runs at a time approach), and the sum.
  measured   (unless --schedule-only) the verification of `--runs` (published run names; default: a handful with
             uneven samples) with processes=1 and processes=2, alternating `--reps` times (one at a time first on even
             repetitions): median wall seconds of each, the ratio, and whether the two gave the same rows (actions,
             scores, threads). The models answer (response cache off), as in `make reproduce`.

The published runs, the recommender and PUMA are restored into a temporary runs folder first, as `make reproduce` does.
Nothing asserts on time.
"""
import argparse, os, statistics, sys, tempfile, time
from pathlib import Path

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
os.environ.setdefault("TQDM_DISABLE", "1")
ROOT = Path(__file__).resolve().parents[1]
DEFAULT_RUNS = "scribe-single-21494c27,relevant_memory-single-bb756025,puma-single-a10613fe,random_memory-multi-4028c0ff"


def two_slots(seconds: list[float], longest_first: bool) -> float:
    "The makespan of `seconds` on two slots, each job on the slot that frees first."
    slots = [0.0, 0.0]
    for s in (sorted(seconds, reverse=True) if longest_first else seconds):
        i = slots.index(min(slots)); slots[i] += s
    return max(slots)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", default=DEFAULT_RUNS)
    ap.add_argument("--reps", type=int, default=2)
    ap.add_argument("--schedule-only", action="store_true")
    a = ap.parse_args()
    work = Path(tempfile.mkdtemp(prefix="pwab-bench-verify-"))
    os.environ["PERSONALWAB_RUNS"] = str(work/"runs")
    sys.path.insert(0, str(ROOT/"tools"))
    import reproduce
    from personalwab.core.config import results_dir
    from personalwab.evidence.plan import load_plan
    from personalwab.evidence.verify import plan_samples, sample_episode_seconds, verify_published
    plan = load_plan()
    puma = reproduce.restore_published(work/"runs", log=lambda *x: None)
    per_run = [s for cfg, _, types in plan_samples(plan, puma).values()
               if (s := sample_episode_seconds(results_dir()/"runs"/cfg.name, types=types))]
    flat = [s for run in per_run for s in run]
    after = sum(two_slots(run, False) for run in per_run)
    packed = two_slots(flat, True)
    print(f"schedule of the plan's sample from its published seconds: {len(flat)} episodes in {len(per_run)} runs, "
          f"{sum(flat):.0f} s in all")
    print(f"  run after run on two workers {after:.0f} s; packed onto two cores, longest first {packed:.0f} s; "
          f"ratio {after / packed:.2f}")
    if a.schedule_only: return
    names = set(a.runs.split(","))
    walls, rows = {1: [], 2: []}, {}
    cols = ["run", "key", "tasks", "identical", "largest_diff", "differing", "error", "threads_now"]
    for rep in range(a.reps):
        for p in ((1, 2) if rep % 2 == 0 else (2, 1)):
            t0 = time.perf_counter()
            df = verify_published(plan, scratch=work/f"verify-{p}-{rep}", puma=puma, names=names, processes=p,
                                  log=lambda *x: None)
            walls[p].append(time.perf_counter() - t0)
            rows.setdefault(p, df[cols].values.tolist())
            print(f"  rep {rep}: processes={p} {walls[p][-1]:.0f} s, {int(df.identical.sum())}/{int(df.tasks.sum())} identical",
                  flush=True)
    m1, m2 = statistics.median(walls[1]), statistics.median(walls[2])
    print(f"measured on {len(names)} runs ({a.reps} repetitions each): one at a time median {m1:.0f} s, two at a time "
          f"median {m2:.0f} s; ratio {m1 / m2:.2f}; same rows: {rows[1] == rows[2]}")


if __name__ == "__main__":
    main()
