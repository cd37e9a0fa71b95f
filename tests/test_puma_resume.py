"""PUMA stages resume to the same bytes: a candidates run killed (really, SIGKILL) or torn mid-line and
resumed writes exactly the file of an uninterrupted run; so does the prepare stage's search-label cache.
Real tiny models: the tiny ChatML Llama of `puma.train.tiny_base_model` and the in-process `get_llm("tiny")`."""
import json, os, signal, subprocess, sys, time, warnings
from pathlib import Path
import pytest
from personalwab.puma.data import Example

KW = dict(n_sample=4, temperature=1.5, num_beams=2, max_new_tokens=12, batch_size=4, seed=3, progress=False)

def examples(n):
    return [Example(f"train-{i:05d}", "param", "search", "search_product_by_query",
                    [{"role": "user", "content": f"I need item {i}: light hiking boots, waterproof, under {20 + i} dollars"}], "hiking boots")
            for i in range(n)]

@pytest.fixture(scope="module")
def model():
    from personalwab.puma.train import tiny_base_model
    return tiny_base_model()

@pytest.fixture(scope="module")
def full(model, tmp_path_factory):
    "An uninterrupted run over 10 examples (3 batches, the last one short)."
    from personalwab.puma.train import generate_candidates
    p = tmp_path_factory.mktemp("full")/"candidates.jsonl"
    rows = generate_candidates(model, examples(10), p, **KW)
    assert len(rows) == 10 and any(r["sampled"] for r in rows)
    return p.read_bytes()

def _cuts(data: bytes) -> list[int]:
    ends = [i + 1 for i, c in enumerate(data) if c == ord("\n")]
    return [ends[0] // 2,                 # torn first line
            ends[1] + 7,                  # two rows, then a torn one (mid-batch)
            ends[3],                      # exactly one whole batch
            ends[5] - 1,                  # six rows, the last without its newline (whole JSON: kept)
            ends[8] + 1]                  # nine rows and one byte of the tenth

@pytest.mark.parametrize("k", range(5))
def test_candidates_torn_and_resumed_are_bit_identical(model, full, tmp_path, k):
    from personalwab.puma.train import generate_candidates
    cut = _cuts(full)[k]
    p = tmp_path/"candidates.jsonl"; p.write_bytes(full[:cut])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")           # repair_jsonl warns about the torn line it saves aside
        rows = generate_candidates(model, examples(10), p, **KW)
    assert p.read_bytes() == full
    assert [r["id"] for r in rows] == [e.id for e in examples(10)]
    torn = full[:cut][full[:cut].rfind(b"\n") + 1:]
    if torn and k != 3: assert (tmp_path/"candidates.jsonl.torn").read_bytes() == torn + b"\n"

CHILD = """
import os, signal, sys, threading, time
from pathlib import Path
sys.path.insert(0, {tests!r})
from test_puma_resume import KW, examples
from personalwab.puma.train import generate_candidates
out, limit = Path({out!r}), {limit}
def killer():
    while not (out.exists() and out.stat().st_size >= limit): time.sleep(0.005)
    os.kill(os.getpid(), signal.SIGKILL)
threading.Thread(target=killer, daemon=True).start()
generate_candidates({model!r}, examples(10), out, **KW)
time.sleep(60)
"""

def test_candidates_killed_and_resumed_are_bit_identical(model, full, tmp_path):
    "A real SIGKILL once about a third of the file is written, then a resume in this process."
    from personalwab.puma.train import generate_candidates
    out = tmp_path/"candidates.jsonl"
    code = CHILD.format(tests=str(Path(__file__).parent), out=str(out), limit=len(full) // 3, model=str(model))
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=600, env={**os.environ, "OMP_NUM_THREADS": "1"})
    assert r.returncode == -signal.SIGKILL, r.stderr[-2000:]
    part = out.read_bytes()
    assert 0 < len(part) < len(full) and full.startswith(part[:part.rfind(b"\n") + 1])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        generate_candidates(model, examples(10), out, **KW)
    assert out.read_bytes() == full

