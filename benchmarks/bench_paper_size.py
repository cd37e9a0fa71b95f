"""How the data-side cost grows from the embedded default benchmark to the paper-size one (issue 56 part 5).

    nice -n 19 .venv/bin/python benchmarks/bench_paper_size.py [--epochs 1000] [--repeats 1] [--only default,paper-size]

For each benchmark, `default` (150 users, 3,000 products, 594 test tasks) and `paper-size` (Table 2's size: 1,000
users, 8,236 products, 6,896 / 2,174 instructions; `personalwab.data.papersize`), four stages, each in its own fresh
Python process under a temporary PERSONALWAB_CACHE / PERSONALWAB_DATA (nothing cached is reused, nothing is left):

  build   generate the raw data and run the construction pipeline, write the official-format files
  load    read, validate and audit those files (`load_official`)
  index   the pyserini (Lucene) BM25 index over the catalog, as `personalwab build-index` builds it
  sasrec  train SASRec (the original's hyper-parameters) for `--epochs` epochs, as `personalwab train-sasrec`
          does; the default benchmark's recommender is shipped, so this is what a benchmark without one pays

Per stage: wall seconds, CPU seconds (user + system of the stage's process and its threads, the JVM's included: on a
busy machine CPU time is the steadier number), the process's peak resident memory (VmHWM, which includes the Python
interpreter, torch and the JVM) and its growth during the stage (peak minus the resident memory just before it), and
the paper-size / default ratios. Medians over `--repeats`. Nothing is asserted.
"""
import argparse, json, os, resource, statistics, subprocess, sys, tempfile, time
from pathlib import Path

STAGES = ("build", "load", "index", "sasrec")
NAMES = ("default", "paper-size")


def _status(field: str) -> float:
    "A VmRSS/VmHWM line of /proc/self/status, in MB."
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"): return int(line.split()[1]) / 1024
    return float("nan")


def _cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def _benchmark(name: str):
    if name == "default":
        from personalwab.data.load import default_benchmark
        return default_benchmark(progress=False)
    from personalwab.data.papersize import paper_size_benchmark
    return paper_size_benchmark(progress=False)


def stage(name: str, what: str, work: Path, epochs: int) -> dict:
    "Run one stage in this process (a child of `main`) and return its measurements."
    from personalwab.data.official import load_official, write_official
    data = work/"data"
    b, extra = None, {}
    if what in ("index", "sasrec"): b = load_official(data, name=name, progress=False)
    import torch  # noqa: F401  (every stage pays the same imports before it starts)
    rss0, cpu0, t0 = _status("VmRSS"), _cpu(), time.perf_counter()
    if what == "build":
        b = _benchmark(name); write_official(b, data, indent=None)
        extra = {"bytes": sum(p.stat().st_size for p in data.glob("*.json"))}
    elif what == "load":
        b = load_official(data, name=name, progress=False)
    elif what == "index":
        from personalwab.env.search import get_searcher
        s = get_searcher(b, "pyserini")
        hits = s.search(b.tasks["test"][0].task)
        extra = {"bytes": sum(p.stat().st_size for p in Path(s.index_dir).rglob("*") if p.is_file()),
                 "hits": len(hits)}
    elif what == "sasrec":
        from personalwab.env.sasrec import train_sasrec, training_sequences
        train_sasrec(b, epochs=epochs, out_dir=work/"sasrec", save_every=max(epochs, 1), progress=False)
        extra = {"epochs": epochs, "sequences": sum(len(s) > 1 for s in training_sequences(b))}
    wall, cpu = time.perf_counter() - t0, _cpu() - cpu0
    out = {"data": name, "stage": what, "wall_s": wall, "cpu_s": cpu, "peak_mb": _status("VmHWM"),
           "growth_mb": _status("VmHWM") - rss0, **extra}
    if b is not None:
        out |= {"users": len(b.users), "products": len(b.products),
                "behaviours": sum(len(u.behaviours) for u in b.users.values()),
                "tasks": {s: len(v) for s, v in b.tasks.items()}}
    return out


