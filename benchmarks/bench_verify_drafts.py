"""The verification's re-run of published episodes, with plain decoding and with the published replies as drafts
(`evidence.drafts`), side by side in one process: seconds per episode for each kind of method, and the ratios.

    PYTHONPATH=. OMP_NUM_THREADS=1 PERSONALWAB_LLM_CACHE=0 python benchmarks/bench_verify_drafts.py \
        [--kinds puma function page multi]

Each kind re-runs a few published episodes (`EPISODES`: a published run, task ids) with `verify_run`, `threads=1` (one
episode at a time, one torch thread), the response cache off, the prompt-prefix caches emptied before each re-run.
Before a kind is measured, one of its episodes (`WARM`) is re-run plainly and not measured: the model, the kind's
resources (indexes, memories, pages) and their first calls are loaded then, not inside a measured episode. Then
plain, then drafted. Both must give the published actions (the verification's verdicts are printed); the drafted run
also prints the share of draft tokens accepted and the calls decoded without a draft.

Printed: per episode its seconds plain and drafted (the record's `wall_s`); per kind the medians and the ratio of the
medians; overall the ratio of the summed seconds (the verification's time) and the median of the episodes' ratios.
A few short episodes per kind: the kinds' ratios, not the absolute seconds, are the result (on a busy machine the
seconds are inflated).
"""
import argparse, json, os, statistics, sys, tempfile, time
from pathlib import Path

os.environ.setdefault("PERSONALWAB_LLM_CACHE", "0")

# kind -> (published run, task ids): short published episodes, a few per kind
EPISODES = {
    "puma": ("puma-single-a10613fe", ["test-00121", "test-00146"]),               # PUMA on SmolLM2, unconstrained
    "function": ("no_memory-single-db407e70", ["test-00115", "test-00116"]),     # a memory agent, constrained calls
    "page": ("no_memory-single-7b291ff9", ["test-00000", "test-00019"]),          # a page agent, guided steps
    "multi": ("no_memory-multi-93211eef", ["test-00014"]),                        # multi-turn, the simulated user
}
# kind -> an episode of the same run re-run plainly first, not measured
WARM = {"puma": "test-00131", "function": "test-00137", "page": "test-00000", "multi": "test-00016"}


def kind_config(name: str):
    "The run config of published run `name`, from its run.json (the name it computes must be the published one)."
    from personalwab.run.config import RunConfig
    from personalwab.run.records import read_json
    from personalwab.core.config import results_dir
    meta = read_json(results_dir()/"runs"/name/"run.json", "published run")
    return RunConfig(**meta["config"])


def clear_prefix_caches() -> None:
    "Empty the prompt-prefix cache of every model this process built: each measured re-run starts from none."
    from personalwab.env.resources import built, shared
    for key in built():
        if (pc := getattr(shared(key, lambda: None), "prefix_cache", None)) is not None: pc.clear()


def episode_seconds(scratch: Path) -> dict[str, float]:
    "Task id -> `wall_s` of the re-run's records under `scratch` (the last record of each task)."
    out = {}
    for p in scratch.rglob("results.jsonl"):
        for line in p.read_text().splitlines():
            if line.strip(): r = json.loads(line); out[r["task_id"]] = float(r["wall_s"])
    return out


def measure(name: str, ids: list[str], drafts: bool, scratch: Path):
    "Re-run episodes `ids` of published run `name`; the check and each episode's seconds."
    from personalwab.core.config import results_dir
    from personalwab.evidence.drafts import packed_episodes
    from personalwab.evidence.verify import verify_run
    packed = packed_episodes(results_dir()/"runs"/name, ids, scratch/"pub")
    clear_prefix_caches()
    chk = verify_run(packed, name, kind_config(name), scratch=scratch/"run", threads=1, drafts=drafts,
                     per_type=len(ids))                # every packed episode is in the sample
    return chk, episode_seconds(scratch/"run")


def verdict(c) -> str:
    return f"{c.identical}/{c.tasks} identical (largest diff {c.largest_diff:.1e}{'; ' + c.error if c.error else ''})"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--kinds", nargs="*", default=list(EPISODES), choices=list(EPISODES))
    args = ap.parse_args(argv)
    rows, eps, t_all = [], [], time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="pwab-bench-drafts-") as tmp:
        for kind in args.kinds:
            name, ids = EPISODES[kind]
            t0 = time.perf_counter()
            measure(name, [WARM[kind]], False, Path(tmp)/kind/"warm")
            warm = time.perf_counter() - t0
            (p, ps), (d, ds) = (measure(name, ids, x, Path(tmp)/kind/f"drafts-{x}") for x in (False, True))
            share = f"{d.draft_accepted / d.draft_tokens:.0%}" if d.draft_tokens else "-"
            print(f"[{kind}] {name} {ids} (warm-up {warm:.0f}s): plain {verdict(p)}, drafted {verdict(d)}; draft "
                  f"tokens accepted {share} ({d.draft_accepted}/{d.draft_tokens} in {d.draft_calls} calls); without a "
                  f"draft: {d.undrafted or 'none'}", flush=True)
            for t in ids:
                if t in ps and t in ds:
                    eps.append((kind, t, ps[t], ds[t]))
                    print(f"    {t}: plain {ps[t]:.1f}s, drafted {ds[t]:.1f}s, ratio {ds[t] / ps[t]:.2f}", flush=True)
            a = statistics.median(ps[t] for t in ids if t in ps)
            b = statistics.median(ds[t] for t in ids if t in ds)
            rows.append((kind, len(ids), a, b, b / a))
    print(f"\n{len(eps)} episodes, {time.perf_counter() - t_all:.0f}s in all (warm-ups included); one torch thread, "
          f"nice'd on a busy machine: ratios, not seconds")
    print("\n| kind | episodes | s/episode plain (median) | s/episode drafted (median) | drafted/plain |\n"
          "|---|---:|---:|---:|---:|")
    for kind, n, a, b, r in rows: print(f"| {kind} | {n} | {a:.1f} | {b:.1f} | {r:.2f} |")
    if eps:
        tp, td = sum(e[2] for e in eps), sum(e[3] for e in eps)
        print(f"| all | {len(eps)} | {tp:.1f} (sum) | {td:.1f} (sum) | {td / tp:.2f} |")
        print(f"\nmedian of the episodes' drafted/plain ratios: {statistics.median(e[3] / e[2] for e in eps):.2f}")
    return 0


if __name__ == "__main__": sys.exit(main())
