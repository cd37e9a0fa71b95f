"""CI runs the reproduction notebooks in their smoke profile (a handful of tasks each)."""
import os, subprocess, sys
from pathlib import Path
import pytest

ROOT = Path(__file__).resolve().parents[1]
PAPER_NBS = sorted((ROOT/"nbs"/"paper").glob("*.ipynb"))

@pytest.mark.parametrize("nb", PAPER_NBS, ids=[p.stem for p in PAPER_NBS])
def test_paper_notebook_smoke(nb, tmp_path):
    r = subprocess.run([sys.executable, str(ROOT/"tools"/"reproduce.py"), "--profile", "smoke", "--only", nb.stem,
                        "--out", str(tmp_path)], capture_output=True, text=True, cwd=ROOT)
    print(r.stdout[-10000:])
    assert r.returncode == 0, (r.stdout + r.stderr)[-6000:]
    assert "[IPKernelApp]" not in r.stdout + r.stderr, "the kernel's own log reached the console"
    produced = [p for p in tmp_path.iterdir() if p.suffix in {".csv", ".md", ".png", ".svg"}]
    assert produced, f"{nb.name} wrote no table or figure"
    for stem in {p.stem for p in produced}:    # tables as CSV + Markdown, figures as PNG + SVG, never half of a pair
        exts = {p.suffix for p in produced if p.stem == stem}
        assert exts in ({".csv", ".md"}, {".png", ".svg"}, {".csv", ".md", ".png", ".svg"}), f"{nb.name}: {stem} has only {sorted(exts)}"
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")], "temporary files left behind"
    for md in (p for p in produced if p.suffix == ".md"):   # every table says what produced it
        assert "**Machine**" in md.read_text() and "**Code**" in md.read_text(), f"{md.name} lacks its provenance"

def test_statistics_notebook_runs_on_official_format_data(tmp_path):
    "Official-format files instead of the embedded benchmark by changing the `data` parameter only (the release's layout, written from the default benchmark)."
    import papermill as pm
    from personalwab.data.load import load_benchmark
    from personalwab.data.official import write_official
    release = tmp_path/"release"
    write_official(load_benchmark(progress=False), release)
    nb = ROOT/"nbs"/"paper"/"table2_fig3_fig4_statistics.ipynb"
    pm.execute_notebook(str(nb), str(tmp_path/"executed.ipynb"), kernel_name="python3", cwd=str(nb.parent), progress_bar=False,
                        parameters={"out_dir": str(tmp_path/"figures"), "smoke": False, "data": str(release)})
    md = (tmp_path/"figures"/"table2_statistics.md").read_text()
    assert f"official-format data from {release}" in md, md[-1500:]
    assert "150 users, 3,000 products" in md      # the same benchmark, read back from the release's files

def test_stderr_moves_from_the_report_to_the_log(tmp_path):
    "Warnings and progress bars a notebook's code writes to stderr go to reproduce's log; printed lines and outputs stay."
    import nbformat
    sys.path.insert(0, str(ROOT/"tools"))
    from reproduce import move_stderr, noise
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("train()", outputs=[
        nbformat.v4.new_output("stream", name="stdout", text="[puma] sft: finished in 376s\n"),
        nbformat.v4.new_output("stream", name="stderr", text="/home/x/site-packages/t.py:1: FutureWarning: old\n"),
        nbformat.v4.new_output("stream", name="stderr", text="\rSASRec epochs:  50%|#####     | 1/2 [00:01<00:01]")])])
    p = tmp_path/"n.ipynb"; nbformat.write(nb, p)
    assert noise(p)                                   # before: a warning with a machine path, a progress bar
    log = []
    assert move_stderr(p, log.append) == 2
    assert not noise(p)
    assert [o["name"] for o in nbformat.read(p, as_version=4).cells[0].outputs] == ["stdout"]
    assert len(log) == 1 and "cell 0 (2 lines" in log[0] and "FutureWarning" in log[0]

