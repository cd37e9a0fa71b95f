"""Run every paper-reproduction notebook (nbs/paper/*.ipynb) with papermill.

Profiles:
  default  the README's `make reproduce`: checks the published evidence (results/, computed once by
           `personalwab publish compute`) in under an hour on two cores:
           1. the published runs, the recommender and the PUMA model (from its adapters) are restored
              into runs/reproduce/runs/ (a recommender trained on this machine is compared with the
              published one, and kept aside: the check never uses it);
           2. every published trajectory is graded again by this checkout's scorer, recommendations with
              the published recommender read from results/ (any difference is listed and makes the
              command fail); so are the outside agents' runs (results/browsergym/runs/: AgentLab's
              GenericAgent, whose environment is its own, so it is graded again but not re-run);
           3. a stratified sample of every published run is re-run (one task per type and run, then more,
              one of each type in turn, within `--sample-budget` published seconds a run: DEFAULT_BUDGET_S
              by default, 0 for one task per type only), its model calls given their published replies
              as drafts (the same answers, decoded sooner; `--no-drafts`: plain decoding), and
              compared with the published episodes: runs/reproduce/verification.md (identical action
              sequences k/n, largest score difference, seconds per task then and now); `--processes` runs
              at a time (default 2), each in its own process with its own workers and torch threads;
              with `--executor ray` the sampled episodes are Ray tasks instead (a Ray started for it, or
              the cluster at `--address`), the runs one after another;
           3b. the first published episodes of every published MiniWoB++ run (results/miniwob/, at most a
              minute of published episode time a run) are re-run in Chromium through BrowserGym and their
              page actions and success compared with the published ones: runs/reproduce/miniwob_verification.md
              (skipped, with a line, when nothing is published there or Chromium is missing; a partial run is
              checked on what it has);
           4. the paper notebooks are executed with the plan's parameters (configs/published.yaml) on
              the restored runs only (PERSONALWAB_COMPUTE=0: nothing is computed, a task not yet
              published is counted as missing), `--processes` at a time: tables and figures into
              runs/reproduce/, executed notebooks into runs/reproduce/executed/, then compared with the
              committed figures/.
           With --publish (`make publish`, for maintainers) step 4 executes the notebooks in place
           (the readable reports the docs site shows) and writes figures/.
  full     recomputes everything from nothing with the plan's parameters (the same notebooks,
           computing on; resumable: run it again after a stop). Runs in runs/, outputs in runs/full/.
  quick    an illustration: the same notebooks and the same models with 3 tasks
           per table (one per type), replies capped at 128 tokens, 2 multi-turn steps, two episodes at a
           time, 5 users in Figure 5 and a PUMA trained on 16 tasks (configs/puma/quick.yaml); the fine-tuned
           web agent is the published one (results/web/: its training takes ~90 minutes), restored when its
           recipe is the plan's. Executed into runs/quick/ (figures/ is not touched); every
           table there is labelled as an illustration: with one task per type nothing in it is evidence.
  smoke    CI's profile: the same notebooks with `smoke=True` (a handful of tasks), executed into
           a scratch folder; figures/ is not touched.

Each notebook has one cell tagged `parameters` with at least `out_dir` and `smoke`. Expensive runs
are cached by the runner (a config-addressed results folder), so a re-run only re-plots.

Usage: python tools/reproduce.py [--profile default|full|quick|smoke] [--publish] [--only NAME ...] [--out DIR] [--per-type K] [--threads N] [--processes P]
       [--executor local|ray [--address auto|HOST:PORT]] [--drafts | --no-drafts] [--sample-budget SECONDS]
"""
from __future__ import annotations
import argparse, os, re, shutil, subprocess, sys, tempfile, time
from concurrent.futures import ThreadPoolExecutor, as_completed
from contextlib import contextmanager
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PAPER = ROOT/"nbs"/"paper"
# What the paper has, and the notebook that reproduces it.
EXPECTED = {
    "Table 2, Figures 3-4 (benchmark statistics)": "table2_fig3_fig4_statistics.ipynb",
    "Figure 5 (profile consistency)": "fig5_profile_consistency.ipynb",
    "Table 3 (single-turn results)": "table3_single_turn.ipynb",
    "Table 4 (multi-turn results)": "table4_multi_turn.ipynb",
    "Table 5 (PUMA ablations)": "table5_puma_ablation.ipynb",
    "Table 6 (memory length)": "table6_memory_length.ipynb",
    "Figure 7 (time per task)": "fig7_efficiency.ipynb",
    "Figure 8 (action transitions)": "fig8_action_transitions.ipynb",
    "Figure 9 (results by attempt)": "fig9_attempts.ipynb",
    "The paper's findings, measured (verdict per claim)": "claims.ipynb",
    "The web track beside the function track (not in the paper)": "web_track.ipynb",
    "The page agents on MiniWoB++'s public pages (not in the paper)": "miniwob.ipynb",
}
LAST = {"claims"}   # notebooks that read the runs of the others: they run at the end
# The published runs each notebook reads (keys of `evidence.plan.plan_runs`, by prefix): a notebook none of whose runs has a
# published record yet is skipped by the default profile (it would show empty tables) and says so.
NOTEBOOK_RUNS = {"table3": ("table3/",), "table4": ("table4/",), "fig8": ("table4/",), "fig9": ("table4/",),
                 "table5": ("table5/", "table3/puma"), "table6": ("table6/",), "fig7": ("table3/", "table4/"),
                 "claims": ("table3/", "table4/", "table5/", "table6/"), "web": ("web/",),
                 "miniwob": ("miniwob/",)}   # the MiniWoB++ runs (results/miniwob/, not in the plan): "miniwob/<agent>"

