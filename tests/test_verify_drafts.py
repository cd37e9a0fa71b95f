"""The verification with drafts (`evidence.drafts`, `verify_run(..., drafts=True)`) decides what it decides without:
published episodes re-run with SmolLM2 with and without their published replies as drafts give the same verdicts
(identical actions, scores), and the drafts are mostly accepted where a backend uses them.

Short episodes of the published runs: a function-track memory agent (its tool call is constrained: the draft is
checked under the constraint) and PUMA on SmolLM2 (two unconstrained calls); and, where `PERSONALWAB_SLOW` is set, a
multi-turn episode with the simulated user (several minutes more). The drafts reach the models through the runner
(`run(..., drafts=)`), nothing patched: after a drafted re-run, `LLM.chat_many` and the runner are what they were."""
import os
from pathlib import Path
import pytest

EPISODES = [("no_memory-single-db407e70", ["test-00115"]),    # function track, no memory: 1 constrained call
            ("puma-single-a10613fe", ["test-00000"])]          # PUMA on SmolLM2: 2 calls, 26 reply tokens
MULTI = ("reflection-multi-6d7f62bb", ["test-00016"])          # multi-turn: 5 simulator replies

def _config(name):
    from personalwab.core.config import results_dir
    from personalwab.run.config import RunConfig
    from personalwab.run.records import read_json
    return RunConfig(**read_json(results_dir()/"runs"/name/"run.json", "published run")["config"])

def _clear_prefix_caches():
    "Each re-run starts without the prompt prefixes of the one before (the models are shared in a process)."
    from personalwab.env.resources import built, shared
    for key in built():
        if (pc := getattr(shared(key, lambda: None), "prefix_cache", None)) is not None: pc.clear()

def _both(name, ids, tmp: Path, monkeypatch):
    from personalwab.core.config import results_dir
    from personalwab.evidence.drafts import packed_episodes
    from personalwab.evidence.verify import verify_run
    from personalwab.env.resources import release
    monkeypatch.setenv("PERSONALWAB_LLM_CACHE", "0")
    release("llm")      # an LLM another test built in this process holds the response cache: built again without it
    packed, cfg, out = packed_episodes(results_dir()/"runs"/name, ids, tmp/"pub"), _config(name), {}
    try:
        for drafts in (False, True):
            _clear_prefix_caches()
            out[drafts] = verify_run(packed, name, cfg, scratch=tmp/f"run-{drafts}", threads=1, drafts=drafts)
    finally: release("llm")                       # later tests get their LLMs as they would have
    return out[False], out[True]

def _same_verdicts(plain, drafted):
    assert plain.error is None and drafted.error is None, (plain.error, drafted.error)
    assert (drafted.tasks, drafted.identical, drafted.differing) == (plain.tasks, plain.identical, plain.differing)
    assert drafted.largest_diff == plain.largest_diff
    assert plain.tasks and plain.identical == plain.tasks       # and both repeat the published episode
    assert plain.draft_tokens is None and plain.undrafted is None   # off: no draft columns

@pytest.fixture(scope="module")
def smollm2():
    from personalwab.llm.hf import smollm2_path
    try: smollm2_path()
    except Exception as e: pytest.skip(f"SmolLM2 is not available offline: {e}")

def test_function_track_drafts_constrained_calls(smollm2, tmp_path, monkeypatch):
    from personalwab.llm.base import LLM
    from personalwab.llm.drafting import active_drafts
    from personalwab.run import runner
    before = (LLM.chat_many, runner._solve_one)
    plain, drafted = _both(*EPISODES[0], tmp_path, monkeypatch)
    _same_verdicts(plain, drafted)
    assert drafted.draft_calls == 1 and drafted.undrafted is None          # the constrained call, with its draft
    # the record keeps the call, the model laid its JSON out in lines: the call's draft follows that layout, whole
    assert drafted.draft_accepted == drafted.draft_tokens > 0
    assert (LLM.chat_many, runner._solve_one) == before and active_drafts() is None   # nothing patched, nothing left

def test_puma_drafts_mostly_accepted(smollm2, tmp_path, monkeypatch):
    plain, drafted = _both(*EPISODES[1], tmp_path, monkeypatch)
    _same_verdicts(plain, drafted)
    assert drafted.draft_calls == 2 and drafted.undrafted is None
    assert drafted.draft_accepted >= 0.8 * drafted.draft_tokens > 0

@pytest.mark.skipif(not os.environ.get("PERSONALWAB_SLOW"), reason="a multi-turn episode: set PERSONALWAB_SLOW=1")
def test_multi_turn_simulator_drafts(smollm2, tmp_path, monkeypatch):
    plain, drafted = _both(*MULTI, tmp_path, monkeypatch)
    _same_verdicts(plain, drafted)
    assert drafted.draft_calls == 9                              # the agent's constrained steps
    assert drafted.draft_accepted >= 0.5 * drafted.draft_tokens > 0
    assert drafted.undrafted == "5 sampled or beams"             # the simulated user samples (a seed per turn)
