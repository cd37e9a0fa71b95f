"""SASRec training time per epoch and quality, with the original hyper-parameters (spec §13).

    .venv/bin/python benchmarks/bench_sasrec.py [--epochs 300] [--release-epochs 3]

1. Default benchmark: trains `--epochs` epochs from scratch (in a temporary folder, not the cache),
   prints seconds per epoch and HR@10 / NDCG@10 on the test tasks, over the full catalog and with 100
   sampled negatives, next to a popularity baseline.
2. Real scale (spec §1.4: 1,000 users, ~32 history items each, 35,772 products): times a few epochs
   on synthetic sequences over a generated catalog (quality is meaningless there, only time).
"""
import argparse, os, random, statistics, tempfile, time
from pathlib import Path
import torch
from personalwab.data.load import load_benchmark
from personalwab.data.schema import Benchmark, Behaviour, Product, Profile, Review, User, PROFILE_FIELDS
from personalwab.env.sasrec import SASRecConfig, train_sasrec, evaluate_sasrec, popularity_scorer, Recommender
from personalwab.data import generate


def run(b, epochs, seed):
    log = []
    with tempfile.TemporaryDirectory() as d:
        t0 = time.perf_counter()
        ck = train_sasrec(b, epochs=epochs, seed=seed, out_dir=d, save_every=max(epochs, 1), log=log)
        dt = time.perf_counter() - t0
        rec = Recommender.load(ck)
    return dt, log, rec


def release_benchmark(n_products, n_users, mean_len, seed):
    prods = {p.meta["parent_asin"]: Product.model_validate(p.meta) for p in generate.make_catalog(generate.Rng(seed), n_products)}
    asins, r = list(prods), random.Random(seed)
    prof = Profile.model_validate({k: "Medium" for k in PROFILE_FIELDS})
    users = {}
    for u in range(n_users):
        n = max(2, int(r.expovariate(1 / mean_len)))
        start = r.randrange(len(asins))
        seq = [asins[(start + int(r.gauss(0, 200))) % len(asins)] for _ in range(n)]   # some locality to learn
        users[f"U{u:05d}"] = User(user_id=f"U{u:05d}", profile=prof, behaviours=[
            Behaviour(product_info=prods[a], review=Review(rating=5, text="", parent_asin=a, timestamp=i), split="history") for i, a in enumerate(seq)])
    return Benchmark(products=prods, users=users, tasks={"train": [], "test": []}, name="release-scale")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--epochs", type=int, default=SASRecConfig().epochs)
    ap.add_argument("--release-epochs", type=int, default=3)
    ap.add_argument("--seed", type=int, default=0)
    a = ap.parse_args()
    print(f"machine: {os.cpu_count()} cores, torch {torch.__version__} with {torch.get_num_threads()} threads, load average {os.getloadavg()[0]:.1f}")
    b = load_benchmark(progress=False)
    n_int = sum(x.split == "history" for u in b.users.values() for x in u.behaviours)
    print(f"\n== default benchmark: {len(b.users)} users, {n_int:,} history behaviours, {len(b.products):,} items, {a.epochs} epochs ==")
    dt, log, rec = run(b, a.epochs, a.seed)
    print(f"training: {dt:.1f}s, {dt / a.epochs * 1000:.0f} ms/epoch; loss {log[0]['loss']:.3f} -> {log[-1]['loss']:.3f}")
    for name, res in [(f"SASRec {a.epochs} epochs", evaluate_sasrec(b, rec)), ("popularity", evaluate_sasrec(b, None, scorer=popularity_scorer(b)))]:
        print(f"{name:<22} " + "  ".join(f"{k} {v:.3f}" if isinstance(v, float) else f"{k} {v}" for k, v in res.items()))
    rec_tasks = evaluate_sasrec(b, rec, types=("recommend",))
    print(f"{'  recommend tasks only':<22} " + "  ".join(f"{k} {v:.3f}" if isinstance(v, float) else f"{k} {v}" for k, v in rec_tasks.items()))
    if a.release_epochs:
        t0 = time.perf_counter(); big = release_benchmark(35_772, 1000, 32, a.seed)
        n_int = sum(len(u.behaviours) for u in big.users.values())
        print(f"\n== real scale: {len(big.users)} users, {n_int:,} behaviours, {len(big.products):,} items (built in {time.perf_counter()-t0:.1f}s) ==")
        dt, log, _ = run(big, a.release_epochs, a.seed)
        print(f"training: {dt:.1f}s for {a.release_epochs} epochs, {dt / a.release_epochs:.2f} s/epoch")
    print(f"\nload average at end {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
