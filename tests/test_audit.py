"""Issue #27: `check-data` as an audit, and the last unclear answers to bad input.

1. Every audit check (personalwab.data.audit.CHECKS) on a corrupted copy of the tiny benchmark written as a
   release folder: `check-data` prints the check's line and a count, exits 1 on an error (on a warning
   only with --strict); `load_benchmark` raises the first error as the same `DataError`. The two checks
   the loader enforces itself (A201, A401) end in its one-line `DataError` instead; the two checks of the
   files' user ids (A203 a history without a profile, A204 a profiles file of other users) are refused by
   the loader in one line with the check's code; extra profiles are A202 warnings.
2. The embedded default benchmark audits clean.
3. Bad input that used to give an unclear answer: an empty profile user id, a lone surrogate in an
   instruction, JSON nested thousands deep and over-long integers inside a record; titles with control
   characters load and reach the agent as they are.
4. `personalwab run METHOD --param` (and `params:` of a config file) refuses a key the method does not take
   or a value of another type with one line listing the method's parameters; valid params keep their hashes.
5. An action whose arguments nest ~900 levels deep is a scored invalid step with a cut record, not an episode error.
"""
import json, os, subprocess, sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from personalwab.data.audit import CHECKS, CORRUPTIONS, RELEASE_CORRUPTIONS, audit, corrupted, failing
from personalwab.cli import app
from personalwab.data.load import load_benchmark
from personalwab.data.official import INSTRUCTIONS, PRODUCTS, PROFILES, HISTORY, load_official, real_profiles_path, write_official
from personalwab.run.config import RunConfig
from personalwab.data.schema import DataError, tiny_benchmark
from personalwab.data.stats import check_data_cli

EXE = str(Path(sys.executable).parent/"personalwab")
BY_LOADER = {"A201": (INSTRUCTIONS, "test[0]", "user_id", "unknown user 'U9'"),
             "A401": ("user_history_part_1.json", "U1[0]", "product_info.parent_asin", "not in catalog")}


def release(tmp_path: Path, code: str) -> Path:
    d = tmp_path/code
    write_official(corrupted(CORRUPTIONS[code]), d, parts=2)
    return d


def cli(capsys, *args) -> tuple[int, str, str]:
    try: check_data_cli(*args); code = 0
    except SystemExit as e: code = e.code
    out = capsys.readouterr()
    assert "Traceback" not in out.out + out.err
    return code, out.out, out.err


@pytest.mark.parametrize("code", [c for c in CORRUPTIONS if c not in BY_LOADER])
def test_check_fires_on_corrupted_release(tmp_path, capsys, code):
    d = release(tmp_path, code)
    example = CHECKS[code].example
    found = audit(load_official(d, audit=False), files={k: str(d/f) for k, f in
                                                        [("products", PRODUCTS), ("history", HISTORY), ("tasks", INSTRUCTIONS), ("profiles", PROFILES)]})
    lines = [str(x).replace(f"{d}/", "") for x in found]
    assert example in lines, lines                                       # the check, its code, one line with file, record and field
    status, out, err = cli(capsys, d)
    assert f"  {example.replace(': ', f': {d}/', 1)}" in out.splitlines(), out
    row = next(l for l in out.splitlines() if l.startswith(f"  {code} "))
    assert row.split()[:2] == [code, CHECKS[code].severity] and int(row.split()[-1]) == sum(l.startswith(f"{code} ") for l in lines)
    errors = failing(found)
    if errors:
        assert status == 1 and err.count("\n") == 1 and "the audit found" in err, err
        with pytest.raises(DataError) as e: load_benchmark(d, progress=False)
        first = errors[0]
        assert (Path(e.value.file).name, e.value.record, e.value.field) == (Path(first.file).name, first.record, first.field)
        assert str(e.value).startswith(str(first.error())), str(e.value)
    else:
        assert status == 0 and err == "", err
        assert load_benchmark(d, progress=False).name == code             # warnings load
        status, out, err = cli(capsys, d, True)                          # --strict
        assert status == 1 and "--strict: warnings count as errors" in out and f"{code} x1" in err, err


@pytest.mark.parametrize("code", list(BY_LOADER))
def test_loader_refuses_what_it_cannot_build(tmp_path, capsys, code):
    d = release(tmp_path, code)
    fname, rec, field, text = BY_LOADER[code]
    status, out, err = cli(capsys, d)
    assert status == 1 and out == "" and err.count("\n") == 1, err
    assert f"{fname}: record {rec}: field {field}: " in err and text in err, err
    assert CHECKS[code].example in [str(x) for x in audit(corrupted(CORRUPTIONS[code]))]   # in memory, the audit names it


