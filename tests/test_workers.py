"""A run with two workers records what a run with one records.

Two workers run two episodes at once on one shared local model (greedy calls are not serialised,
each worker gets one torch thread on two cores). Every task's actions, scores and generated token
counts must be those of the one-worker run. A real (tiny) Hugging Face model answers, with its
response cache off so that both runs really call it.
"""
from personalwab.run.runner import RunConfig, run, agent_kwargs


def _records(result):
    import json
    recs = [json.loads(l) for l in (result.dir/"results.jsonl").read_text().splitlines()]
    return {r["task_id"]: (r["actions"], r["function_acc"], r["result_acc"], r["status"],
                           [u["completion_tokens"] for u in r["usage"]]) for r in recs}


def test_two_workers_record_what_one_records(tmp_path):
    from personalwab.llm.hf import tiny
    from personalwab.agents.methods import get_agent
    llm = tiny(cache=False)
    factory = lambda cfg, b: get_agent(cfg.method, llm, b, **agent_kwargs(cfg))
    for method in ("no_memory", "relevant_memory"):
        cfg = RunConfig(method=method, agent_llm="tiny", data="default", limit=6, sample="stratified",
                        params={"constrained": True, "max_tokens": 24})
        one = run(cfg, out_dir=tmp_path/"one", progress=False, agent_factory=factory)
        two = run(cfg.model_copy(update={"workers": 2}), out_dir=tmp_path/"two", progress=False, agent_factory=factory)
        a, b = _records(one), _records(two)
        assert len(a) == 6 and a == b, method
        assert all(len(v[4]) > 0 and v[3] == "ok" for v in a.values())   # the model really answered every task