def test_kernel_log_drops_only_the_shutdown_race(capfd):
    "What the kernels write to stderr is replayed after the notebook, less the line jupyter_client's shutdown interrupt can cause."
    sys.path.insert(0, str(ROOT/"tools"))
    from reproduce import kernel_log
    with kernel_log():
        # a child process, as a kernel is: it inherits the redirected descriptor
        subprocess.run([sys.executable, "-c", "import sys; sys.stderr.write('[IPKernelApp] ERROR | KeyboardInterrupt caught in kernel.\\n'"
                        "'[IPKernelApp] ERROR | Exception in message handler:\\n')"], check=True)
        os.write(2, b"from this process\n")          # this process's own descriptor 2 (sys.stderr is pytest's here)
        assert capfd.readouterr().err == ""          # nothing on the console while the block runs
    err = capfd.readouterr().err
    assert "KeyboardInterrupt caught in kernel" not in err
    assert "[IPKernelApp] ERROR | Exception in message handler:" in err and "from this process" in err

def _parameters(nb: Path) -> set[str]:
    "Names assigned in a notebook's `parameters` cell."
    import ast, nbformat
    cell = next(c for c in nbformat.read(nb, as_version=4).cells if "parameters" in c.metadata.get("tags", []))
    return {t.id for n in ast.parse(cell.source).body if isinstance(n, ast.Assign) for t in n.targets if isinstance(t, ast.Name)}

def test_quick_profile_sets_parameters_the_notebooks_have():
    "Every override of the quick profile is a parameter of some paper notebook (a misspelt name would silently do nothing)."
    sys.path.insert(0, str(ROOT/"tools"))
    import reproduce
    names = set().union(*map(_parameters, PAPER_NBS))
    assert set(reproduce.QUICK) <= names, set(reproduce.QUICK) - names
    assert (ROOT/reproduce.QUICK["puma_config"]).exists()
    for nb in PAPER_NBS:                      # the quick task limit reaches every notebook that runs tasks
        p = _parameters(nb)
        if {"methods", "single_methods", "puma_config"} & p: assert {"limit", "single_limit"} & p, nb.name

def test_quick_profile_labels_its_tables_as_an_illustration(tmp_path):
    sys.path.insert(0, str(ROOT/"tools"))
    import reproduce
    (tmp_path/"table3_single_turn.md").write_text("| method | acc |\n")
    (tmp_path/"table3_single_turn.csv").write_text("method,acc\n")
    assert reproduce.label_illustration(tmp_path) == 1
    assert reproduce.label_illustration(tmp_path) == 0          # labelled once, however often the profile runs
    text = (tmp_path/"table3_single_turn.md").read_text()
    assert text.startswith("> **Illustration only**") and text.endswith("| method | acc |\n")
    assert (tmp_path/"table3_single_turn.csv").read_text() == "method,acc\n"
    assert "Illustration only" in (tmp_path/"README.md").read_text()

def test_default_profile_writes_only_ignored_files():
    "`make reproduce` leaves `git status` clean: its outputs go to an ignored folder; only `--publish` writes the tracked reports."
    sys.path.insert(0, str(ROOT/"tools"))
    import reproduce
    out = reproduce.default_out("default")
    assert out == ROOT/"runs"/"reproduce"
    for p in (out/"claims.md", out/"executed"/"table3_single_turn.ipynb", reproduce.default_out("quick")/"claims.md"):
        r = subprocess.run(["git", "check-ignore", "-q", str(p.relative_to(ROOT))], cwd=ROOT)
        assert r.returncode == 0, f"{p.relative_to(ROOT)} is not ignored by git"
    assert reproduce.default_out("default", publish=True) == ROOT/"figures"
    r = subprocess.run([sys.executable, str(ROOT/"tools"/"reproduce.py"), "--profile", "quick", "--publish"],
                       capture_output=True, text=True, cwd=ROOT)
    assert r.returncode == 2 and "--publish goes with the default profile only" in r.stderr

