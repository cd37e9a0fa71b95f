"""What `--executor ray` costs and gives: Ray's start-up, the cost of an episode on Ray against the same episode in a
local run, and the throughput of 1, 2 and 3 simulated nodes (`ray.cluster_utils.Cluster` on this machine).

Prints medians over `--repeats` (fresh run folders every time, so every episode is computed):
  start-up      `ray.init` of a Ray started here (2 CPUs, its node at 127.0.0.1) and its `ray.shutdown`, seconds
  per episode   seconds per episode of a run of `--tasks` tasks, local (one worker thread) and on Ray (one CPU, the
                Ray already running); the first Ray run of a method (its worker building the method's parts) is shown
                apart from the later ones, which reuse the worker's process and model
  nodes         episodes per second of the rules agent on `--nodes` simulated nodes of one CPU each (head: none);
                the simulated nodes share this machine's cores: with 2 cores, a third node adds no CPU

Ray's files go to a temporary HOME and RAY_TMPDIR (removed at the end). Run it with the project's usual environment:
  OMP_NUM_THREADS=1 HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 PYTHONHASHSEED=0 TOKENIZERS_PARALLELISM=false \\
    python benchmarks/bench_ray_executor.py [--repeats 3] [--tasks 6] [--llm-tasks 2] [--nodes 1 2 3]
"""
from __future__ import annotations
import argparse, logging, os, shutil, statistics, tempfile, time
from pathlib import Path


def ray_home() -> tuple[str, str]:
    "A temporary HOME and a short RAY_TMPDIR for Ray's files (socket paths must stay short); no auth token written."
    home, tmp = tempfile.mkdtemp(prefix="pwab-bench-home-"), tempfile.mkdtemp(prefix="pb", dir="/tmp")
    os.environ.update(HOME=home, RAY_TMPDIR=tmp, RAY_AUTH_MODE="disabled", RAY_USAGE_STATS_ENABLED="0")
    os.environ.pop("RAY_ADDRESS", None)
    return home, tmp


def startup(repeats: int) -> tuple[float, float]:
    "Median seconds of starting a Ray here and of stopping it."
    import ray
    ups, downs = [], []
    while len(ups) < repeats:
        t0 = time.perf_counter()
        try: ray.init(address="local", num_cpus=2, include_dashboard=False, log_to_driver=False,
                      logging_level=logging.ERROR, object_store_memory=256 * 2**20, _node_ip_address="127.0.0.1")
        except Exception as e:             # Ray's fixed 30 s for its node to register: said, not measured
            print(f"  (a start failed after {time.perf_counter() - t0:.0f} s: {str(e)[:60]}...)", flush=True)
            ray.shutdown(); continue
        t1 = time.perf_counter(); ray.shutdown(); t2 = time.perf_counter()
        ups.append(t1 - t0); downs.append(t2 - t1)
    return statistics.median(ups), statistics.median(downs)


def per_episode(cfg, repeats: int, out: Path) -> dict:
    "Seconds per episode of `cfg`: local runs, the first Ray run, later Ray runs (medians)."
    from personalwab.core.config import torch_threads
    from personalwab.run.executor import RayExecutor, executing
    from personalwab.run.runner import run
    def timed(where: str, i: int) -> float:
        t0 = time.perf_counter(); r = run(cfg, out_dir=out/f"{where}{i}", progress=False)
        assert r.errors == 0 and r.ran == cfg.limit, r
        return (time.perf_counter() - t0) / r.ran
    with torch_threads(1): local = [timed("local", i) for i in range(repeats)]
    with executing(RayExecutor(cpus=1, log=lambda s: None)) as ex:
        ex.start(1)
        ray_s = [timed("ray", i) for i in range(repeats + 1)]
    return {"local": statistics.median(local), "ray_first": ray_s[0], "ray": statistics.median(ray_s[1:])}


def throughput(nodes: list[int], tasks: int, repeats: int, out: Path) -> dict[int, float]:
    "Episodes per second of the rules agent on k simulated one-CPU nodes (median over `repeats` runs after a warm-up)."
    import ray
    from ray.cluster_utils import Cluster
    from personalwab.run.config import RunConfig
    from personalwab.run.executor import RayExecutor, executing
    from personalwab.run.runner import run
    cfg = RunConfig(method="rules", data="default", limit=tasks, sample="stratified")
    res = {}
    for k in nodes:
        for attempt in range(3):           # a node that does not register in Ray's fixed 30 s (a busy machine): again
            c = Cluster(initialize_head=True, head_node_args={"num_cpus": 0, "include_dashboard": False})
            try:
                for _ in range(k): c.add_node(num_cpus=1)
                c.wait_for_nodes(); break
            except Exception:
                c.shutdown()
                if attempt == 2: raise
        try:
            with executing(RayExecutor(address=c.address, log=lambda s: None)):
                run(cfg, out_dir=out/f"warm{k}", progress=False)        # every node's worker builds its parts
                rates = []
                for i in range(repeats):
                    t0 = time.perf_counter(); r = run(cfg, out_dir=out/f"n{k}-{i}", progress=False)
                    rates.append(r.ran / (time.perf_counter() - t0))
            res[k] = statistics.median(rates)
        finally:
            if ray.is_initialized(): ray.shutdown()
            c.shutdown()
    return res


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--tasks", type=int, default=6, help="rules: tasks per run")
    ap.add_argument("--llm-tasks", type=int, default=2, help="SmolLM2 (no_memory): tasks per run (0: skip)")
    ap.add_argument("--nodes", type=int, nargs="*", default=[1, 2, 3])
    a = ap.parse_args()
    os.environ.setdefault("PERSONALWAB_LLM_CACHE", "0")          # every model call computed
    home, tmp = ray_home()
    out = Path(tempfile.mkdtemp(prefix="pwab-bench-ray-"))
    try:
        from personalwab.run.config import RunConfig
        print(f"cores: {len(os.sched_getaffinity(0))}; load average before: {os.getloadavg()[0]:.1f}", flush=True)
        up, down = startup(a.repeats)
        print(f"start-up: ray.init {up:.2f} s, ray.shutdown {down:.2f} s (medians of {a.repeats})", flush=True)
        cfgs = {"rules": RunConfig(method="rules", data="default", limit=a.tasks, sample="stratified")}
        if a.llm_tasks:
            cfgs["no_memory (SmolLM2)"] = RunConfig(method="no_memory", agent_llm="smollm2", data="default",
                                                    limit=a.llm_tasks, sample="stratified", params={"max_tokens": 48})
        for name, cfg in cfgs.items():
            r = per_episode(cfg, a.repeats, out/name.split()[0])
            print(f"per episode, {name}: local {r['local']:.2f} s, ray {r['ray']:.2f} s "
                  f"(ratio {r['ray'] / r['local']:.2f}); first ray run {r['ray_first']:.2f} s/episode (the worker "
                  f"builds the parts)", flush=True)
        if a.nodes:
            tp = throughput(a.nodes, a.tasks, a.repeats, out/"nodes")
            base = tp[min(tp)]
            for k, v in tp.items():
                print(f"nodes {k}: {v:.2f} episodes/s (x{v / base:.2f} of {min(tp)} node{'s' * (min(tp) != 1)})",
                      flush=True)
        print(f"load average after: {os.getloadavg()[0]:.1f}")
    finally:
        shutil.rmtree(out, ignore_errors=True); shutil.rmtree(home, ignore_errors=True)
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
