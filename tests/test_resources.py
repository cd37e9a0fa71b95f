"""Shared state has one owner (`personalwab.env.resources`), keyed by content, and the package's structure stays simple.

* two benchmarks in one process never share a searcher, also when the first one has been
  garbage-collected and the second may get its `id()` (the bug of the old `id`-keyed caches);
* importing the package and every module changes no environment variable and no root logging level;
* (no two library modules import each other: the import contracts of `.importlinter`, in test_architecture.py).
"""
import gc, json, os, subprocess, sys, tempfile
from pathlib import Path

import pytest

from personalwab.env.environment import Action, make_env
from personalwab.env.resources import Resources
from personalwab.data.schema import Benchmark, tiny_benchmark

ROOT = Path(__file__).resolve().parents[1]


def renamed(b: Benchmark, letter: str) -> Benchmark:
    "`b` with another catalog: every ASIN's first letter replaced by `letter`."
    ps = {letter + a[1:]: p.model_copy(update={"parent_asin": letter + a[1:]}) for a, p in b.products.items()}
    return b.model_copy(update={"products": ps, "name": f"{b.name}-{letter}"})


def search_asins(b: Benchmark, query: str = "running shoes") -> list[str]:
    "The ASINs the environment's default searcher (no resources given) returns for `query`."
    env = make_env(b, "single", engine="bm25s")
    env.reset(b.split("train")[0])
    r = env.step(Action("search_product_by_query", {"query": query}))
    return r.info["items"]


def test_collected_benchmark_never_lends_its_searcher():
    a = tiny_benchmark()
    ida = id(a)
    assert search_asins(a) == ["B000000001"]
    del a
    gc.collect()
    same_id = 0
    for letter in "CDEFGHIJKLMNOPQRSTUV":                # some of these get A's address back
        b = renamed(tiny_benchmark(), letter)
        same_id += id(b) == ida
        got = search_asins(b)
        assert got and set(got) <= set(b.products), (letter, got)
        del b
        gc.collect()


def test_tiny_and_default_never_share_a_searcher():
    from personalwab.data.load import load_benchmark
    tiny = tiny_benchmark()
    s_tiny = Resources(tiny).searcher("bm25s")
    assert s_tiny.search("running shoes", 3) and set(s_tiny.search("running shoes", 3)) <= set(tiny.products)
    del tiny
    gc.collect()
    big = load_benchmark(None, progress=False)
    got = Resources(big).searcher("bm25s").search("running shoes", 10)
    assert got and set(got) <= set(big.products)
    assert Resources(big).searcher("bm25s") is not s_tiny


def test_same_content_shares_one_searcher():
    r1, r2 = Resources(tiny_benchmark()), Resources(tiny_benchmark())
    assert r1.searcher("bm25s") is r2.searcher("bm25s")
    assert Resources(renamed(tiny_benchmark(), "Z")).searcher("bm25s") is not r1.searcher("bm25s")


IMPORT_ALL = r"""
import importlib, json, logging, os, pkgutil, sys
before_env, before_level = dict(os.environ), logging.getLogger().level
import personalwab
names = sorted(m.name for m in pkgutil.walk_packages(personalwab.__path__, "personalwab.") if not m.name.rpartition(".")[2].startswith("_"))
for n in names: importlib.import_module(n)
after = dict(os.environ)
print(json.dumps({"modules": names, "level": [before_level, logging.getLogger().level],
                  "changed": sorted(k for k in before_env.keys() | after.keys() if before_env.get(k) != after.get(k))}))
"""


def test_importing_changes_no_environment_or_logging_level():
    env = {k: v for k, v in os.environ.items() if k not in ("OMP_WAIT_POLICY", "TRANSFORMERS_VERBOSITY")}
    # torch's own: importing torch._dynamo (transformers' generation does) sets TORCHINDUCTOR_CACHE_DIR when it is unset,
    # whoever imports it; given here, so that only what this package does is seen
    env.setdefault("TORCHINDUCTOR_CACHE_DIR", str(Path(tempfile.gettempdir())/"torchinductor_test"))
    # gymnasium's own (BrowserGym's tasks register with it): its __init__ sets PYGAME_HIDE_SUPPORT_PROMPT, whoever imports it
    env.setdefault("PYGAME_HIDE_SUPPORT_PROMPT", "hide")
    r = subprocess.run([sys.executable, "-c", IMPORT_ALL], cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr[-3000:]
    out = json.loads(r.stdout.strip().splitlines()[-1])
    assert {"personalwab.env.environment", "personalwab.run.runner", "personalwab.env.resources", "personalwab.agents.methods",
            "personalwab.cli", "personalwab.web.run"} <= set(out["modules"])
    assert out["changed"] == [], out["changed"]
    assert out["level"][0] == out["level"][1]


