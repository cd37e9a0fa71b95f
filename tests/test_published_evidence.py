"""The committed evidence (results/) as `make reproduce` first checks it: every published trajectory, function and web
track, single- and multi-turn, is graded again by this checkout's scorer and scores what it was published with.
So are the outside agents' runs. (On a machine whose own SASRec training differs: tests/test_recommender_portable.py.)"""
from pathlib import Path
from personalwab.evidence.verify import rescore_published
from personalwab.core.config import results_dir


def test_every_published_trajectory_regrades_to_its_published_score():
    df = rescore_published(log=lambda *a: None)
    runs = sorted(p.name for p in (results_dir()/"runs").iterdir() if (p/"run.json").exists())
    assert sorted(df.run) == runs and len(runs) > 0, "a published run was not re-graded"
    differ = df[df.differ > 0]
    assert differ.empty, "published scores this scorer does not give:\n" + differ.to_string()


def test_every_outside_agents_run_regrades_to_its_published_score(tmp_path):
    "The outside agents' runs (results/browsergym/runs/: AgentLab's GenericAgent), which only their own environment re-runs."
    from personalwab.evidence.outside_runs import published_outside_runs, rescore_outside_runs
    df = rescore_outside_runs(scratch=tmp_path, log=lambda *a: None)
    assert sorted(df.run) == [p.name for p in published_outside_runs()] and len(df) > 0, "an outside run was not re-graded"
    assert set(df.track) == {"single", "multi"} and (df.records >= 10).all(), df.to_string()
    assert (df.differ == 0).all(), "published scores this scorer does not give:\n" + df.to_string()