@pytest.mark.parametrize("code", list(RELEASE_CORRUPTIONS))
def test_release_checks_refuse_in_one_line_with_the_code(tmp_path, capsys, code):
    "A203, A204 (the files' user ids): `check-data` and `load_benchmark` refuse in one line: the check's code, file, record, field."
    d, c = tmp_path/code, RELEASE_CORRUPTIONS[code]; write_official(corrupted(c.change), d, parts=2); c.edit(d)
    example = CHECKS[code].example.split(": ", 1)[1]                               # file: record ...: field user_id: message
    if code == "A203": example = example.replace("user_history.json", "user_history_part_2.json")   # U2's part
    want = f"error: {d}/" + example.replace("field user_id: ", f"field user_id: [{code}] ")
    status, out, err = cli(capsys, d)
    assert status == 1 and out == "" and err.splitlines() == [want], err
    with pytest.raises(DataError) as e: load_benchmark(d, progress=False)
    assert str(e.value) == want.removeprefix("error: ") and "check-data" not in str(e.value)


def _two_users(d: Path) -> dict:
    "The tiny benchmark and a second user U2 (a copy of U1) as a release in `d` (history in 2 parts: U1, U2); its profiles."
    b = tiny_benchmark(); b.users["U2"] = b.users["U1"].model_copy(update={"user_id": "U2"})
    write_official(b, d, parts=2)
    return json.loads((d/PROFILES).read_text())


REAL = real_profiles_path()
HAS_REAL = pytest.mark.skipif(REAL is None, reason="the released user_profiles.json is not on this machine")
PROFILE_VARIANTS = {   # variant: (the new profiles from U1, U2's and the 1,000 released ones; exit status, then the error line's file, record, text
                       #           or the number of A202 warnings)
    "all foreign": (lambda own, real: {f"V{i}": own["U1"] for i in range(5)},
                    1, PROFILES, "(top level)", "[A204] none of the 5 profiles is of a user in user_history.json: its 2 users (the first: U1) have no profile here"),
    "some missing": (lambda own, real: {"U1": own["U1"]},
                     1, "user_history_part_2.json", "U2", "[A203] user has a history but no profile in user_profiles.json"),
    "none": (lambda own, real: {}, 1, "user_history_part_1.json", "U1", "[A203] user has a history but no profile in user_profiles.json (and 1 more: A203 x1)"),
    "extra": (lambda own, real: own | {f"V{i}": own["U1"] for i in range(3)}, 0, 3),
    "real, all foreign": (lambda own, real: real, 1, PROFILES, "(top level)", "[A204] none of the 1,000 profiles is of a user in user_history.json: its 2 users"),
    "real, extra": (lambda own, real: own | real, 0, 1000),
}


@pytest.mark.parametrize("variant", [pytest.param(v, marks=HAS_REAL) if v.startswith("real") else v for v in PROFILE_VARIANTS])
def test_profiles_of_other_users(tmp_path, capsys, variant):
    "Profiles of none of the benchmark's users, users left without a profile: one line with the check's code; extra profiles: A202 warnings."
    edit, *want = PROFILE_VARIANTS[variant]
    d = tmp_path/"r"; own = _two_users(d)
    (d/PROFILES).write_text(json.dumps(edit(own, json.loads(REAL.read_text()) if variant.startswith("real") else None)))
    status, out, err = cli(capsys, d)
    if want[0] == 1:
        fname, rec, text = want[1:]
        assert status == 1 and out == "" and len(err.splitlines()) == 1, err
        assert err.startswith(f"error: {d}/{fname}: record {rec}: field user_id: {text}"), err
        with pytest.raises(DataError) as e: load_official(d, audit=False)            # refused even without the audit: no user can be built
        assert (Path(e.value.file).name, e.value.record, e.value.field) == (fname, rec, "user_id")
    else:
        n = 2 + want[1]
        assert status == 0 and err == "" and f"valid: {n:,} users" in out and "audit: 0 errors, " + f"{want[1]:,} warnings" in out, out + err
        assert out.count(": field user_id: user has a profile but no behaviours in user_history.json") == min(want[1], 20), out
        status, out, err = cli(capsys, d, True)
        assert status == 1 and f"(A202 x{want[1]:,})" in err, err


@HAS_REAL
def test_real_profiles_beside_the_default_benchmark(tmp_path, capsys):
    "The issue's case: the 1,000 released profiles (none of them of the 150 generated users) beside the default benchmark."
    import shutil
    from personalwab.data.load import cached_default, default_dir
    cached_default(progress=False); d = tmp_path/"default"
    shutil.copytree(default_dir(), d); shutil.copyfile(REAL, d/PROFILES)
    status, out, err = cli(capsys, d)
    assert status == 1 and out == "" and len(err.splitlines()) == 1, err
    assert f"error: {d}/{PROFILES}: record (top level): field user_id: [A204] none of the 1,000 profiles is of a user in user_history.json: its 150 users" in err, err


