"""Full-scale timing of the official-format loader and of Table 2 (personalwab.data.official, personalwab.data.stats).

Builds a synthetic benchmark the size of the PersonalWAB release (1,000 users x 40 behaviours,
35,772 products with ~600-token records, 4,000 instructions), writes it with `write_official`
(parts=3, like the repository), and prints the median of several runs of: write, load (full
validation), equality check, `table2` with the MiniLM tokenizer. Run: .venv/bin/python benchmarks/official_load.py
"""
import random, statistics, tempfile, time
from pathlib import Path
from personalwab.data.schema import PROFILE_FIELDS, TASK_TYPES, Behaviour, Benchmark, Product, Profile, Review, Target, Task, User
from personalwab.data.official import load_official, write_official
from personalwab.data.stats import table2

def synthetic(users=1000, per_user=40, products=35772, seed=0) -> Benchmark:
    rng = random.Random(seed)
    words = "quality durable soft cotton steel kitchen organic battery wireless compact premium light".split()
    txt = lambda n: " ".join(rng.choice(words) for _ in range(n))
    prods = {f"B{i:09d}": Product(parent_asin=f"B{i:09d}", title=txt(12), main_category="Electronics", average_rating=4.2,
                                  rating_number=rng.randint(1, 9999), features=[txt(20) for _ in range(5)], description=[txt(80)],
                                  price=f"{rng.uniform(5, 200):.2f}", store=txt(1), categories=["Electronics", txt(2)],
                                  details={"Brand": txt(1), "Color": txt(1)}) for i in range(products)}
    asins, prof = list(prods), Profile.model_validate({k: "Medium" for k in PROFILE_FIELDS})
    us, tasks = {}, {"train": [], "test": []}
    for u in range(users):
        uid, ts = f"U{u:027d}", sorted(rng.sample(range(10**12, 10**12 + 10**9), per_user))
        cut1, cut2 = int(per_user*.8), int(per_user*.9)
        bs = [Behaviour(product_info=prods[a], review=Review(rating=5, text=txt(40), parent_asin=a, timestamp=t),
                        split="history" if i < cut1 else "train" if i < cut2 else "test") for i, (a, t) in enumerate(zip(rng.sample(asins, per_user), ts))]
        us[uid] = User(user_id=uid, profile=prof, behaviours=bs)
        for x in bs[cut1:]:
            s = x.split
            tasks[s].append(Task(user_id=uid, task=txt(40), timestamp=x.timestamp, type=rng.choice(TASK_TYPES),
                                 target=Target(product_info=x.product_info, review=x.review), id=f"{s}-{len(tasks[s]):05d}"))
    return Benchmark(products=prods, users=us, tasks=tasks, name="scale")

def timed(f, n):
    ts, out = [], None
    for _ in range(n):
        t = time.perf_counter(); out = f(); ts.append(time.perf_counter() - t)
    return statistics.median(ts), out

if __name__ == "__main__":
    b = synthetic()
    with tempfile.TemporaryDirectory() as d:
        tw, _ = timed(lambda: write_official(b, d, parts=3), 3)
        size = sum(p.stat().st_size for p in Path(d).iterdir())
        tl, b2 = timed(lambda: load_official(d, name="scale", progress=False), 3)
    te, eq = timed(lambda: b2 == b, 3)
    tt, t2 = timed(lambda: table2(b2), 3)
    print(f"files: {size/1e6:.0f} MB; {len(b.users)} users, {sum(len(u.behaviours) for u in b.users.values())} behaviours, {len(b.products)} products")
    print(f"write_official (parts=3): {tw:.2f} s   load_official: {tl:.2f} s   equal after round trip: {eq} ({te:.2f} s)")
    print(f"table2 (MiniLM tokens): {tt:.2f} s\n{t2.round(1)}")
