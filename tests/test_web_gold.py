"""Gold page trajectories score exactly as the oracle does on the function track, on every test task of the
default benchmark, single- and multi-turn (real pyserini, SASRec and MiniLM; the oracle never talks, so the
multi-turn simulator is never asked), on pages cut to the web runs' budget."""
import pytest
from personalwab.data.load import load_benchmark
from personalwab.env.environment import make_env, run_oracle
from personalwab.env.resources import Resources
from personalwab.env.simulator import UserSimulator
from personalwab.web.env import ShopEnv
from personalwab.web.gold import evaluate_steps, gold_trajectory, replay_gold, step_metrics

RUNS_BUDGET = 1024   # DOM tokens of a page in the published web runs and the specialised agent's training (configs/published.yaml, configs/web/scribe.yaml)

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("web_gold")]   # MiniLM, SASRec and pyserini over every test task

@pytest.fixture(scope="module")
def bench():
    b = load_benchmark(progress=False)
    return b, Resources(b)

@pytest.mark.parametrize("track", ["single", "multi"])
def test_gold_replay_scores_as_the_oracle(bench, track):
    b, res = bench
    tasks = b.split("test")
    sim = (lambda: UserSimulator(None, b)) if track == "multi" else (lambda: None)
    function_track = run_oracle(make_env(b, track, resources=res, simulator=sim()), tasks)
    se = ShopEnv(make_env(b, track, resources=res, simulator=sim()), budget=RUNS_BUDGET)   # every gold step on the page as an agent sees it
    for task, f in zip(tasks, function_track):
        w, gold = replay_gold(se, task)
        e = w.episode
        assert (e.function_acc, e.result_acc, e.actions, e.rewards) == (f.function_acc, f.result_acc, f.actions, f.rewards), task.id
        assert e.end == f.end and w.end == f.end, task.id
        assert len(w.steps) == len(gold_trajectory(b, task, track)) and all(s.ok for s in w.steps), task.id
        assert [c for s in w.steps for c in s.calls] == f.actions, task.id     # each call made by exactly one page step

def test_step_metrics_of_the_gold_policy_are_perfect(bench):
    b, res = bench
    se = ShopEnv(make_env(b, "single", resources=res))
    per_task = []
    for task in [next(t for t in b.split("test") if t.type == k) for k in ("search", "recommend", "review")]:
        steps = iter(gold_trajectory(b, task))
        per_task.append(evaluate_steps(se, task, lambda obs: str(next(steps).on(se.driver.tree()))))
    m = step_metrics(per_task)
    assert (m["element_acc"], m["op_f1"], m["step_sr"], m["task_sr"]) == (1.0, 1.0, 1.0, 1.0) and m["steps"] > 3

def test_web_run_through_the_runner_scores_as_the_function_run(bench, tmp_path):
    "The runner runs the web oracle (resumable records with page steps) and it scores what the function oracle does."
    from personalwab.run.config import RunConfig
    from personalwab.run.runner import run
    from personalwab.web.run import run_web, web_config
    b, res = bench
    cfg = RunConfig(method="oracle", limit=9, sample="stratified")
    fn = run(cfg, tmp_path, progress=False, benchmark=b, resources=res)
    wr = run_web(cfg, tmp_path, progress=False, benchmark=b, resources=res)
    assert web_config(cfg).hash != cfg.hash and wr.dir != fn.dir
    cols = ["task_id", "type", "function_acc", "result_acc"]
    assert wr.results[cols].sort_values("task_id").values.tolist() == fn.results[cols].sort_values("task_id").values.tolist()
    import json
    recs = [json.loads(l) for l in (wr.dir/"results.jsonl").read_text().splitlines()]
    assert all(r["interface"] == "web" and r["status"] == "ok" and r["steps"] == len(r["page_steps"]) for r in recs)
    assert all({"url", "action", "node", "dom_tokens", "calls"} <= set(s) for r in recs for s in r["page_steps"])