def test_check_data_help_lists_the_checks():
    r = subprocess.run([EXE, "check-data", "--help"], capture_output=True, text=True, env={**os.environ, "COLUMNS": "200"})
    assert r.returncode == 0, r.stderr
    for c in CHECKS.values(): assert f"{c.code} {c.severity}: " in r.stdout, c.code


def test_default_benchmark_audits_clean():
    assert audit(load_benchmark(progress=False)) == []


# --- 2. the last unclear answers --------------------------------------------------------------------

def _edit(d: Path, name: str, fn) -> None:
    p = d/name; o = json.loads(p.read_text()); fn(o); p.write_text(json.dumps(o))


@pytest.mark.parametrize("case", ["empty user id", "lone surrogate", "deep record", "long integer"])
def test_unclear_inputs_name_file_record_and_field(tmp_path, capsys, case):
    d = tmp_path/"r"; write_official(tiny_benchmark(), d)
    if case == "empty user id":
        _edit(d, PROFILES, lambda o: o.update({"": o["U1"]}))
        want = (PROFILES, "''", "user_id", "the user id (the key) is empty")
    elif case == "lone surrogate":
        p = d/INSTRUCTIONS; p.write_text(p.read_text().replace("Recommend something", "Recommend \\ud800 something", 1))
        want = (INSTRUCTIONS, "test[0]", "task", "lone surrogate")
    elif case == "deep record":
        p = d/PRODUCTS; p.write_text(p.read_text().replace('"details": {}', '"details": {"x": ' + "[" * 5000 + "]" * 5000 + "}", 1))
        want = (PRODUCTS, "B000000001", "details.x", "JSON nested too deeply to read")
    else:
        p = d/INSTRUCTIONS; p.write_text(p.read_text().replace('"timestamp": 3000', '"timestamp": ' + "9" * 5000, 1))
        want = (INSTRUCTIONS, "test[0]", "timestamp", "Exceeds the limit")
    with pytest.raises(DataError) as e: load_benchmark(d, progress=False)
    assert (Path(e.value.file).name, e.value.record) == want[:2] and e.value.field.startswith(want[2]) and want[3] in str(e.value), str(e.value)
    status, out, err = cli(capsys, d)
    assert status == 1 and out == "" and err.count("\n") == 1 and "unexpected" not in err, err
    assert f"{want[0]}: record {want[1]}: field {want[2]}" in err, err


def test_control_characters_in_titles_load_and_reach_the_agent(tmp_path, capsys):
    from personalwab.env.environment import initial_observation
    from personalwab.env.render import render_product
    from personalwab.reproduce.trajectory import visible
    odd = "Trail\x00 Shoes \x1b[2J \u202egnp"
    def fn(b):
        p = b.products["B000000002"] = b.products["B000000002"].model_copy(update={"title": odd})
        b.users["U1"].behaviours[2].product_info = p; b.tasks["test"][0].target.product_info = p
        b.tasks["test"][0].type = "review"
    d = tmp_path/"cc"; write_official(corrupted(fn), d)
    b = load_benchmark(d, progress=False)
    assert b.products["B000000002"].title == odd
    assert odd in render_product(b.products["B000000002"]) and odd in initial_observation(b.tasks["test"][0])
    status, out, err = cli(capsys, d)
    assert status == 0 and "audit: 0 errors, 0 warnings" in out, err
    assert visible(odd) == "Trail\\x00 Shoes \\x1b[2J \\u202egnp"


# --- 3. method parameters ------------------------------------------------------------------------------

@pytest.mark.parametrize("args, needle", [
    (["no_memory", "--param", "max_token=32"], "params.max_token: no such parameter; no_memory takes constrained: bool, context_margin: float"),
    (["no_memory", "-p", "constrained=no"], 'params.constrained: expected bool, got "no" (str); no_memory takes'),
    (["last_memory", "-p", "max_tokens=many"], 'params.max_tokens: expected int, got "many" (str)'),
    (["rules", "-p", "temprature=0.5"], "rules takes max_items: int, memory_k: int, token_budget: int (and ignores the LLM agents' parameters)"),
    (["rules", "-p", "constrained=1"], "params.constrained: expected bool, got 1 (int)"),
    (["oracle", "-p", "pause=1"], "params.pause: no such parameter; oracle takes history: int, pause_s: float"),
])
def test_run_refuses_bad_method_params(tmp_path, args, needle):
    r = CliRunner().invoke(app, ["run", *args, "--data", "tiny", "--out-dir", str(tmp_path/"runs"), "--no-progress"])
    assert r.exit_code == 2 and needle in r.stderr and len(r.stderr.strip().splitlines()) == 1, r.output
    assert not (tmp_path/"runs").exists()


