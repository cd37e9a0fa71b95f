"""The committed evidence (results/) as `make reproduce` first checks it: every published trajectory, function and web
track, single- and multi-turn, is graded again by this checkout's scorer and scores what it was published with.
(On a machine whose own SASRec training differs: tests/test_recommender_portable.py.)"""
from pathlib import Path
from personalwab.evidence.verify import rescore_published
from personalwab.core.config import results_dir


def test_every_published_trajectory_regrades_to_its_published_score():
    df = rescore_published(log=lambda *a: None)
    runs = sorted(p.name for p in (results_dir()/"runs").iterdir() if (p/"run.json").exists())
    assert sorted(df.run) == runs and len(runs) > 0, "a published run was not re-graded"
    differ = df[df.differ > 0]
    assert differ.empty, "published scores this scorer does not give:\n" + differ.to_string()
