"""The recommender is part of the benchmark: the embedded benchmark's SASRec ships with the package, so on a machine whose
own training gives other weights, runs, `score --rescore` and the leaderboard's validation grade recommendations as the
published runs were graded. The other machine is stood in for by a model trained with another seed into the cache (where
a machine's own training writes it); each test also shows that this model would have changed the scores, so the tests
fail if anything graded with it."""
import json, shutil
from pathlib import Path
import pytest
from personalwab.core.config import results_dir, repo_root

pytestmark = pytest.mark.xdist_group("recommender")   # one worker: the stand-in is trained once
RULES = "rules-single-5360a28b"               # a published function-track run of the rules agent (150 tasks)


@pytest.fixture(scope="module")
def other_machine(tmp_path_factory):
    """(benchmark, the stand-in's recommender, the shipped model's identity), with `PERSONALWAB_CACHE` holding the
    stand-in's model where this machine's training would have written it."""
    mp = pytest.MonkeyPatch()
    tmp = tmp_path_factory.mktemp("other-machine")
    mp.setenv("PERSONALWAB_CACHE", str(tmp/"cache")); mp.setenv("PERSONALWAB_RUNS", str(tmp/"runs"))
    from personalwab.core.config import cache_dir
    from personalwab.env.sasrec import (Recommender, SASRecConfig, compare_with_shipped, data_key, shipped_sasrec,
                                        train_sasrec)
    from personalwab.run.config import load_data
    b = load_data("default", progress=False)
    ck = train_sasrec(b, seed=1, epochs=20, out_dir=cache_dir("sasrec", data_key(b, SASRecConfig())), progress=False)
    assert compare_with_shipped(b, ck) == "differs"
    yield b, Recommender.load(ck), {"sha256": shipped_sasrec(b)[1]["sha256"], "source": "shipped"}
    mp.undo()


def _regrade(b, recs, recommender):
    "The (function_acc, result_acc) of each record's actions, graded with `recommender` (None: the benchmark's own)."
    from personalwab.env.metrics import best_attempt
    from personalwab.run.protocol import grade
    from personalwab.run.rescore import scoring_env
    env = scoring_env(None, b, recommender)
    return {r["task_id"]: tuple(best_attempt(grade(env, b.task(r["task_id"]), r["actions"]))) for r in recs}


def test_a_run_scores_recommendations_as_published(other_machine, tmp_path):
    "The rules agent re-run here on published recommendation tasks: the same actions, the same scores, the shipped digest."
    from personalwab.evidence.runs import read_records_gz
    from personalwab.run.config import RunConfig
    from personalwab.run.runner import run
    b, local, shipped = other_machine
    meta = json.loads((results_dir()/"runs"/RULES/"run.json").read_text())
    pub = {r["task_id"]: r for r in read_records_gz(results_dir()/"runs"/RULES/"records.jsonl.gz")}
    rec = [t for t, r in pub.items() if r["type"] == "recommend"]
    ids = ([t for t in rec if pub[t]["result_acc"] > 0] + [t for t in rec if pub[t]["result_acc"] == 0])[:12]   # hits first
    cfg = RunConfig.model_validate(meta["config"]).model_copy(update={"task_ids": ids, "limit": None, "workers": 1})
    res = run(cfg, out_dir=tmp_path, benchmark=b, progress=False)
    assert res.errors == 0
    mine = {r["task_id"]: r for r in map(json.loads, (res.dir/"results.jsonl").read_text().splitlines())}
    assert [mine[i]["actions"] for i in ids] == [pub[i]["actions"] for i in ids]
    assert [(mine[i]["function_acc"], mine[i]["result_acc"]) for i in ids] == \
           [(pub[i]["function_acc"], pub[i]["result_acc"]) for i in ids]
    assert res.summary["protocol"]["recommender"] == shipped
    env_json = json.loads((res.dir/"env.json").read_text())
    assert env_json["invocations"][-1]["protocol"]["recommender"] == shipped
    with_local = _regrade(b, [mine[i] for i in ids], local)
    assert any(with_local[i] != (pub[i]["function_acc"], pub[i]["result_acc"]) for i in ids), \
        "the stand-in's recommender grades these tasks as published: the test shows nothing"


def test_score_rescore_is_unchanged_and_names_a_changed_recommender(other_machine, tmp_path, capsys):
    """`score --rescore` of a published run changes no record and names the shipped model; a run that recorded another
    recommender (the stand-in's) is re-graded and says so in one line."""
    from personalwab.cli import rescore_cli
    from personalwab.evidence.runs import restore_run
    b, local, shipped = other_machine
    d = restore_run(results_dir()/"runs"/RULES, tmp_path/"runs")
    s = rescore_cli(d)
    out = capsys.readouterr().out
    assert s["rescored"]["n_changed"] == 0 and s["protocol"]["recommender"] == shipped, s["rescored"]
    assert f"recommender: {shipped['sha256'][:12]} (shipped)" in out and "another recommender" not in out, out
    recs = [json.loads(l) for l in (d/"results.jsonl").read_text().splitlines()]
    with_local = _regrade(b, recs, local)
    assert any(with_local[r["task_id"]] != (r["function_acc"], r["result_acc"]) for r in recs)
    # the run says it was graded with the stand-in's model: re-grading says so, in one line
    (d/"env.json").write_text(json.dumps({"invocations": [{"protocol": s["protocol"] | {"recommender": local.identity()}}]}))
    s2 = rescore_cli(d)
    line = [l for l in capsys.readouterr().out.splitlines() if "another recommender" in l]
    assert len(line) == 1 and local.digest[:12] in line[0] and shipped["sha256"][:12] in line[0], line
    assert s2["rescored"]["recommender"] == line[0]


def test_the_leaderboard_validates_the_repository_submission(other_machine, tmp_path):
    """The repository's own submission validates (it failed on AMD while grading used a model trained there); one whose
    manifest names another recommender is refused with one line naming the field."""
    from personalwab.evidence.leaderboard import validate
    b, local, shipped = other_machine
    sub = repo_root()/"leaderboard"/"submissions"/"oracle-default-single"
    rep = validate(sub, benchmark=b)
    assert rep.ok, rep.summary()
    assert json.loads((sub/"manifest.json").read_text())["recommender"] == shipped
    other = tmp_path/"sub"; shutil.copytree(sub, other)
    m = json.loads((other/"manifest.json").read_text()); m["recommender"] = local.identity()
    (other/"manifest.json").write_text(json.dumps(m))
    rep2 = validate(other, benchmark=b)
    assert [e for e in rep2.errors if "field recommender.sha256" in e and local.digest[:12] in e], rep2.errors


def test_published_evidence_regrades_with_the_shipped_model(other_machine):
    "Every published record re-grades to its published score, and the reproduction says which recommender graded it."
    import sys
    from personalwab.evidence.models import local_sasrec
    from personalwab.evidence.verify import rescore_published
    b, local, shipped = other_machine
    assert local_sasrec(b) == "differs"
    df = rescore_published(log=lambda *a: None)
    assert int(df.differ.sum()) == 0 and set(df.recommender) == {"published"}, df[df.differ > 0].to_string()
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]/"tools"))
    from reproduce import check_published
    said = []
    assert check_published(said.append) == 0
    assert any("graded with the published recommender" in s for s in said), said
