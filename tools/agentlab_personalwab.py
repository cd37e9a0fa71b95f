"""AgentLab's GenericAgent (ServiceNow/AgentLab, by BrowserGym's authors) on PersonalWAB's registered BrowserGym tasks,
driven by the project's offline model behind `personalwab serve`; its episodes recorded as a run of the project's format.

Runs in a virtual environment of its own that has AgentLab (never the project's .venv: AgentLab pulls ray, dask,
litellm, an openai below 2, ...); how it is built and run is in nbs/web/89a_browsergym_agents.ipynb ("AgentLab's
GenericAgent"). In short, with `personalwab serve --model smollm2 --port 8011 --answer-form browsergym` running from
the project's venv (its replies decoded in GenericAgent's answer form, nbs/web/89e_browsergym_answer_form.ipynb):

    HOME=<empty scratch folder> PERSONALWAB_CACHE=~/.cache/personalwab PYTHONPATH=<checkout> \\
      VLLM_API_URL=http://127.0.0.1:8011/v1 VLLM_API_KEY=none RAY_AUTH_MODE=disabled \\
      <agentlab venv>/bin/python tools/agentlab_personalwab.py --out <scratch> --tasks test-00016 --track single

(`PERSONALWAB_CACHE` names the project's cache, which holds the converted SmolLM2 and the search index, under the real
home; Ray writes its session files under the temporary one.)

AgentLab runs each episode in a worker process (Ray by default) that knows only the benchmarks it imports lazily by
name; the tasks are registered there by `PersonalWABEnvArgs.make_env`, which imports personalwab.web.browsergym in the
worker before making the environment, and writes the task's record (`record_browsergym_episode`) beside AgentLab's
own files when the environment closes. The driver then writes those records as a run folder (`write_browsergym_run`).
"""
from __future__ import annotations
import argparse, json, time
from dataclasses import dataclass
from pathlib import Path

RECORD = "personalwab_record.json"

def env_args_class():
    "An EnvArgs whose environment is made with PersonalWAB's tasks registered, and records its episode when it closes."
    from agentlab.experiments.loop import EnvArgs

    @dataclass
    class PersonalWABEnvArgs(EnvArgs):
        def make_env(self, action_mapping, exp_dir, exp_task_kwargs: dict = {}, use_raw_page_output=True):
            import personalwab.web.browsergym                      # registers every task, in this (worker) process
            from personalwab.web.browsergym_runs import record_browsergym_episode
            env = super().make_env(action_mapping, exp_dir, exp_task_kwargs, use_raw_page_output)
            close, t0 = env.close, time.perf_counter()
            def close_and_record():
                try:
                    if getattr(env.unwrapped.task, "shop", None) is not None:
                        rec = record_browsergym_episode(env, "agentlab_generic", time.perf_counter() - t0)
                        (Path(exp_dir)/RECORD).write_text(json.dumps(rec))
                finally: close()
            env.close = close_and_record
            return env
    # a global of this module, so that AgentLab's pickle of the experiment (exp_args.pkl) names it; Ray's cloudpickle
    # sends a class of the script (__main__) to its workers by value
    PersonalWABEnvArgs.__qualname__, PersonalWABEnvArgs.__module__ = "PersonalWABEnvArgs", __name__
    globals()["PersonalWABEnvArgs"] = PersonalWABEnvArgs
    return PersonalWABEnvArgs

THINK_CHARS = 300                                           # of each step's thought, in the record

def agentlab_steps(exp_dir: Path) -> dict:
    """GenericAgent's own account of an episode, from AgentLab's files of it: each step's action string, thought (its
    start), LLM tries (AgentLab retries an answer its parser rejects) and tokens; AgentLab's error and step count."""
    from agentlab.experiments.loop import ExpResult
    er, steps = ExpResult(str(exp_dir)), []
    for s in er.steps_info:
        if s.action is None and not s.agent_info: continue      # the last observation: no answer was asked for it
        info, st = s.agent_info, dict(s.stats or {})
        steps.append({"step": s.step, "action": s.action, "think": (getattr(info, "think", None) or "")[:THINK_CHARS],
                      "llm_tries": st.get("n_retry_llm"), "input_tokens": st.get("input_tokens"),
                      "output_tokens": st.get("output_tokens"), "agent_s": st.get("agent_elapsed")})
    summ = er.summary_info or {}
    return {"steps": steps, "n_steps": summ.get("n_steps"), "error": summ.get("err_msg"),
            "terminated": summ.get("terminated"), "truncated": summ.get("truncated")}

