"""Search throughput: pyserini (single queries and batch_search on Java threads) and bm25s, on the
default benchmark's catalog and on a real-scale generated catalog (35,772 products, spec §1.4).

    .venv/bin/python benchmarks/bench_search.py [--products 35772] [--queries 2000] [--runs 3]

Queries: the default benchmark's test instructions plus product titles of the catalog searched.
`pyserini search`/`batch_search` use Lucene's IndexSearcher directly (the fast path of
personalwab.env.search); the SimpleSearcher rows are Anserini's reference path (same ranking).
Each figure is the median of `--runs` runs after one warm-up run (JIT). Prints wall-clock q/s and,
because the machine may be shared, also q/s per CPU-second of this process (all its threads).
Also checks that both engines return the same ordered top-10 lists.
"""
import argparse, os, random, statistics, sys, time
from personalwab.env.search import get_searcher, PyseriniSearcher, BM25sSearcher, catalog_hash
from personalwab.data.load import load_benchmark
from personalwab.data.schema import Benchmark, Product
from personalwab.data import generate


def timed(fn, runs):
    fn()                                                      # warm-up (JIT, caches)
    walls, cpus = [], []
    for _ in range(runs):
        w, c = time.perf_counter(), time.process_time()
        out = fn()
        walls.append(time.perf_counter() - w); cpus.append(time.process_time() - c)
    return statistics.median(walls), statistics.median(cpus), out


def bench(name, products, queries, runs, threads):
    print(f"\n== {name}: {len(products):,} products, {len(queries):,} queries ==")
    t0 = time.perf_counter(); h = catalog_hash(products); b = Benchmark(products=products, users={}, tasks={}, name=name)
    ps = get_searcher(b, "pyserini"); t1 = time.perf_counter(); bs = get_searcher(b, "bm25s"); t2 = time.perf_counter()
    print(f"index {h}: pyserini ready in {t1-t0:.1f}s, bm25s in {t2-t1:.1f}s (includes building when not cached)")
    rows = []
    w, c, _ = timed(lambda: [ps.search(q) for q in queries], runs); rows.append(("pyserini search (loop)", len(queries), w, c))
    w, c, _ = timed(lambda: [ps.search_scored(q) for q in queries], runs); rows.append(("pyserini SimpleSearcher (loop)", len(queries), w, c))
    w, c, _ = timed(lambda: ps._batch_simple(queries, 10, max(threads)), runs); rows.append((f"SimpleSearcher.batch_search thr={max(threads)}", len(queries), w, c))
    for th in threads:
        w, c, top_p = timed(lambda: ps.batch_search(queries, threads=th), runs); rows.append((f"pyserini batch_search threads={th}", len(queries), w, c))
    w, c, top_b = timed(lambda: bs.batch_search(queries), runs); rows.append(("bm25s search (loop)", len(queries), w, c))
    for label, n, w, c in rows:
        print(f"{label:<36} {n/w:>9,.0f} q/s   ({n/c:>9,.0f} q per CPU-s)")
    same = sum(a == b for a, b in zip(top_p, top_b))
    print(f"identical ordered top-10 (pyserini vs bm25s): {same}/{len(queries)}")
    return rows


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--products", type=int, default=35_772, help="size of the generated real-scale catalog")
    ap.add_argument("--queries", type=int, default=2000)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    ap.add_argument("--seed", type=int, default=7)
    a = ap.parse_args()
    print(f"machine: {os.cpu_count()} cores, load average {os.getloadavg()[0]:.1f} at start")
    b = load_benchmark(progress=False)
    instr = [t.task for t in b.split("test")]
    r = random.Random(a.seed)
    qs = instr + r.sample([p.title for p in b.products.values()], max(0, a.queries - len(instr)))
    bench("default benchmark", b.products, qs[:a.queries], a.runs, a.threads)
    t0 = time.perf_counter()
    big = {p.meta["parent_asin"]: Product.model_validate(p.meta) for p in generate.make_catalog(generate.Rng(a.seed), a.products)}
    print(f"\ngenerated {len(big):,} products in {time.perf_counter()-t0:.1f}s (personalwab.data.generate.make_catalog, seed {a.seed})")
    qs = instr + r.sample([p.title for p in big.values()], max(0, a.queries - len(instr)))
    bench("real-scale catalog", big, qs[:a.queries], a.runs, a.threads)
    print(f"\nload average at end {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
