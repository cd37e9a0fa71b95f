"""What a web-track run costs per task, to plan the published web computation (issue 29 item 3).

Runs the published plan's own web runs (`configs/published.yaml`: `web/<track>/<method>`, with every setting the
computation will use: agent_params such as `constrained` and `context_margin`, memory lengths, page budget, page-step
limit, repeat limit, gold steps scored) on their first --per-type tasks of each type (the published sample's first
tasks), one worker, in a temporary folder, with the response cache off, and prints per method and type: tasks, median
seconds per task (wall), median page steps, median agent calls (counted and side calls), median prompt tokens of a
call, median kilobytes of the task's record as `publish pack` commits it (gzip'd JSONL; each record compressed alone,
so an upper bound: a whole run's file also shares repeats between neighbouring records), and the hours and megabytes
the plan's run (its limit) would take at those medians (results/ may hold 60 MB). --free, --repeat-limit, --max-page-steps and
--step-eval-limit override the plan's values to measure what a setting costs. One timing per task: the medians, not
the means, and no claim below the noise of a shared machine (the load at start is printed; state it).

    .venv/bin/python benchmarks/web_run_cost.py [--methods no_memory relevant_memory] [--per-type 2] [--track single]
"""
from __future__ import annotations
import argparse, json, os, statistics, tempfile


def med(xs): return statistics.median(xs) if xs else float("nan")


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("--methods", nargs="+", default=None, help="web methods of the plan (default: all of its web_methods)")
    ap.add_argument("--track", default="single", choices=["single", "multi"])
    ap.add_argument("--per-type", type=int, default=1)
    ap.add_argument("--plan", default=None, help="the plan file (default configs/published.yaml)")
    ap.add_argument("--free", action="store_true", help="free decoding instead of the plan's agent_params.constrained")
    ap.add_argument("--repeat-limit", type=int, default=None, help="0: no early stop on repeated steps")
    ap.add_argument("--max-page-steps", type=int, default=None)
    ap.add_argument("--step-eval-limit", type=int, default=None)
    a = ap.parse_args(argv)
    os.environ["PERSONALWAB_LLM_CACHE"] = "0"     # a timing: every model call answered now, none from the response cache
    from personalwab.data.load import load_benchmark
    from personalwab.evidence.plan import load_plan, plan_runs
    from personalwab.run.provenance import portable
    from personalwab.evidence.runs import write_records_gz
    from personalwab.web.run import run_web
    plan = load_plan(a.plan)
    runs = {k.split("/")[-1]: c for k, (c, _) in plan_runs(plan).items() if k.startswith(f"web/{a.track}/")}
    methods = a.methods or list(runs)
    if missing := [m for m in methods if m not in runs]: raise SystemExit(f"not web methods of the plan: {missing} (it has {list(runs)})")
    b, out = load_benchmark(progress=False), tempfile.mkdtemp(prefix="web-run-cost-")
    print(f"load average at start: {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores; plan {a.plan or 'configs/published.yaml'}, "
          f"{a.track}-turn, {a.per_type} task(s) per type")
    print(f"{'method':16} {'type':10} {'tasks':>5} {'s/task':>7} {'pages':>5} {'calls':>5} {'side':>5} {'prompt':>6} {'kB':>6}")
    def packed_kb(rec):
        path = write_records_gz(os.path.join(out, "packed.jsonl.gz"), [portable(rec)])
        return os.path.getsize(path) / 1000
    for m in methods:
        cfg = runs[m]
        env, params = dict(cfg.env_params), dict(cfg.params)
        if a.free and "constrained" in params: params["constrained"] = False
        if a.step_eval_limit is not None and "step_eval_limit" in params: params["step_eval_limit"] = a.step_eval_limit
        if a.max_page_steps is not None: env["max_page_steps"] = a.max_page_steps
        if a.repeat_limit is not None:
            if a.repeat_limit: env["repeat_limit"] = a.repeat_limit
            else: env.pop("repeat_limit", None)
        planned = cfg.limit
        cfg = cfg.model_copy(update={"limit": 3 * a.per_type, "workers": 1, "params": params, "env_params": env})
        r = run_web(cfg, out, progress=False, benchmark=b)
        recs = [json.loads(l) for l in (r.dir/"results.jsonl").read_text().splitlines()]
        hours = mb = 0.0
        for ty in ("search", "recommend", "review"):
            rs = [x for x in recs if x["type"] == ty]
            calls = [sum(1 for u in x["usage"] if u.get("role") == "agent" and u.get("counted") is not False) for x in rs]
            side = [sum(1 for u in x["usage"] if u.get("counted") is False) for x in rs]
            prompt = [u["prompt_tokens"] for x in rs for u in x["usage"] if u.get("prompt_tokens")]
            s, kb = med([x["wall_s"] for x in rs]), med([packed_kb(x) for x in rs])
            hours += s * planned / 3 / 3600; mb += kb * planned / 3 / 1000
            print(f"{m:16} {ty:10} {len(rs):5d} {s:7.1f} {med([len(x['page_steps']) for x in rs]):5.0f} {med(calls):5.0f} "
                  f"{med(side):5.0f} {med(prompt):6.0f} {kb:6.1f}")
        print(f"{m:16} {'total':10} {len(recs):5d}  -> the plan's {planned} tasks: {hours:.2f} h with one worker, {mb:.1f} MB packed")


if __name__ == "__main__": main()