def unpublished(stem: str, done: set[str]) -> bool:
    "Whether paper notebook `stem` reads published runs and none of them (keys in `done` have records) has a record yet."
    prefixes = next((v for k, v in NOTEBOOK_RUNS.items() if stem.startswith(k)), None)
    return prefixes is not None and not any(k.startswith(p) if p.endswith("/") else k == p for p in prefixes for k in done)   # "x/": every run of x

# The quick profile's parameters (a notebook takes the ones it has; papermill only notes the others).
# Decoding dominates a run on the CPU (a reply that runs to its cap costs ~20 s), so replies are capped at 128 tokens
# instead of 256 and multi-turn episodes at 2 steps, and two episodes run at once (workers=2, one core each): this
# profile shows that everything runs, not what the numbers are.
QUICK = {"limit": 3, "single_limit": 3, "multi_limit": 3, "limits": {"recmind": 3}, "max_steps": 2, "n_users": 5, "workers": 2,
         "max_page_steps": 4, "step_eval_limit": 2,
         "agent_params": {"constrained": True, "context_margin": 0.6, "max_tokens": 128},
         "puma_config": "configs/puma/quick.yaml"}
QUICK_LABEL = ("> **Illustration only** (`make reproduce PROFILE=quick`): 3 tasks per table, one of each type, replies "
               "capped at 128 tokens, 2 multi-turn steps, a PUMA trained on 16 tasks and the published fine-tuned web agent. Nothing here is evidence for or against the paper; the default profile's tables are in figures/.\n\n")

def label_illustration(out: Path) -> int:
    "Put the quick profile's label on top of every Markdown table in `out` (once) and a README beside them; returns the tables labelled."
    n = 0
    for p in sorted(out.glob("*.md")):
        if p.name == "README.md": continue
        text = p.read_text()
        if not text.startswith(QUICK_LABEL): p.write_text(QUICK_LABEL + text); n += 1
    (out/"README.md").write_text(QUICK_LABEL + "Executed notebooks: executed/. Tables: *.md and *.csv; figures: *.png and *.svg.\n")
    return n

def restore_quick_web_agent() -> bool:
    """The quick profile's fine-tuned web agent: the published one (results/web/), merged again into runs/, when the plan's
    recipe (configs/web/scribe.yaml) is the one published; otherwise one line says why and the report lists it as not run."""
    from personalwab.evidence.plan import load_plan
    from personalwab.evidence.models import restore_plan_web_agent
    try: ok = restore_plan_web_agent(load_plan(), log=lambda *a: None) is not None
    except ValueError as e: print(f"  the fine-tuned web agent: not restored ({e})", flush=True); return False
    print("  the fine-tuned web agent: restored from its published adapter (results/web/)" if ok else
        "  the fine-tuned web agent: none published (results/web/), so the report lists it as not run", flush=True)
    return ok

def default_out(profile: str, publish: bool = False) -> Path:
    "Where a profile writes its tables and figures when `--out` is not given (smoke: a fresh temporary folder)."
    if profile == "smoke": return Path(tempfile.mkdtemp(prefix="pwab-smoke-"))
    if profile == "quick": return ROOT/"runs"/"quick"
    if profile == "full": return ROOT/"runs"/"full"
    return ROOT/"figures" if publish else ROOT/"runs"/"reproduce"

