"""The paper-size benchmark (issue 56 part 5): Table 2's exact counts, deterministic, `check-data` passes, and
`personalwab estimate` prints the published plan on it. Built once per module into a temporary PERSONALWAB_CACHE."""
import contextlib, hashlib, io, tempfile
from pathlib import Path
import pytest
from fastcore.xtras import modified_env
from personalwab.data import papersize
from personalwab.data.build import user_sequences
from personalwab.data.generate import GenConfig, generate_raw
from personalwab.data.official import write_official


@pytest.fixture(scope="module")
def cache():
    with tempfile.TemporaryDirectory() as t, modified_env(PERSONALWAB_CACHE=t):
        yield papersize.cached_paper_size(progress=False)     # built once, loaded and audited once


def _digest(d: Path) -> dict:
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(d.glob("*.json"))}


def test_exact_counts(cache):
    b = cache
    assert (len(b.users), len(b.products)) == (1000, 8236)
    assert {s: len(v) for s, v in b.tasks.items()} == {"train": 6896, "test": 2174}
    assert len({t.user_id for t in b.tasks["train"]}) == 939 and len({t.user_id for t in b.tasks["test"]}) == 1000
    assert "| instructions (train / test) | 6,896 / 2,174 | 6,896 / 2,174 |" in (papersize.paper_size_dir()/"README.md").read_text()


def test_deterministic(cache):
    "The full-size raw data and split sizes twice, and a small full build twice, byte for byte."
    cfg = GenConfig(seed=2024, n_users=1000, n_products=8236)
    sizes = [papersize.paper_sizes({u: len(s) for u, s in user_sequences(generate_raw(cfg)).items()}) for _ in range(2)]
    assert sizes[0] == sizes[1]
    small = dict(n_users=30, n_products=500, train=120, test=50, train_users=28)
    with tempfile.TemporaryDirectory() as t:
        for i in range(2): write_official(papersize.paper_size_benchmark(progress=False, **small), Path(t)/str(i))
        assert _digest(Path(t)/"0") == _digest(Path(t)/"1")


def test_check_data_passes(cache, capsys):
    from personalwab.data.stats import check_data_cli
    check_data_cli("paper-size")                        # exits 1 on an audit error
    out = capsys.readouterr().out
    assert "valid: 1,000 users" in out and "8,236 products" in out and "6,896" in out and "2,174" in out


def test_estimate_prints_the_plan(cache, capsys):
    from personalwab.commands.estimate import estimate_cli
    df = estimate_cli(data="paper-size", gpu_tokens_per_s=2000)
    out = capsys.readouterr().out
    assert "on paper-size (2,174 test tasks)" in out and "GPU-hours" in out and "CPU-hours" in out
    assert (df.episodes == 2174).all() and "table3/no_memory" in df.index and df.tokens.sum() > 0


def test_stratified_sample(cache):
    b = cache
    s = papersize.stratified_sample(b, 90, seed=3)
    assert s == papersize.stratified_sample(b, 90, seed=3) and len(s) == 90 and len({t.id for t in s}) == 90