def run_stage(name: str, what: str, work: Path, epochs: int) -> dict:
    env = os.environ | {"PERSONALWAB_CACHE": str(work/"cache"), "PERSONALWAB_DATA": str(work/"datadir"),
                        "OMP_NUM_THREADS": os.environ.get("OMP_NUM_THREADS", "1")}
    r = subprocess.run([sys.executable, __file__, "--stage", what, "--data", name, "--work", str(work),
                        "--epochs", str(epochs)], env=env, capture_output=True, text=True)
    if r.returncode: raise SystemExit(f"{name}/{what} failed:\n{r.stderr[-3000:]}")
    return json.loads(r.stdout.strip().splitlines()[-1])


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--epochs", type=int, default=1000, help="SASRec epochs (the original: 1000)")
    ap.add_argument("--repeats", type=int, default=1)
    ap.add_argument("--only", default=",".join(NAMES), help="benchmarks, comma-separated")
    ap.add_argument("--stage", help=argparse.SUPPRESS); ap.add_argument("--data", help=argparse.SUPPRESS)
    ap.add_argument("--work", help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.stage:
        print(json.dumps(stage(a.data, a.stage, Path(a.work), a.epochs))); return
    names = a.only.split(",")
    res: dict[tuple, list[dict]] = {}
    for rep in range(a.repeats):
        for name in names:
            with tempfile.TemporaryDirectory(prefix="bench-paper-size-") as t:
                for what in STAGES:
                    r = run_stage(name, what, Path(t), a.epochs)
                    res.setdefault((name, what), []).append(r)
                    print(f"[{rep + 1}/{a.repeats}] {name:10s} {what:7s} wall {r['wall_s']:7.1f} s  cpu "
                          f"{r['cpu_s']:7.1f} s  peak {r['peak_mb']:6.0f} MB (+{r['growth_mb']:.0f})", flush=True)
    med = lambda name, what, k: statistics.median(r[k] for r in res[(name, what)])
    print(f"\nmedians over {a.repeats} repeat(s); SASRec: {a.epochs} epochs; load average at the end: "
          f"{os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    for name in names:
        r = res[(name, "load")][0]
        print(f"  {name}: {r['users']:,} users, {r['products']:,} products, {r['behaviours']:,} behaviours, "
              f"tasks {r['tasks']}, files {res[(name, 'build')][0]['bytes'] / 1e6:.1f} MB, index "
              f"{res[(name, 'index')][0]['bytes'] / 1e6:.1f} MB, SASRec sequences {res[(name, 'sasrec')][0]['sequences']}")
    head = f"{'stage':8s}" + "".join(f"{n + ' ' + k:>24s}" for n in names for k in ("wall s", "cpu s", "peak MB"))
    if len(names) == 2: head += "".join(f"{'ratio ' + k:>14s}" for k in ("wall", "cpu", "peak", "growth"))
    print(head)
    for what in STAGES:
        row = f"{what:8s}" + "".join(f"{med(n, what, k):24.1f}" for n in names for k in ("wall_s", "cpu_s", "peak_mb"))
        if len(names) == 2:
            row += "".join(f"{med(names[1], what, k) / max(med(names[0], what, k), 1e-9):14.2f}"
                           for k in ("wall_s", "cpu_s", "peak_mb", "growth_mb"))
        print(row)
    if len(names) == 2:
        d, p = res[("default", "load")][0], res[("paper-size", "load")][0]
        print(f"size ratios: users {p['users'] / d['users']:.2f}, products {p['products'] / d['products']:.2f}, "
              f"behaviours {p['behaviours'] / d['behaviours']:.2f}, test tasks "
              f"{p['tasks']['test'] / d['tasks']['test']:.2f}")


if __name__ == "__main__":
    main()