def compare_claims(new_csv: Path, committed_csv: Path) -> list[str]:
    """Lines comparing each claim's verdict in a reproduction (`new_csv`) with the committed one (`committed_csv`):
    a summary line, then one line per claim whose verdict differs or that only one of the two has."""
    import pandas as pd
    if not new_csv.exists(): return [f"no claims table in this run ({new_csv.name} missing): nothing to compare"]
    if not committed_csv.exists(): return [f"no committed claims table ({committed_csv}) to compare with"]
    new, old = (pd.read_csv(p, dtype=str).set_index("id") for p in (new_csv, committed_csv))
    ids = list(dict.fromkeys([*old.index, *new.index]))
    differ = [i for i in ids if i not in new.index or i not in old.index or new.at[i, "verdict"] != old.at[i, "verdict"]]
    lines = [f"claims: {len(ids) - len(differ)} of {len(ids)} have the committed verdict" +
             (", the others differ:" if differ else "")]
    for i in differ:
        before = old.at[i, "verdict"] if i in old.index else "absent"
        after = new.at[i, "verdict"] if i in new.index else "absent"
        value = f" (difference {float(new.at[i, 'value']):+.3f}, committed {float(old.at[i, 'value']):+.3f})" \
            if i in new.index and i in old.index else ""
        lines.append(f"  {i}: committed {before}, this run {after}{value}")
    return lines

def check_published(log=print) -> int:
    """The first check of the published evidence (results/, see `personalwab publish`): every published trajectory is
    graded again by this checkout's scorer; prints one line per run, and
    returns the number of records whose score differs from the published one (any makes the reproduction fail)."""
    from personalwab.evidence.verify import rescore_published
    from personalwab.core.config import results_dir
    if not (results_dir()/"runs").exists(): log("\nNo published runs in results/ to check."); return 0
    df = rescore_published(log=lambda *a: None)
    log(f"\nPublished evidence (results/): {int(df.records.sum())} records in {len(df)} runs re-scored with this checkout's scorer, "
        f"{int(df.differ.sum())} differ")
    mine = df[df.recommender != "published"]
    log("  recommendations graded with the published recommender (the one the package ships, personalwab/env/weights/)" if mine.empty else
        f"  no published recommender for {len(mine)} runs ({', '.join(mine.run)}): graded with this machine's, which may differ from theirs")
    for r in df.itertuples(): log(f"  {r.run}: {r.records} records, {r.differ} differ" + (f" (largest {r.largest:.4f}: {r.tasks})" if r.differ else ""))
    return int(df.differ.sum())

def check_outside(scratch: Path, log=print) -> int:
    """The outside agents' published runs (results/browsergym/runs/, `evidence.outside_runs`): restored into `scratch`
    (emptied first) and graded again by this checkout's scorer (their agents run in environments of their own, so they
    are not re-run); prints one line per run and returns the number of records whose score differs."""
    from personalwab.evidence.outside_runs import published_outside_runs, rescore_outside_runs
    if not published_outside_runs(): log("\nNo outside agent's run published in results/browsergym/runs/."); return 0
    shutil.rmtree(scratch, ignore_errors=True)
    df = rescore_outside_runs(scratch=scratch, log=lambda *a: None)
    log(f"\nOutside agents' runs (results/browsergym/runs/, agents with environments of their own: graded again, not re-run): "
        f"{int(df.records.sum())} records in {len(df)} runs re-scored, {int(df.differ.sum())} differ")
    for r in df.itertuples():
        log(f"  {r.run} ({r.method}, {r.track}): {r.records} records, {r.differ} differ; published function accuracy "
            f"{r.function_acc:.3f}, result accuracy {r.result_acc:.3f}")
    return int(df.differ.sum())