def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--out", required=True, help="scratch folder: AgentLab's study and the run folder")
    p.add_argument("--tasks", default="test-00016", help="task ids, comma-separated")
    p.add_argument("--track", default="single")
    p.add_argument("--max-steps", type=int, default=5)
    p.add_argument("--backend", default="ray", help="AgentLab's parallel backend: ray, joblib or sequential")
    p.add_argument("--max-new-tokens", type=int, default=128)
    p.add_argument("--answer-form", default="browsergym", help="the form the served model's replies take "
                   "(`personalwab serve --answer-form`): recorded with the run")
    a = p.parse_args(argv)
    import logging
    from agentlab.agents.generic_agent import GenericAgentArgs
    from agentlab.agents.generic_agent.agent_configs import FLAGS_GPT_3_5
    from agentlab.experiments.launch_exp import run_experiments
    from agentlab.experiments.loop import ExpArgs
    from agentlab.llm.chat_api import SelfHostedModelArgs
    from browsergym.experiments.benchmark import Benchmark, HighLevelActionSetArgs
    from personalwab.llm.hf import smollm2_path
    from personalwab.web.browsergym import task_name
    from personalwab.web.browsergym_runs import browsergym_run_config, write_browsergym_run
    out, ids = Path(a.out).resolve(), a.tasks.split(",")
    Env = env_args_class()
    envs = [Env(task_name=task_name(a.track, t), task_seed=0, max_steps=a.max_steps, headless=True) for t in ids]
    bench = Benchmark(name="personalwab", high_level_action_set_args=HighLevelActionSetArgs(subsets=["chat", "bid", "nav"],
                      multiaction=False, strict=False, retry_with_force=False, demo_mode="off"),
                      is_multi_tab=False, supports_parallel_seeds=False, backends=[], env_args_list=envs)
    flags = FLAGS_GPT_3_5.copy()
    flags.obs.use_html, flags.obs.use_ax_tree, flags.obs.use_screenshot = False, True, False
    flags.max_prompt_tokens = 6000                              # SmolLM2's 8,192-token context, less the answer
    flags.enable_chat = a.track == "multi"                      # the chat with the simulated user, as AgentLab's chat tasks
    model = SelfHostedModelArgs(model_name=str(smollm2_path()), backend="vllm", max_total_tokens=8192,
                                max_input_tokens=6000, max_new_tokens=a.max_new_tokens, temperature=0.01)
    agent = GenericAgentArgs(chat_model_args=model, flags=flags)
    agent.set_benchmark(bench, demo_mode=False)
    # AgentLab's Study cannot be imported offline: agentlab.experiments.study imports multi_server, which imports
    # browsergym.webarena, whose __init__ downloads NLTK's punkt_tab; its runner (run_experiments) is what Study calls
    t0 = time.perf_counter()
    run_experiments(1, [ExpArgs(agent_args=agent, env_args=e, logging_level_stdout=logging.INFO) for e in envs],
                    out/"agentlab", parallel_backend=a.backend)
    recs = [json.loads(f.read_text()) | {"agentlab": agentlab_steps(f.parent)}
            for f in sorted((out/"agentlab").rglob(RECORD))]
    cfg = browsergym_run_config(ids, "agentlab_generic", "smollm2", a.track, user_llm="smollm2",
                                answer_form=a.answer_form, max_steps=a.max_steps, max_new_tokens=a.max_new_tokens)
    run = write_browsergym_run(cfg, recs, out/"runs", agent={"method": "agentlab_generic", "agent": "GenericAgent",
                                                            "agentlab": "0.4.2", "llm": "smollm2 via personalwab serve",
                                                            "answer_form": a.answer_form, "max_steps": a.max_steps,
                                                            "max_new_tokens": a.max_new_tokens,
                                                            "backend": a.backend})
    print(f"{len(recs)} of {len(ids)} episodes recorded in {run} ({time.perf_counter() - t0:.0f} s); "
          f"`personalwab publish outside {run}` publishes them")
    for r in recs:
        print(r["task_id"], r["type"], r["end"], r["function_acc"], r["result_acc"], [c["name"] for c in r["actions"]],
              [s["action"] for s in r["agentlab"]["steps"]])

if __name__ == "__main__":
    main()