def test_search_label_cache_torn_tail(tmp_path):
    "prepare's search_labels.jsonl: a torn last line no longer fails every rerun; the resumed cache equals an uninterrupted one."
    from personalwab.llm.base import get_llm
    from personalwab.puma.data import search_labels
    from personalwab.data.schema import tiny_benchmark
    b = tiny_benchmark()
    items = [(t.model_copy(update={"id": f"train-{i:05d}", "task": f"{t.task} (variant {i})"}), "memory") for i, t in enumerate(b.tasks["train"] * 4)]
    llm = get_llm("tiny", cache=False)
    whole = tmp_path/"whole.jsonl"; ref = search_labels(items, llm, cache=whole, max_tokens=6, progress=False)
    data = whole.read_bytes(); ends = [i + 1 for i, c in enumerate(data) if c == ord("\n")]
    for cut in [ends[0] // 2, ends[1] + 3, ends[2] - 1]:
        p = tmp_path/f"cut{cut}.jsonl"; p.write_bytes(data[:cut])
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            assert search_labels(items, llm, cache=p, max_tokens=6, progress=False) == ref
        assert p.read_bytes() == data


# ---- whole stages: `python -m personalwab.puma.pipeline STAGE` killed with SIGKILL, then resumed -------------
SMALL = {"tiny_warmup_steps": 0, "torch_threads": 1, "prepare.limit": 6, "prepare.function_limit": 6, "prepare.llm": "tiny",
         "sft.max_steps": 2, "candidates.limit": 6, "candidates.n_sample": 4, "candidates.num_beams": 2,
         "candidates.max_new_tokens": 12, "candidates.batch_size": 4}
OUTPUTS = {"prepare": ["search_labels.jsonl", "function.jsonl", "param.jsonl", "sft.jsonl", "sft_prompt_completion.jsonl"],
           "candidates": ["candidates.jsonl", "scored.jsonl", "dpo.jsonl"]}

def _cfg(work):
    from personalwab.core.config import repo_root
    from personalwab.puma.pipeline import load_config
    return load_config(repo_root()/"configs/puma/tiny.yaml", {"work_dir": str(work), **SMALL})

@pytest.fixture(scope="module")
def reference(tmp_path_factory):
    "prepare -> sft -> candidates, uninterrupted: the bytes every resumed run must reproduce."
    from personalwab.puma.pipeline import run_pipeline
    cfg = _cfg(tmp_path_factory.mktemp("ref"))
    run_pipeline(cfg, ("prepare", "sft", "candidates"), log=lambda *_: None)
    return cfg, {s: {f: (cfg.dir(s)/f).read_bytes() for f in fs} for s, fs in OUTPUTS.items()}

def _kill_when(cmd, watch: Path, min_bytes: int, timeout=600):
    "Start `cmd`; SIGKILL it as soon as `watch` holds `min_bytes`. Returns whether it was killed before finishing."
    p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env={**os.environ, "OMP_NUM_THREADS": "1"})
    t0 = time.time()
    while p.poll() is None and time.time() - t0 < timeout:
        if watch.exists() and watch.stat().st_size >= min_bytes:
            p.send_signal(signal.SIGKILL); break
        time.sleep(0.01)
    p.wait(); err = p.stderr.read().decode(errors="replace"); p.stderr.close()
    return p.returncode == -signal.SIGKILL, err

@pytest.mark.slow
@pytest.mark.parametrize("stage", ["prepare", "candidates"])
def test_stage_killed_and_resumed_is_bit_identical(reference, tmp_path, stage):
    import shutil
    from personalwab.puma.pipeline import run_stage
    ref_cfg, ref = reference
    cfg = _cfg(tmp_path/"run")
    for s in ("prepare", "sft"):                         # earlier stages: copied from the reference run
        if s == stage: break
        shutil.copytree(ref_cfg.dir(s), cfg.dir(s))
    first = OUTPUTS[stage][0]
    cmd = [sys.executable, "-m", "personalwab.puma.pipeline", stage, "--set", *[f"{k}={v}" for k, v in {"work_dir": str(cfg.root), **SMALL}.items()]]
    cmd.insert(cmd.index("--set"), "--config"); cmd.insert(cmd.index("--set"), str(Path(__file__).parents[1]/"configs/puma/tiny.yaml"))
    killed, err = _kill_when(cmd, cfg.dir(stage)/first, len(ref[stage][first]) // 3)
    assert killed, f"the {stage} stage finished before it could be killed: {err[-1500:]}"
    assert not (cfg.dir(stage)/"DONE.json").exists()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        run_stage(cfg, stage, log=lambda *_: None)
    for f, data in ref[stage].items(): assert (cfg.dir(stage)/f).read_bytes() == data, f