def restore_published(runs: Path, log=print) -> dict | None:
    """Restore the published runs, the recommender they used and the plan's PUMA model into `runs` (which must be
    $PERSONALWAB_RUNS already); returns PUMA's model specs (`experiments.puma_models`) when its model is published."""
    from personalwab.evidence.plan import load_plan, trained_puma
    from personalwab.evidence.runs import restore_all
    from personalwab.puma.publish import restore_puma
    from personalwab.evidence.models import restore_sasrec
    from personalwab.reproduce.experiments import puma_config
    plan, t0 = load_plan(), time.time()
    dirs = restore_all(None, runs)
    sas = restore_sasrec(plan.data, log=lambda *a: None)
    pc = puma_config(plan.puma_config, data=plan.data)
    meta = restore_puma(pc, log=lambda *a: None)
    models = trained_puma(plan) if meta else None
    from personalwab.evidence.models import restore_plan_web_agent
    restore_plan_web_agent(plan, log=lambda *a: None)   # the specialised web agent the web runs used, merged again
    log(f"\nRestored {len(dirs)} published runs, the recommender" + (f" and PUMA {meta['version']}" if models else " (no complete PUMA model published)")
        + f" into {runs.relative_to(ROOT) if runs.is_relative_to(ROOT) else runs} ({time.time() - t0:.0f}s)")
    if sas: log(f"  the recommender trained on this machine {LOCAL_SAID[sas['local']]}")
    return models

# What the reproduction says of this machine's SASRec model against the published one (`evidence.models.local_sasrec`).
LOCAL_SAID = {"matches": "matches the published one bit for bit",
              "differs": "differs from the published one (training is not bit-identical across processors): kept aside, "
                         "the published one is used for re-grading and re-runs",
              "none trained here": "does not exist (none trained here): the published one is used"}

# The verification's default sample: each run's grows within this many published seconds (`--sample-budget`). Chosen so
# that the check re-runs more episodes than one task per type (103) and `make reproduce` stays within 25 minutes on two
# cores with drafts (measured: nbs/evidence/38e_verify.ipynb, "what make reproduce checks").
DEFAULT_BUDGET_S = 60.0

def verify_sample(out: Path, scratch: Path, models: dict | None, per_type: int = 1, threads: int | None = None, processes: int = 1,
                  log=print, drafts: bool = False, budget_s: float | None = None, executor: str = "local",
                  address: str | None = None) -> tuple[int, int]:
    """Re-run `per_type` tasks of each type (a multi-turn run: of two rotating types) of every published run into `scratch` (emptied first: a fresh re-run each
    time) and write out/verification.{csv,md}; prints the table; `drafts`: the model calls get their published replies as drafts; `budget_s`:
    each run's sample grows, one more task of each type in turn, within that many published seconds (None: one task per type);
    `executor` ray: the episodes are Ray tasks (`personalwab.run.executor`) of `threads` torch threads (default 1), on the cluster
    at `address` or on a Ray started here; returns `verification_counts`: episodes whose actions differ, runs that could not be re-run."""
    import shutil
    from personalwab.evidence.plan import load_plan
    from personalwab.evidence.verify import verify_published, verification_markdown
    from personalwab.run.executor import executing, executor_of
    shutil.rmtree(scratch, ignore_errors=True)
    t0 = time.time()
    ex = executor_of(executor, address, threads=threads or 1, log=log)
    with executing(ex):      # on Ray, each episode has the executor's threads: no run's own threads to set here
        df = verify_published(load_plan(), scratch=scratch, per_type=per_type, puma=models, out=out,
                              threads=None if ex is not None else threads, processes=processes, drafts=drafts, budget_s=budget_s,
                              log=lambda *a: None)
    log(f"\nVerification: a stratified sample of every published run re-run here ({time.time() - t0:.0f}s):\n")
    log(verification_markdown(df))
    return verification_counts(df)

def verification_counts(df) -> tuple[int, int]:
    "(re-run episodes whose actions differ from the published ones, runs that could not be re-run) of a verification table."
    if not len(df): return 0, 0
    return int(df.tasks.sum() - df.identical.sum()), int(df.error.notna().sum())

def miniwob_published(log=print) -> set[str]:
    """The MiniWoB++ runs published in results/miniwob/ (`evidence.miniwob`), as `NOTEBOOK_RUNS` keys ("miniwob/<agent>");
    one line says how many there are and which are partial (still being computed), or that there are none."""
    from personalwab.evidence.miniwob import published_runs
    from personalwab.run.records import read_json
    metas = [read_json(p/"run.json", "published MiniWoB++ run") or {} for p in published_runs()]
    if not metas: log("  MiniWoB++: no run published in results/miniwob/ (its report and check are skipped)"); return set()
    part = [m for m in metas if not m.get("complete")]
    log(f"  MiniWoB++: {len(metas)} published runs, {sum(m.get('records', 0) for m in metas)} of "
        f"{sum(m.get('planned', 0) for m in metas)} planned episodes" + (f"; partial (still being computed): "
        + ", ".join(f"{m['name']} {m['records']}/{m['planned']}" for m in part) if part else ""))
    return {f"miniwob/{(m.get('identity') or {}).get('agent')}" for m in metas}

