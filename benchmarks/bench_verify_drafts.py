"""The verification's re-run of published episodes, with plain decoding and with the published replies as drafts
(`evidence.drafts`), side by side in one process: median seconds per episode for each kind of method, and the ratio.

    PYTHONPATH=. OMP_NUM_THREADS=1 python benchmarks/bench_verify_drafts.py [--kinds puma function multi page]

Each kind re-runs one or more published episodes (`EPISODES`: run, task ids of distinct types) with `verify_run`,
`threads=1` (one episode at a time, one torch thread), the response cache off, the prompt-prefix caches emptied
before each; after an unmeasured warm-up (the first kind, plain), plain first, then drafted. Both must
give the published actions (the verification's verdicts are printed); the drafted run also prints the share of
draft tokens accepted and the calls a backend decoded without a draft (constrained tool calls, guided page steps).
"""
import argparse, os, statistics, sys, tempfile, time
from pathlib import Path

os.environ.setdefault("PERSONALWAB_LLM_CACHE", "0")

# kind -> (published run, task ids): short episodes, one per type at most (see `packed_episodes`)
EPISODES = {
    "function": ("no_memory-single-db407e70", ["test-00115"]),    # a function-track memory agent (constrained calls)
    "puma": ("puma-single-a10613fe", ["test-00000"]),              # PUMA on SmolLM2: two unconstrained calls
    "multi": ("reflection-multi-6d7f62bb", ["test-00016"]),        # multi-turn: the agent and the simulated user
    "page": ("no_memory-single-7b291ff9", ["test-00005"]),         # a page agent on the web track (guided steps)
}

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

def measure(kind: str, drafts: bool, scratch: Path) -> dict:
    "Re-run `kind`'s episodes; the check, its seconds per episode and the wall time."
    from personalwab.core.config import results_dir
    from personalwab.evidence.drafts import packed_episodes
    from personalwab.evidence.verify import verify_run
    name, ids = EPISODES[kind]
    packed = packed_episodes(results_dir()/"runs"/name, ids, scratch/f"pub-{kind}-{int(drafts)}")
    clear_prefix_caches()
    t0 = time.perf_counter()
    chk = verify_run(packed, kind, kind_config(name), scratch=scratch/f"run-{kind}-{int(drafts)}", threads=1,
                     drafts=drafts)
    return {"check": chk, "seconds": chk.seconds_now, "wall": time.perf_counter() - t0}

def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--kinds", nargs="*", default=list(EPISODES), choices=list(EPISODES))
    args = ap.parse_args(argv)
    rows = []
    with tempfile.TemporaryDirectory(prefix="pwab-bench-drafts-") as tmp:
        measure(args.kinds[0], False, Path(tmp)/"warm-up")   # the model loaded, its first calls made: not measured
        for kind in args.kinds:
            plain, drafted = measure(kind, False, Path(tmp)), measure(kind, True, Path(tmp))
            p, d = plain["check"], drafted["check"]
            share = f"{d.draft_accepted / d.draft_tokens:.0%}" if d.draft_tokens else "-"
            rows.append((kind, p.seconds_now, d.seconds_now, d.seconds_now / p.seconds_now if p.seconds_now else None))
            print(f"[{kind}] {EPISODES[kind][0]} {EPISODES[kind][1]}: plain {p.identical}/{p.tasks} identical "
                  f"(largest diff {p.largest_diff:.1e}{'; ' + p.error if p.error else ''}), drafted {d.identical}/"
                  f"{d.tasks} (largest diff {d.largest_diff:.1e}{'; ' + d.error if d.error else ''}); draft tokens "
                  f"accepted {share} ({d.draft_accepted}/{d.draft_tokens} in {d.draft_calls} calls); without a draft: "
                  f"{d.undrafted or 'none'}", flush=True)
    print("\n| kind | s/episode plain | s/episode drafted | drafted/plain |\n|---|---:|---:|---:|")
    for kind, a, b, r in rows:
        print(f"| {kind} | {a:.1f} | {b:.1f} | {r:.2f} |" if r is not None else f"| {kind} | - | - | - |")
    return 0

if __name__ == "__main__": sys.exit(main())