def test_claims_of_a_run_are_compared_with_the_committed_ones(tmp_path):
    sys.path.insert(0, str(ROOT/"tools"))
    import reproduce
    head = "id,source,claim,measure,paper,value,lo,hi,p,n,verdict\n"
    (tmp_path/"old.csv").write_text(head + "T3.1,Table 3,a,m,0.4,0.0,0,0,1,4,inconclusive\n"
                                           "T3.2,Table 3,b,m,0.05,-0.08,-0.25,0,0.6,12,inconclusive\n")
    (tmp_path/"new.csv").write_text(head + "T3.1,Table 3,a,m,0.4,0.0,0,0,1,4,inconclusive\n"
                                           "T3.2,Table 3,b,m,0.05,0.12,0.02,0.2,0.01,150,holds\n"
                                           "T9.9,Figure 9,c,m,,0.1,0,0.2,0.3,10,inconclusive\n")
    lines = reproduce.compare_claims(tmp_path/"new.csv", tmp_path/"old.csv")
    assert lines[0] == "claims: 1 of 3 have the committed verdict, the others differ:", lines
    assert lines[1] == "  T3.2: committed inconclusive, this run holds (difference +0.120, committed -0.080)"
    assert lines[2] == "  T9.9: committed absent, this run inconclusive"
    assert reproduce.compare_claims(tmp_path/"old.csv", tmp_path/"old.csv") == ["claims: 2 of 2 have the committed verdict"]
    assert "missing" in reproduce.compare_claims(tmp_path/"none.csv", tmp_path/"old.csv")[0]

def test_published_plan_parameters_are_parameters_of_the_notebooks():
    "The default and full profiles give each paper notebook the plan's values under its own parameter names: none misspelt."
    from personalwab.evidence.plan import load_plan, notebook_parameters
    plan = load_plan()
    for nb in PAPER_NBS:
        if nb.stem.startswith("web"): continue               # the web track is not in the published plan yet
        given, have = set(notebook_parameters(plan, nb.stem)), _parameters(nb)
        used = {"methods", "single_methods", "multi_methods", "limit", "single_limit", "multi_limit", "limits", "max_steps", "budgets"} & given
        assert used <= have, (nb.name, used - have)        # what selects the runs must reach the notebook
        if {"methods", "single_methods", "puma_config"} & have: assert {"limit", "single_limit"} & given, nb.name
    assert "verification" in _parameters(ROOT/"nbs"/"paper"/"fig7_efficiency.ipynb")

def test_reproduced_tables_are_compared_with_the_committed_ones(tmp_path):
    sys.path.insert(0, str(ROOT/"tools"))
    import reproduce
    new, old = tmp_path/"new", tmp_path/"old"; new.mkdir(); old.mkdir()
    for d, v in ((new, "1"), (old, "1")): (d/"same.csv").write_text(f"a\n{v}\n")
    (new/"other.csv").write_text("a\n2\n"); (old/"other.csv").write_text("a\n3\n")
    (new/"fresh.csv").write_text("a\n"); (new/"verification.csv").write_text("run\n")
    assert reproduce.compare_tables(new, old) == ["fresh.csv: new (no committed table)", "other.csv: differs", "same.csv: identical"]
    assert reproduce.default_out("full") == ROOT/"runs"/"full"

def test_a_notebook_without_published_runs_is_skipped():
    sys.path.insert(0, str(ROOT/"tools"))
    import reproduce
    done = {"table3/rules", "table3/no_memory"}
    assert not reproduce.unpublished("table3_single_turn", done) and not reproduce.unpublished("claims", done)
    assert reproduce.unpublished("table4_multi_turn", done) and reproduce.unpublished("fig8_action_transitions", done)
    assert reproduce.unpublished("table5_puma_ablation", done) and not reproduce.unpublished("table5_puma_ablation", done | {"table3/puma"})
    assert reproduce.unpublished("table5_puma_ablation", done | {"table3/puma_gpt"})   # another run whose key starts alike
    assert not reproduce.unpublished("fig5_profile_consistency", set())           # reads no runs: always derived
    assert set(reproduce.NOTEBOOK_RUNS) | {"table2", "fig5"} >= {p.stem.split("_")[0] for p in (ROOT/"nbs"/"paper").glob("*.ipynb")}

