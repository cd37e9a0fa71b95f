"""The evaluation-harness commands end to end through the CLI, on real runs (oracle on the default
benchmark, SmolLM2 where a model is needed): `score --rescore`, `submit prepare/validate` (and a
tampered submission rejected), `run --estimate`, `consistency`, `methods`. Everything is written
under pytest's temporary folders."""
import json, shutil
from pathlib import Path
import pytest
from typer.testing import CliRunner

pytestmark = pytest.mark.xdist_group("harness")

@pytest.fixture(scope="module")
def app():
    from personalwab.cli import app
    return app

@pytest.fixture(scope="module")
def oracle_run(tmp_path_factory, app):
    out = tmp_path_factory.mktemp("runs")
    r = CliRunner().invoke(app, ["run", "oracle", "--data", "tiny", "--out-dir", str(out), "--no-progress"])
    assert r.exit_code == 0, r.output
    return next(p for p in out.iterdir() if p.is_dir())

def test_methods_lists_every_method(app):
    from personalwab.agents.methods import METHODS
    r = CliRunner().invoke(app, ["methods"])
    assert r.exit_code == 0
    for m in [*METHODS, "oracle"]: assert f"\n{m} " in "\n" + r.output

def test_run_records_protocol(oracle_run):
    from personalwab.run.protocol import PROTOCOL_VERSION
    assert json.loads((oracle_run/"env.json").read_text())["invocations"][-1]["protocol"]["version"] == PROTOCOL_VERSION
    assert json.loads((oracle_run/"summary.json").read_text())["protocol"]["version"] == PROTOCOL_VERSION

def test_score_rescore_writes_new_summary_beside_old(app, oracle_run):
    from personalwab.run.protocol import PROTOCOL_VERSION
    old = (oracle_run/"summary.json").read_text()
    r = CliRunner().invoke(app, ["score", str(oracle_run), "--rescore"])
    assert r.exit_code == 0, r.output
    assert "0 record(s) changed" in r.output
    assert (oracle_run/"summary.json").read_text() == old
    new = json.loads((oracle_run/f"summary.protocol-{PROTOCOL_VERSION}.json").read_text())
    assert new["rescored"]["n_changed"] == 0 and new["complete"]

def test_submit_prepare_validate_and_tampered(app, oracle_run, tmp_path):
    sub = tmp_path/"sub"
    r = CliRunner().invoke(app, ["submit", "prepare", str(oracle_run), "--out", str(sub), "--contact", "me@example.org"])
    assert r.exit_code == 0, r.output
    r = CliRunner().invoke(app, ["submit", "validate", str(sub)])
    assert r.exit_code == 0 and r.output.startswith("verified"), r.output
    bad = tmp_path/"bad"; shutil.copytree(sub, bad)
    rec = json.loads((bad/"results.jsonl").read_text())
    rec["actions"] = [{"name": "search_product_by_query", "arguments": {"query": "trail shoes"}}]
    (bad/"results.jsonl").write_text(json.dumps(rec) + "\n")
    m = json.loads((bad/"manifest.json").read_text()); m.pop("results_sha256"); (bad/"manifest.json").write_text(json.dumps(m))
    r = CliRunner().invoke(app, ["submit", "validate", str(bad)])
    assert r.exit_code == 1
    assert "results.jsonl: line 1 (task 'test-00000' trial 0): field function_acc: claims 1.0000, re-scored 0.0000" in r.output, r.output

def test_run_estimate_calls_no_model(app, tmp_path):
    r = CliRunner().invoke(app, ["run", "no_memory", "--data", "tiny", "--out-dir", str(tmp_path), "--estimate"])
    assert r.exit_code == 0, r.output
    assert "estimate for 1 task(s) x 1 trial(s) (no model called)" in r.output
    assert not any(tmp_path.iterdir())                 # nothing was run

def test_consistency_cli(app, tmp_path):
    out = tmp_path/"runs"
    r = CliRunner().invoke(app, ["run", "oracle", "--data", "tiny", "--trials", "2", "--out-dir", str(out), "--no-progress"])
    assert r.exit_code == 0, r.output
    r = CliRunner().invoke(app, ["consistency", str(out)])
    assert r.exit_code == 0, r.output
    assert "deterministic" in r.output and "errored trials:" in r.output
