"""The PUMA training settings keep their identity (issue #26, one schema for training settings).

The SFT and DPO stage settings of every shipped pipeline config, and the trainer parameters they
give, are pinned as they were before the change (commit 7947f77): the stage hashes that decide
whether a finished stage is reused (and the `model_version` of a trained PUMA, part of its run
hash) depend on them, in this order.
"""
import dataclasses, hashlib, json
from pathlib import Path

import pytest

from personalwab.puma.pipeline import load_config

ROOT = Path(__file__).resolve().parents[1]
PINNED = {  # config: {stage: (sha of the stage settings, sha of the trainer parameters with seed 7)}
    "all": {"sft": ("29ab963ce7799ebd", "1ffa882d8415e7cf"), "dpo": ("9765f916f6141dab", "3d707cfdec70ff88")},
    "candidates": {"sft": ("aeac258c805c9efa", "fd805d872edde1b6"), "dpo": ("d0cb9125ccec9639", "783f716c8fe5e62e")},
    "paper": {"sft": ("375cbef8dd9da7dc", "5fe99b58f00752e1"), "dpo": ("12171b02a377a195", "6079b530728e6eba")},
    "quick": {"sft": ("b2debb8608afdcf5", "73978f2e37b46792"), "dpo": ("e92f67cb6eb63fa2", "d668309e94943712")},
    "tiny": {"sft": ("381fbd5006dc1532", "0740bfe2df2606f0"), "dpo": ("8eeafa27d66cef82", "f3e5268f9f5f5aba")},
}


def _sha(obj) -> str: return hashlib.sha256(json.dumps(obj).encode()).hexdigest()[:16]


def _fields(p) -> dict:
    return p.model_dump() if hasattr(p, "model_dump") else dataclasses.asdict(p)


@pytest.mark.parametrize("name", sorted(PINNED))
def test_training_settings_pinned(name):
    cfg = load_config(ROOT/"configs"/"puma"/f"{name}.yaml")
    for stage, (settings, params) in PINNED[name].items():
        st = getattr(cfg, stage)
        assert _sha(st.model_dump()) == settings, (name, stage)
        assert _sha(_fields(st.params(7))) == params, (name, stage)
