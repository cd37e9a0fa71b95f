"""One method on a stratified sample of the paper-size benchmark, played on a simulated Ray cluster (issue 56 part 5).

    nice -n 19 .venv/bin/python benchmarks/run_paper_size_sample.py [--n 30] [--seed 0] [--method rules]
        [--nodes 2] [--llm-n 0] [--keep DIR]

The stages, each timed (wall seconds, CPU seconds of this process, its peak resident memory after the stage):
  data         the paper-size benchmark (`--data paper-size`, `papersize.cached_paper_size`: Table 2's 1,000 users,
               8,236 products, 6,896 / 2,174 instructions), built and cached on first use in
               $PERSONALWAB_CACHE/data/paper-size-<key>, else read and audited from there
  index        its pyserini BM25 index (what `personalwab build-index --data paper-size` builds), cached
  recommender  its SASRec recommender, which grades the recommendation tasks (the original's 1,000 epochs, what
               `personalwab train-sasrec --data paper-size` trains), trained once into the cache; built here first
               so that the nodes read it instead of waiting for one of them to train it
  sample       `papersize.stratified_sample(b, n, seed)`: `--n` test tasks, each type in proportion to its count,
               drawn at random within the type
  cluster      `ray.cluster_utils.Cluster`: a head of 0 CPUs (it schedules only) and `--nodes` nodes of one CPU
  run          the command line as a user types it, in a process of its own (the driver):
                 personalwab run --config SAMPLE.yaml --executor ray --address HEAD
               where SAMPLE.yaml holds the method, `data: paper-size` and the sample's `task_ids`
Then it checks that every sampled task ran exactly once (one record each, status ok: asserted, the point of the
script) and prints the episodes, the run's time, the seconds per episode, the nodes' share and the scores by task type.
`--llm-n K` adds no_memory with SmolLM2 on a stratified sample of K tasks (the same seed).

The cache is the user's ($PERSONALWAB_CACHE, else ~/.cache/personalwab): a second run reuses the data, the index and
the recommender. Ray's files go to a temporary HOME and RAY_TMPDIR, the run folders to a temporary folder (or `--keep
DIR`); nothing is left running. Nothing here is a speed claim: on a shared 2-core machine the simulated nodes share
the cores (see benchmarks/bench_ray_executor.py for Ray's costs).
"""
from __future__ import annotations
import argparse, contextlib, json, os, resource, shutil, statistics, subprocess, sys, tempfile, time
from collections import Counter
from pathlib import Path

for k, v in {"HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1",
             "TOKENIZERS_PARALLELISM": "false", "PYTHONHASHSEED": "0", "OMP_NUM_THREADS": "1"}.items():
    os.environ.setdefault(k, v)

BIN = Path(sys.executable).parent/"personalwab"


def _peak_mb() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"): return int(line.split()[1]) / 1024
    return float("nan")


@contextlib.contextmanager
def stage(name: str, note: dict):
    "Print the stage's wall and CPU seconds and this process's peak memory when it ends; `note['what']`: how it went."
    r0, t0 = resource.getrusage(resource.RUSAGE_SELF), time.perf_counter()
    yield note
    r1, wall = resource.getrusage(resource.RUSAGE_SELF), time.perf_counter() - t0
    cpu = r1.ru_utime + r1.ru_stime - r0.ru_utime - r0.ru_stime
    print(f"{name:12s} wall {wall:8.1f} s  cpu {cpu:8.1f} s  peak {_peak_mb():6.0f} MB  {note.get('what', '')}",
          flush=True)


def ray_home() -> tuple[str, str]:
    """A temporary HOME and a short RAY_TMPDIR for Ray's files (no auth token written); the cache pinned first to the
    user's, which would otherwise move with HOME."""
    from personalwab.core.config import cache_dir
    os.environ["PERSONALWAB_CACHE"] = str(cache_dir().resolve())
    home, tmp = tempfile.mkdtemp(prefix="pwab-sample-home-"), tempfile.mkdtemp(prefix="ps", dir="/tmp")
    os.environ.update(HOME=home, RAY_TMPDIR=tmp, RAY_AUTH_MODE="disabled", RAY_USAGE_STATS_ENABLED="0")
    os.environ.pop("RAY_ADDRESS", None)
    return home, tmp


def prepare(progress: bool):
    "The benchmark, its index and its recommender, each built or read from the cache (timed stages)."
    from personalwab.data.load import load_benchmark
    from personalwab.data.papersize import paper_size_dir
    from personalwab.env.resources import Resources
    from personalwab.env.sasrec import SASRecConfig, data_key, get_recommender
    from personalwab.core.config import cache_dir
    built = not (paper_size_dir()/"build.json").exists()
    with stage("data", {}) as n:
        b = load_benchmark("paper-size", progress=progress)
        n["what"] = (f"{'built and cached' if built else 'read from the cache'}: {len(b.users):,} users, "
                     f"{len(b.products):,} products, {len(b.tasks['train']):,} / {len(b.tasks['test']):,} "
                     f"instructions ({paper_size_dir()})")
    res = Resources(b)
    with stage("index", {}) as n:
        s = res.searcher("pyserini")
        n["what"] = f"pyserini over {len(b.products):,} products ({s.index_dir})"
    done = (cache_dir("sasrec", data_key(b, SASRecConfig()))/"DONE").exists()
    with stage("recommender", {}) as n:
        rec = get_recommender(b, progress=progress)
        n["what"] = (f"SASRec {'read from the cache' if done else f'trained, {SASRecConfig().epochs} epochs'} "
                     f"(weights {rec.identity()['sha256'][:12]})")
    return b