def test_publish_clears_what_results_do_not_back(tmp_path):
    "A notebook none of whose runs is published keeps no numbers of an earlier computation in the committed reports."
    import nbformat
    sys.path.insert(0, str(ROOT/"tools"))
    import reproduce
    nb = tmp_path/"table4_multi_turn.ipynb"
    book = nbformat.v4.new_notebook(cells=[nbformat.v4.new_markdown_cell("# T4"), nbformat.v4.new_code_cell("1+1")])
    book.cells[1].outputs = [nbformat.v4.new_output("execute_result", {"text/plain": "2"}, execution_count=1)]
    nbformat.write(book, nb)
    figs = tmp_path/"figures"; figs.mkdir()
    for suffix in (".csv", ".md", ".png"): (figs/f"table4_multi_turn{suffix}").write_text("old")
    (figs/"table3_single_turn.csv").write_text("kept")
    assert reproduce.clear_stale(nb, figs) == 3
    assert nbformat.read(nb, as_version=4).cells[1].outputs == [] and [p.name for p in figs.iterdir()] == ["table3_single_turn.csv"]

def test_quick_profile_restores_the_published_web_agent(tmp_path, monkeypatch, capsys):
    """The quick profile's fine-tuned web agent is the published one, merged again into the runs folder; a recipe other than
    the published one is not restored (one line says why, nothing is copied) and the report lists the agent as not run."""
    sys.path.insert(0, str(ROOT/"tools"))
    import reproduce
    from personalwab.core.config import results_dir
    from personalwab.evidence import plan as plans
    monkeypatch.setenv("PERSONALWAB_RUNS", str(tmp_path/"runs"))
    plan = plans.load_plan()
    wc = plans.web_agent_config(plan)                              # its root follows $PERSONALWAB_RUNS
    if not (results_dir()/"web"/wc.root.name/"web.json").exists():
        pytest.skip("no fine-tuned web agent published in results/web/")
    assert reproduce.restore_quick_web_agent() is True
    assert "restored from its published adapter" in capsys.readouterr().out
    final = wc.final_model
    assert final.is_relative_to(tmp_path) and (final/"config.json").exists() and any(final.glob("*.safetensors"))
    other = tmp_path/"other.yaml"                                  # the plan's recipe with another learning rate
    other.write_text((ROOT/plan.scribe_config).read_text().replace("learning_rate: 5.0e-4", "learning_rate: 1.0e-4"))
    assert other.read_text() != (ROOT/plan.scribe_config).read_text()
    monkeypatch.setenv("PERSONALWAB_RUNS", str(tmp_path/"runs2"))
    monkeypatch.setattr(plans, "load_plan", lambda: plan.model_copy(update={"scribe_config": str(other)}))
    assert reproduce.restore_quick_web_agent() is False
    out = capsys.readouterr().out.strip().splitlines()
    assert len(out) == 1 and "not restored" in out[0] and "published with other settings" in out[0], out
    assert not (tmp_path/"runs2").exists() or not any((tmp_path/"runs2").rglob("*.safetensors"))