def verify_miniwob_runs(out: Path, scratch: Path, log=print) -> tuple[int | None, int]:
    """Re-run the first published episodes of every published MiniWoB++ run (at most `MINIWOB_BUDGET_S` published seconds
    a run, `evidence.miniwob.verify_all_miniwob`) into `scratch` (emptied first), write out/miniwob_verification.{csv,md}
    and print the table; skipped with one line when nothing is published or Chromium is missing. Returns (re-run episodes
    whose actions or success differ (None: skipped), runs that could not be re-run)."""
    import shutil
    from personalwab.evidence.miniwob import MINIWOB_BUDGET_S, miniwob_verification_markdown, published_runs, verify_all_miniwob
    from personalwab.web.drivers import chromium_path
    if not published_runs(): log("\nMiniWoB++ verification: skipped, no run is published in results/miniwob/."); return None, 0
    if chromium_path() is None:
        log("\nMiniWoB++ verification: skipped, no Chromium on this machine (apt-get install chromium)."); return None, 0
    shutil.rmtree(scratch, ignore_errors=True)
    t0 = time.time()
    checks = verify_all_miniwob(None, scratch, out, log=lambda *a: None)
    log(f"\nMiniWoB++ verification: the first published episodes of every published run (at most {MINIWOB_BUDGET_S:g} published "
        f"seconds a run) re-run here ({time.time() - t0:.0f}s):\n")
    log(miniwob_verification_markdown(checks))
    return sum(c.episodes - c.identical for c in checks), sum(bool(c.error) for c in checks)

def compare_tables(out: Path, committed: Path) -> list[str]:
    "One line per table (CSV) of a reproduction: identical to the committed one in `committed`, differing, or new."
    lines = []
    for p in sorted(out.glob("*.csv")):
        if p.name.endswith("verification.csv"): continue   # this machine's re-runs, not a table of results/
        c = committed/p.name
        lines.append(f"{p.name}: " + ("new (no committed table)" if not c.exists() else "identical" if c.read_bytes() == p.read_bytes() else "differs"))
    return lines

def clear_stale(nb: Path, figures: Path) -> int:
    """For `--publish`: a notebook whose runs are not published yet keeps no numbers of an earlier computation: its
    outputs in nbs/paper/ and its tables and figures in `figures` are removed. Returns the files removed."""
    import nbformat
    book = nbformat.read(nb, as_version=4)
    for c in book.cells:
        if c.cell_type == "code": c.outputs, c.execution_count = [], None
    nbformat.write(book, nb)
    gone = [p for p in figures.glob(f"{nb.stem}.*") if p.suffix in (".csv", ".md", ".png", ".svg")]
    for p in gone: p.unlink()
    return len(gone)

def notebooks(only=None) -> list[Path]:
    nbs = sorted(PAPER.glob("*.ipynb"), key=lambda p: (p.stem in LAST, p.stem))
    return [p for p in nbs if not only or any(o in p.stem for o in only)]

NOISE = re.compile(r"\d+%\|[^|\n]*\||\[\d\d:\d\d<|\w+Warning\b|Traceback \(most recent call last\)|(?<![\w.])/(?:tmp|work|root|home)/")

def move_stderr(nb_path: Path, log=print) -> int:
    """Take what the code wrote to stderr (library warnings, training progress bars) out of an executed notebook and
    into this script's log, one line per cell: the notebook is the report, its stderr is a diagnostic of the run.
    Returns the number of stderr outputs moved; what the code printed (stdout), tables and figures stay."""
    import nbformat
    nb, moved = nbformat.read(nb_path, as_version=4), 0
    for i, c in enumerate(nb.cells):
        err = [o for o in c.get("outputs", []) if o.get("output_type") == "stream" and o.get("name") == "stderr"]
        if not err: continue
        lines = [l.strip() for o in err for l in re.split(r"[\r\n]+", o.get("text", "")) if l.strip()]
        log(f"    stderr of {nb_path.name} cell {i} ({len(lines)} lines, moved here): {lines[0][:150] if lines else ''}")
        c.outputs = [o for o in c.outputs if o not in err]; moved += len(err)
    if moved: nbformat.write(nb, nb_path)
    return moved