def test_config_file_params_are_checked_the_same(tmp_path):
    cf = tmp_path/"run.yaml"; cf.write_text("method: no_memory\ndata: tiny\nparams:\n  max_tokens: 32\n  constrianed: true\n")
    r = CliRunner().invoke(app, ["run", "--config", str(cf), "--out-dir", str(tmp_path/"runs")])
    assert r.exit_code == 2 and "params.constrianed: no such parameter; no_memory takes " in r.stderr, r.output
    assert len(r.stderr.strip().splitlines()) == 1 and not (tmp_path/"runs").exists()


def test_valid_params_keep_their_run_hashes():
    "Hashes computed before the parameter check existed (on the main branch): a valid run resumes where it was."
    assert RunConfig(method="no_memory", params={"constrained": True, "max_tokens": 24}).hash == "ec4bb6fdbfc73e743cbec90e91a5135e34cbd4471ef72f1ebcbe0e3e3fc78fcc"
    assert RunConfig(method="oracle", params={"pause_s": 0.5}).hash == "d4797ed2376cd5a26fc687912b31aa188f33972b05fb18f5cd8544360c9450b9"
    from personalwab.run.runner import check_names
    check_names(RunConfig(method="no_memory", params={"constrained": True, "max_tokens": 24, "original_memory_length": True}))
    check_names(RunConfig(method="puma", params={"token_budget": 768}))


def test_the_paper_tables_configs_pass():
    "The paper notebooks give every method but PUMA the same params (the rules rows too, which ignore them): all accepted."
    from personalwab.reproduce.experiments import MULTI_METHODS, SINGLE_METHODS, table_configs
    from personalwab.run.runner import check_names
    shared = {"constrained": True, "context_margin": 0.6}
    puma = {"full": "tiny", "version": "v1", "token_budget": 512}
    for methods, track in [(["rules", "rules_category", *SINGLE_METHODS], "single"), (["rules", *MULTI_METHODS], "multi")]:
        for lengths in ("original", "paper"):
            cfgs = table_configs(methods, track, puma=puma, agent_params=shared, memory_lengths=lengths)
            assert set(cfgs) == set(methods)
            for cfg in cfgs.values(): check_names(cfg)


# --- 4. model output no record can hold ----------------------------------------------------------------

class DeepArguments:
    "Calls search with arguments (a JSON string, as an API returns them) nested 900 levels deep (then a valid search, never reached)."
    name, params = "deep", {}
    def solve(self, env, task, seed=None):
        env.reset(task)
        env.step({"name": "search_product_by_query", "arguments": '{"query": ' + '{"x": ' * 900 + '"q"' + "}" * 900 + "}"})
        env.step({"name": "search_product_by_query", "arguments": {"query": "water bottle"}})
        return env.episode()


def test_deeply_nested_arguments_are_a_scored_invalid_step(tmp_path):
    from personalwab.run.records import read_jsonl
    from personalwab.run.runner import run
    cfg = RunConfig(method="rules", data="tiny", env_params={"engine": "bm25s"}, workers=2)
    r = run(cfg, out_dir=tmp_path, progress=False, agent_factory=lambda c, b: DeepArguments(), benchmark=tiny_benchmark())
    recs = read_jsonl(r.dir/"results.jsonl")
    assert len(recs) == 1 and all(x["status"] == "ok" and x["error"] is None for x in recs), recs
    for x in recs:
        assert x["steps"] == 1 and x["actions"] == [{"name": "search_product_by_query", "arguments": {"query": {"x": {"x": "{...}"}}}}]
        assert x["observations"] == ["Error: arguments of search_product_by_query are nested more than 32 levels deep (cut to 3 in the record)"]
        assert x["rewards"] == [[0.0, 0.0]] and (x["function_acc"], x["result_acc"]) == (0.0, 0.0)   # single-turn: the one try, scored


def test_docs_page_lists_every_check():
    "The table at the top of nbs/data/07_audit.ipynb (the docs page) shows every check with its code, severity and example message."
    nb = json.loads((Path(__file__).resolve().parents[1]/"nbs"/"data"/"07_audit.ipynb").read_text())
    md = "\n".join("".join(c["source"]) for c in nb["cells"] if c["cell_type"] == "markdown")
    for c in CHECKS.values():
        assert f"| {c.code} | {c.severity} | `{c.name}` |" in md and c.example.replace("|", "\\|") in md, c.code
