"""What a web-track run costs per task, to plan the published web computation (issue 29 item 3).

Runs each --methods web method with SmolLM2 (or --agent-llm) on --per-type test tasks of each type (stratified, the
published sample's first tasks) through `run_web` in a temporary folder, with the web track's settings (--budget,
--max-page-steps, --repeat-limit, --step-eval-limit, --max-tokens, guided steps unless --free; the defaults are
configs/published.yaml's), and prints per method and type: tasks, median seconds per task
(wall, one worker), median page steps, median agent calls (counted and side calls), and the hours a run of
--single tasks (the published single-turn sample, the types in equal parts) would take at those medians. One
timing per task: the medians, not the means, and no claim below the noise of a shared machine (state the load).

    .venv/bin/python benchmarks/web_run_cost.py [--methods rules no_memory] [--per-type 2] [--single 150]
"""
from __future__ import annotations
import argparse, json, os, statistics, tempfile


def med(xs): return statistics.median(xs) if xs else float("nan")


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("--methods", nargs="+", default=["rules", "no_memory"])
    ap.add_argument("--per-type", type=int, default=2)
    ap.add_argument("--agent-llm", default="smollm2")
    ap.add_argument("--budget", type=int, default=1024)
    ap.add_argument("--max-page-steps", type=int, default=36)
    ap.add_argument("--repeat-limit", type=int, default=3, help="0: no early stop on repeated steps")
    ap.add_argument("--step-eval-limit", type=int, default=3)
    ap.add_argument("--free", action="store_true", help="free decoding (default: guided, the published constrained)")
    ap.add_argument("--max-tokens", type=int, default=384)
    ap.add_argument("--single", type=int, default=150)
    ap.add_argument("--params", default="{}", help="JSON: extra params per method, e.g. '{\"scribe\": {\"model\": \"configs/web/scribe.yaml\"}}'")
    a = ap.parse_args(argv)
    from personalwab.data import load_benchmark
    from personalwab.methods import NO_LLM_METHODS
    from personalwab.runconfig import RunConfig
    from personalwab.web.run import run_web
    b = load_benchmark(progress=False)
    extra = json.loads(a.params)
    out = tempfile.mkdtemp(prefix="web-run-cost-")
    print(f"load average at start: {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores; budget {a.budget}, "
          f"max_page_steps {a.max_page_steps}, repeat_limit {a.repeat_limit or None}, {'free' if a.free else 'guided'}, step_eval_limit {a.step_eval_limit}, max_tokens {a.max_tokens}")
    print(f"{'method':16} {'type':10} {'tasks':>5} {'s/task':>7} {'pages':>5} {'calls':>5} {'side':>5}")
    for m in a.methods:
        params = {} if m in NO_LLM_METHODS else {"max_tokens": a.max_tokens, "constrained": not a.free}
        params |= {"step_eval_limit": a.step_eval_limit} if m != "oracle" else {}
        params |= extra.get(m, {})
        cfg = RunConfig(method=m, agent_llm=a.agent_llm, split="test", limit=3 * a.per_type, sample="stratified", seed=2024, params=params)
        r = run_web(cfg, out, progress=False, benchmark=b, budget=a.budget, max_page_steps=a.max_page_steps,
                    **({"repeat_limit": a.repeat_limit} if a.repeat_limit else {}))
        recs = [json.loads(l) for l in (r.dir/"results.jsonl").read_text().splitlines()]
        hours = 0.0
        for ty in ("search", "recommend", "review"):
            rs = [x for x in recs if x["type"] == ty]
            calls = [sum(1 for u in x["usage"] if u.get("role") == "agent" and u.get("counted") is not False) for x in rs]
            side = [sum(1 for u in x["usage"] if u.get("counted") is False) for x in rs]
            s = med([x["wall_s"] for x in rs])
            hours += s * a.single / 3 / 3600
            print(f"{m:16} {ty:10} {len(rs):5d} {s:7.1f} {med([len(x['page_steps']) for x in rs]):5.0f} {med(calls):5.0f} {med(side):5.0f}")
        print(f"{m:16} {'total':10} {len(recs):5d}  -> {a.single} single-turn tasks: {hours:.2f} h with one worker")


if __name__ == "__main__": main()