def noise(nb_path: Path) -> list[str]:
    "Cells of an executed notebook whose outputs show a progress bar, a warning, a traceback or a machine path."
    import nbformat
    out = []
    for i, c in enumerate(nbformat.read(nb_path, as_version=4).cells):
        for o in c.get("outputs", []):
            txt = o.get("text", "") if "text" in o else "\n".join(str(v) for k, v in o.get("data", {}).items() if k.startswith("text/"))
            if m := NOISE.search(txt): out.append(f"{nb_path.name} cell {i}: {txt[max(0, m.start()-40):m.end()+40]!r}"); break
    return out

# The kernels' own log: its errors only. ipykernel 7 warns at every start that its sockets (on 127.0.0.1, to this
# process) are not encrypted: eleven identical warnings on the console of one command, none about the notebooks.
KERNEL_ARGS = ["--IPKernelApp.log_level=ERROR"]
# jupyter_client interrupts a kernel (SIGINT) at the start of every shutdown. A kernel that has sent the last cell's
# reply but not yet left that request's handler (a loaded machine: CI's two cores) logs this line at ERROR: a race
# of the shutdown after the notebook finished, not an error of the notebook. Every other line of the kernel is kept.
SHUTDOWN_RACE = re.compile(r"^\[IPKernelApp\] ERROR \| KeyboardInterrupt caught in kernel\.?\s*$")

@contextmanager
def kernel_log():
    """The kernels started inside the block inherit this process's stderr (file descriptor 2): it goes to a temporary
    file and is replayed to stderr afterwards, less the shutdown race's line (`SHUTDOWN_RACE`). Nothing else is lost:
    this process's own stderr of the block is replayed in order too."""
    sys.stderr.flush()
    saved = os.dup(2)
    with tempfile.TemporaryFile() as f:
        os.dup2(f.fileno(), 2)
        try: yield
        finally:
            sys.stderr.flush(); os.dup2(saved, 2); os.close(saved)
            f.seek(0)
            kept = [l for l in f.read().decode(errors="replace").splitlines(keepends=True) if not SHUTDOWN_RACE.match(l)]
            sys.stderr.write("".join(kept)); sys.stderr.flush()

def execute_all(nbs: list[Path], execute, at_once: int = 1, log=lambda s: print(s, flush=True)) -> list[str]:
    """Execute the notebooks `nbs` with `execute(nb) -> (lines to print, failed)`, `at_once` at a time, those in LAST after
    the others (they read what the others read, and run last as they always did); each one's lines are printed together
    when it ends, never interleaved with another's. Returns the names of those that failed, in the order they ended."""
    failed = []
    for batch in ([nb for nb in nbs if nb.stem not in LAST], [nb for nb in nbs if nb.stem in LAST]):
        if not batch: continue
        with kernel_log(), ThreadPoolExecutor(max(1, at_once)) as ex:
            futs = {ex.submit(execute, nb): nb for nb in batch}
            for f in as_completed(futs):
                lines, bad = f.result()
                log("\n".join(lines))
                if bad: failed.append(futs[f].name)
    return failed