def cluster(nodes: int, store_mb: int):
    "A head of 0 CPUs and `nodes` nodes of one CPU (again where a node does not register in Ray's fixed 30 s)."
    from ray.cluster_utils import Cluster
    node = {"object_store_memory": store_mb * 2**20}
    for attempt in range(3):
        c = Cluster(initialize_head=True, head_node_args={"num_cpus": 0, "include_dashboard": False, **node})
        try:
            for _ in range(nodes): c.add_node(num_cpus=1, **node)
            c.wait_for_nodes(); return c
        except Exception:
            c.shutdown()
            if attempt == 2: raise


def run_sample(method: str, ids: list[str], address: str, out: Path, extra: dict) -> dict:
    "The sample as `personalwab run --config SAMPLE.yaml --executor ray --address HEAD`; its records checked."
    import yaml
    from personalwab.run.config import RunConfig, run_dir
    from personalwab.run.records import read_jsonl
    fields = {"method": method, "data": "paper-size", "task_ids": ids, **extra}
    out.mkdir(parents=True, exist_ok=True)
    sample = out/f"sample-{method}.yaml"
    sample.write_text(yaml.safe_dump(fields, sort_keys=False))
    cmd = [str(BIN), "run", "--config", str(sample), "--out-dir", str(out), "--no-progress", "--executor", "ray",
           "--address", address]
    print(f"\n$ personalwab run --config {sample.name} --out-dir {out} --no-progress --executor ray --address "
          f"{address}", flush=True)
    t0 = time.perf_counter()
    r = subprocess.run(cmd, capture_output=True, text=True)
    wall = time.perf_counter() - t0
    for line in (r.stderr + r.stdout).splitlines(): print(f"  | {line}")
    if r.returncode: raise SystemExit(f"the run exited {r.returncode}")
    d = run_dir(RunConfig.model_validate(fields), out)
    recs = read_jsonl(d/"results.jsonl")
    keys = Counter((x["task_id"], x["trial"]) for x in recs)
    once = sorted(keys) == sorted((i, 0) for i in ids) and set(keys.values()) == {1}
    ok = all(x["status"] == "ok" for x in recs)
    assert once and ok, (f"{len(recs)} records for {len(ids)} tasks; repeated: "
                         f"{[k for k, v in keys.items() if v > 1]}; missing: {set((i, 0) for i in ids) - set(keys)}; "
                         f"not ok: {[x['task_id'] for x in recs if x['status'] != 'ok']}")
    s = json.loads((d/"summary.json").read_text())
    eps = [x["wall_s"] for x in recs]
    print(f"\n{method}: {len(recs)} episodes, every sampled task exactly once (status ok); the command took "
          f"{wall:.1f} s (loading, joining the cluster, the episodes); episodes {statistics.median(eps):.2f} s median, "
          f"{sum(eps):.1f} s in all; by node: "
          f"{dict(Counter(x['worker'].rsplit('-', 1)[0] for x in recs))}")
    print(f"{'type':10s} {'tasks':>6s} {'function_acc':>13s} {'result_acc':>11s}  result_acc 95% interval")
    for ty, sc in s["scores"].items():
        fa, ra, lo, hi = (sc.get(k, float("nan")) for k in ("function_acc", "result_acc", "result_acc_lo",
                                                               "result_acc_hi"))
        print(f"{ty:10s} {int(sc.get('n', 0)):6d} {fa:13.3f} {ra:11.3f}  [{lo:.3f}, {hi:.3f}]")
    return {"dir": d, "wall_s": wall, "episodes": len(recs)}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=30, help="test tasks in the sample")
    ap.add_argument("--seed", type=int, default=0, help="the sample's seed")
    ap.add_argument("--method", default="rules")
    ap.add_argument("--nodes", type=int, default=2, help="simulated nodes of one CPU")
    ap.add_argument("--llm-n", type=int, default=0, help="also no_memory with SmolLM2 on a sample of this many tasks")
    ap.add_argument("--object-store-mb", type=int, default=512, help="each node's object store")
    ap.add_argument("--keep", type=Path, help="write the run folders here (default: a temporary folder, removed)")
    a = ap.parse_args()
    progress = sys.stderr.isatty()
    home, tmp = ray_home()
    out = a.keep or Path(tempfile.mkdtemp(prefix="pwab-sample-runs-"))
    c = None
    try:
        print(f"cores: {len(os.sched_getaffinity(0))}; load average before: {os.getloadavg()[0]:.1f}; cache: "
              f"{os.environ['PERSONALWAB_CACHE']}", flush=True)
        from personalwab.data.papersize import stratified_sample
        b = prepare(progress)
        with stage("sample", {}) as n:
            sample = stratified_sample(b, a.n, a.seed)
            n["what"] = (f"{len(sample)} test tasks, seed {a.seed}: {dict(Counter(t.type for t in sample))} "
                         f"(the split: {dict(Counter(t.type for t in b.tasks['test']))})")
        with stage("cluster", {}) as n:
            c = cluster(a.nodes, a.object_store_mb)
            n["what"] = f"head 0 CPUs + {a.nodes} nodes of 1 CPU at {c.address}"
        run_sample(a.method, [t.id for t in sample], c.address, out, {})
        if a.llm_n:
            few = stratified_sample(b, a.llm_n, a.seed)
            run_sample("no_memory", [t.id for t in few], c.address, out, {"agent_llm": "smollm2"})
        print(f"load average after: {os.getloadavg()[0]:.1f}")
    finally:
        if c is not None: c.shutdown()
        if a.keep is None: shutil.rmtree(out, ignore_errors=True)
        shutil.rmtree(home, ignore_errors=True); shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
