"""The committed evidence (results/) as `make reproduce` first checks it: every published trajectory, function and web
track, single- and multi-turn, is graded again by this checkout's scorer and scores what it was published with."""
from pathlib import Path
from personalwab.evidence.verify import rescore_published
from personalwab.core.config import results_dir


def test_every_published_trajectory_regrades_to_its_published_score():
    df = rescore_published(log=lambda *a: None)
    runs = sorted(p.name for p in (results_dir()/"runs").iterdir() if (p/"run.json").exists())
    assert sorted(df.run) == runs and len(runs) > 0, "a published run was not re-graded"
    differ = df[df.differ > 0]
    assert differ.empty, "published scores this scorer does not give:\n" + differ.to_string()


def test_regrading_ignores_a_recommender_trained_on_this_machine(tmp_path, monkeypatch):
    """A machine whose SASRec training gave other weights (here: another seed, in a cache of its own) still re-grades every
    published record to its published score: recommendations are graded with the published model read from results/.
    The same records graded with this machine's model differ (so the check would fail if it used it)."""
    import sys
    from personalwab.core.config import cache_dir
    from personalwab.evidence.models import local_sasrec
    from personalwab.evidence.runs import restore_run
    from personalwab.run.rescore import rescore
    from personalwab.run.config import load_data
    from personalwab.env.sasrec import SASRecConfig, data_key, train_sasrec
    monkeypatch.setenv("PERSONALWAB_CACHE", str(tmp_path/"cache"))
    b = load_data("default", progress=False)
    train_sasrec(b, seed=1, epochs=20, out_dir=cache_dir("sasrec", data_key(b, SASRecConfig())), progress=False)
    assert local_sasrec(b) == "differs"
    runs = sorted(p for p in (results_dir()/"runs").iterdir() if (p/"run.json").exists())
    with_local = sum(rescore(restore_run(p, tmp_path/"r")/"results.jsonl", benchmark=b, write=False)["rescored"]["n_changed"]
                     for p in runs if p.name.startswith(("rules-single", "rules-multi")))
    assert with_local > 0, "this machine's recommender re-grades the rules' recommendations as published: the test shows nothing"
    df = rescore_published(log=lambda *a: None)
    assert int(df.differ.sum()) == 0 and set(df.recommender) == {"published"}, df[df.differ > 0].to_string()
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]/"tools"))
    from reproduce import check_published
    said = []
    assert check_published(said.append) == 0
    assert any("graded with the published recommender" in s for s in said), said