def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description="Reproduce the paper's tables and figures with papermill.")
    ap.add_argument("--profile", choices=["default", "full", "quick", "smoke"], default="default")
    ap.add_argument("--publish", action="store_true", help="default profile only: execute the notebooks in place and write "
                    "figures/ (the committed reports, derived from results/)")
    ap.add_argument("--only", nargs="*", help="substrings of notebook names to run (default profile: no re-scoring or verification)")
    ap.add_argument("--out", help="where tables/figures go (default: runs/reproduce/ for default, figures/ with --publish, "
                    "runs/full/ for full, runs/quick/ for quick, a temp dir for smoke)")
    ap.add_argument("--per-type", type=int, default=1, help="default profile: tasks of each type re-run per published run (default 1)")
    ap.add_argument("--processes", type=int, default=2, help="default profile: published runs verified at a time (each in a process "
                    "of its own, with the run's own workers and torch threads) and notebooks executed at a time (default 2)")
    ap.add_argument("--drafts", action=argparse.BooleanOptionalAction, default=None, help="default profile: the verification's "
                    "model calls get their published replies as drafts (llm.draft: the same answers, decoded sooner; its table shows the "
                    "share of draft tokens accepted): on by default with the local executor; --no-drafts: plain decoding")
    ap.add_argument("--sample-budget", type=float, default=DEFAULT_BUDGET_S, metavar="SECONDS",
                    help="default profile: the verification sample: each published run's sample (one task per type) grows, one more "
                    f"task of each type in turn (seeded, the same on every machine), while its published seconds stay within SECONDS "
                    f"(default {DEFAULT_BUDGET_S:g}); 0: the one-task-per-type sample only")
    ap.add_argument("--threads", type=int, help="default profile: re-run each sampled episode alone with this many torch threads "
                    "(a stand-in for another machine: sums split over other threads are added in another order)")
    ap.add_argument("--executor", choices=["local", "ray"], default="local", help="default profile: where the verification's "
                    "episodes are played: local (the runs' worker threads, --processes runs at a time) or ray (one Ray task per "
                    "episode, --threads torch threads each (default 1), the runs one after another; needs personalwab[ray])")
    ap.add_argument("--address", help="with --executor ray: the cluster to join (auto or host:port); default: a Ray started for "
                    "the verification and stopped after it")
    args = ap.parse_args(argv)
    if args.publish and args.profile != "default": ap.error("--publish goes with the default profile only")
    if args.address and args.executor != "ray": ap.error("--address is the Ray cluster to join: it needs --executor ray")
    if args.drafts and args.executor == "ray": ap.error("--drafts gives the drafts to this process's model: it needs --executor local")
    if args.drafts is None: args.drafts = args.executor == "local"   # on by default; Ray's workers have their own models
    import papermill as pm
    from personalwab.core.config import ignore_library_notices
    for k, v in {"HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "OMP_WAIT_POLICY": "PASSIVE", "TOKENIZERS_PARALLELISM": "false",
                 # the executed notebooks are the reports the docs site shows: no progress bars in them (the kernels inherit these)
                 "TQDM_DISABLE": "1", "HF_HUB_DISABLE_PROGRESS_BARS": "1", "TRANSFORMERS_NO_ADVISORY_WARNINGS": "1",
                 # the libraries' notices about themselves (personalwab.core.config.LIBRARY_NOTICES): off the console and the notebooks
                 "PYTHONWARNINGS": ignore_library_notices(), "TRANSFORMERS_VERBOSITY": "error"}.items():
        os.environ.setdefault(k, v)
    smoke, quick, check = args.profile == "smoke", args.profile == "quick", args.profile == "default"
    out = Path(args.out) if args.out else default_out(args.profile, args.publish)
    out.mkdir(parents=True, exist_ok=True)
    executed_dir = None if args.publish else out/"executed"
    extra = QUICK if quick else {}
    have = {p.name for p in PAPER.glob("*.ipynb")}
    missing = [f"{what} -> nbs/paper/{nb}" for what, nb in EXPECTED.items() if nb not in have]
    failures, t00, differ, changed, skipped, mw_changed = [], time.time(), 0, 0, [], None
    plan, done = None, None
    if check or args.profile == "full":
        from personalwab.evidence.plan import load_plan, notebook_parameters
        plan = load_plan()
    if check:
        work = ROOT/"runs"/"reproduce"
        if not args.only and not args.publish:    # a fresh derivation: no table of an earlier one left to compare
            for p in out.glob("*.*"):
                if p.suffix in (".csv", ".md", ".png", ".svg"): p.unlink()
        os.environ["PERSONALWAB_RUNS"] = str(work/"runs")          # the restored runs: this process and the notebooks' kernels
        models = restore_published(work/"runs")                    # first: every model a published score depends on
        if not args.only:
            differ = check_published()
            if differ: failures.append(f"published scores ({differ} records differ)")
            if (outside := check_outside(work/"outside")): failures.append(f"outside agents' scores ({outside} records differ)")
        from personalwab.evidence.plan import progress
        prog = progress(plan, work/"runs", puma=models)
        print(f"  the published computation: {int(prog.done.sum())} of {int(prog.planned.sum())} planned episodes"
              + ("" if models or "puma" not in plan.single_methods else " (PUMA's runs not counted: no complete PUMA model published)"), flush=True)
        done = {r.run for r in prog.itertuples() if r.done > 0} | miniwob_published()
        if not args.only:
            changed, unverified = verify_sample(out, work/"verify", models, args.per_type, args.threads, args.processes,
                                                drafts=args.drafts, budget_s=args.sample_budget, executor=args.executor,
                                                address=args.address)
            if unverified: failures.append(f"verification ({unverified} published runs could not be re-run: see verification.md)")
            mw_changed, mw_unverified = verify_miniwob_runs(out, work/"verify-miniwob")
            if mw_unverified:
                failures.append(f"MiniWoB++ verification ({mw_unverified} published runs could not be re-run: see miniwob_verification.md)")
        os.environ["PERSONALWAB_COMPUTE"] = "0"                    # the notebooks read the published runs, compute nothing
    if quick and any(nb.stem.startswith("web") for nb in notebooks(args.only)): restore_quick_web_agent()
    todo = []
    for nb in notebooks(args.only):
        if done is not None and unpublished(nb.stem, done):
            skipped.append(nb.name); print(f"==> {nb.relative_to(ROOT)} [{args.profile}]: skipped, none of its runs is published yet", flush=True)
            if args.publish:
                n = clear_stale(nb, out)
                subprocess.run([str(Path(sys.executable).parent/"nbdev_clean"), "--fname", str(nb)], check=True, cwd=ROOT)
                print(f"    its earlier outputs cleared from the notebook and {n} files from {out.name}/ (they were not derived from results/)", flush=True)
            continue
        todo.append(nb)

    def execute(nb: Path) -> tuple[list[str], bool]:
        "Execute one notebook; (what to print, whether it failed)."
        lines, t0 = [f"==> {nb.relative_to(ROOT)} [{args.profile}]"], time.time()
        dest = (executed_dir/nb.name) if executed_dir else nb
        dest.parent.mkdir(parents=True, exist_ok=True)
        try:
            # the notebook runs in its own folder: a relative out_dir keeps the committed notebooks free of machine paths
            rel = lambda p: os.path.relpath(p.resolve(), nb.parent.resolve()) if p.resolve().is_relative_to(ROOT) else str(p.resolve())
            plan_params = notebook_parameters(plan, nb.stem) if plan else {}
            if plan_params: plan_params = {k: v for k, v in plan_params.items() if k in pm.inspect_notebook(str(nb))}   # only the ones it has
            params = {"out_dir": rel(out), "smoke": smoke, **extra, **plan_params}
            if check and nb.stem.startswith("fig7") and (out/"verification.csv").exists(): params["verification"] = rel(out/"verification.csv")
            pm.execute_notebook(str(nb), str(dest), parameters=params, kernel_name="python3", language="python",
                                cwd=str(nb.parent), progress_bar=False, extra_arguments=KERNEL_ARGS)
            move_stderr(dest, log=lines.append)
            if not executed_dir:   # executed in place: keep the tracked notebook nbdev-clean
                subprocess.run([str(Path(sys.executable).parent/"nbdev_clean"), "--fname", str(dest)], check=True, cwd=ROOT)
            lines.append(f"    done in {time.time()-t0:.0f}s; executed notebook: {dest}")
            lines += [f"    WARNING: {line}" for line in noise(dest)]
            return lines, False
        except Exception as e:  # keep going: report every failure at the end
            return lines + [f"    FAILED: {type(e).__name__}: {str(e)[-2000:]}"], True

    # The default profile's notebooks compute nothing (they read the restored runs): `--processes` of them at a time.
    # Profiles that compute run them one by one (two notebooks would compute the same runs at once).
    failures += execute_all(todo, execute, args.processes if check else 1)
    if quick: print(f"\nLabelled {label_illustration(out)} tables in {out} as an illustration (quick profile)")
    print(f"\nOutputs (tables as CSV/Markdown, figures as PNG/SVG) are in {out}/ ({time.time()-t00:.0f}s in all)")
    for p in sorted(out.glob("*.*")): print(f"  {p.name}")
    if check and not args.publish:
        print("\nThis run against the committed figures/:")
        for line in compare_tables(out, ROOT/"figures"): print("  " + line)
        if not args.only or any("claims" in o for o in args.only):
            for line in compare_claims(out/"claims.csv", ROOT/"figures"/"claims.csv"): print("  " + line)
    if missing: print("\nNot reproduced yet (notebook missing):\n  " + "\n  ".join(missing))
    if skipped: print("\nNot derived (none of their runs is published yet): " + ", ".join(skipped))
    if check and not args.only:
        print(f"\nPublished evidence: {differ} re-scored records differ; {changed} re-run episodes with other actions than published "
              "(see verification.md)" + (f"; MiniWoB++: {mw_changed} re-run episodes with other actions or success than published "
                                          "(see miniwob_verification.md)" if mw_changed is not None else ""))
    if failures: print(f"\nFAILED: {failures}"); return 1
    return 0

if __name__ == "__main__": sys.exit(main())