def test_notebooks_run_at_once_and_the_last_after_the_others(tmp_path):
    """The default profile executes its notebooks `--processes` at a time: two run at once (each waits for the other at a
    barrier, which one at a time never passes), claims only after every other has ended, and each one's lines come out
    together; a failure is reported, not raised."""
    import threading
    sys.path.insert(0, str(ROOT/"tools"))
    import reproduce
    nbs = [tmp_path/f"{s}.ipynb" for s in ("claims", "fig5_profile_consistency", "table2_fig3_fig4_statistics", "table3_single_turn")]
    both, ended, events, lock = threading.Barrier(2, timeout=30), set(), [], threading.Lock()
    def execute(nb):
        if nb.stem == "claims":
            with lock: events.append(("claims starts after", frozenset(ended)))
        elif nb.stem != "table3_single_turn": both.wait()      # fig5 and table2 must be running at the same time
        with lock: ended.add(nb.stem)
        return [f"==> {nb.name}", f"    done {nb.stem}"], nb.stem == "table3_single_turn"
    said = []
    failed = reproduce.execute_all(nbs, execute, 2, log=said.append)
    assert failed == ["table3_single_turn.ipynb"]
    assert events == [("claims starts after", frozenset({"fig5_profile_consistency", "table2_fig3_fig4_statistics", "table3_single_turn"}))]
    assert sorted(said) == sorted(f"==> {nb.name}\n    done {nb.stem}" for nb in nbs) and said[-1].startswith("==> claims")
    one = threading.Barrier(2, timeout=1)
    with pytest.raises(threading.BrokenBarrierError):      # one at a time: the second never comes to the barrier
        reproduce.execute_all(nbs[1:3], lambda nb: (one.wait(), ([], False))[1], 1, log=said.append)

def test_a_run_that_could_not_be_re_run_fails_the_reproduction():
    """verify_sample's counts: episodes whose actions differ (reported; another processor may legitimately differ) and runs
    that could not be re-run at all (an error: the check is incomplete, so `make reproduce` fails)."""
    import pandas as pd
    from dataclasses import asdict
    from personalwab.evidence.verify import RunCheck
    sys.path.insert(0, str(ROOT/"tools"))
    import reproduce
    rows = [RunCheck("a", "table3/a", tasks=3, identical=2), RunCheck("b", "table4/b", tasks=2, identical=2),
            RunCheck("c", "web/single/c", error="the process verifying it ended: BrokenProcessPool: ...")]
    df = pd.DataFrame([asdict(r) for r in rows], columns=list(RunCheck.__dataclass_fields__))
    assert reproduce.verification_counts(df) == (1, 1)
    assert reproduce.verification_counts(df.iloc[:2]) == (1, 0)
    assert reproduce.verification_counts(df.iloc[:0]) == (0, 0)

def test_miniwob_runs_absent_or_partial_are_said_and_tolerated(tmp_path, monkeypatch):
    "No MiniWoB++ run published: one line each, nothing verified, the report skipped; a partial one is named with its counts."
    import json
    sys.path.insert(0, str(ROOT/"tools"))
    import reproduce
    from personalwab.evidence.miniwob import pack_miniwob
    from personalwab.web.miniwob_runs import MiniWoBConfig
    monkeypatch.setenv("PERSONALWAB_RESULTS", str(tmp_path/"results"))
    said = []
    assert reproduce.miniwob_published(said.append) == set() and "no run published in results/miniwob/" in said[-1]
    assert reproduce.verify_miniwob_runs(tmp_path/"out", tmp_path/"scratch", said.append) == (None, 0)
    assert "MiniWoB++ verification: skipped, no run is published" in said[-1]
    assert reproduce.unpublished("miniwob", set()) and not reproduce.unpublished("miniwob", {"miniwob/random"})
    c = MiniWoBConfig(agent="random", tasks=["click-test", "enter-text"], seeds=1)
    d = tmp_path/"runs"/c.name; d.mkdir(parents=True)
    (d/"config.json").write_text(json.dumps({"name": c.name, "hash": c.hash, "identity": c.identity(), "config": c.model_dump()}))
    (d/"results.jsonl").write_text(json.dumps({"task_id": "click-test", "trial": 0, "status": "ok", "type": "miniwob",
                                               "function_acc": 1.0, "result_acc": 1.0, "success": True, "wall_s": 2.0}) + "\n")
    pack_miniwob(d)
    assert reproduce.miniwob_published(said.append) == {"miniwob/random"}
    assert said[-1] == f"  MiniWoB++: 1 published runs, 1 of 2 planned episodes; partial (still being computed): {c.name} 1/2", said[-1]
