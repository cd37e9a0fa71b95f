"""Agents through BrowserGym (personalwab.web.browsergym_agents), end to end: real BrowserGym, real Chromium (Debian's),
the registered tasks, the project's scoring.

- The project's page agents act through BrowserGym: the numbered pages built from BrowserGym's DOM observation are the
  pages the in-process driver shows, step by step, and published episodes (the rules planner's on every task type, a
  prompted SmolLM2 agent's) are played again through BrowserGym with the same page actions, calls and scores.
- An agent written the way BrowserGym agents are written (the accessibility tree by bid, `HighLevelActionSet` action
  strings, `send_msg_to_user` to talk to the user) plays a single-turn and a multi-turn task; its episodes, recorded as
  a run of the project's format, carry the scores the project gives the same calls.

Skipped only where no Chromium is installed."""
import json, re, time
import pytest
from conftest import nothing_left_running
from personalwab.web.drivers import chromium_path

pytestmark = [pytest.mark.browser, pytest.mark.xdist_group("browsergym"),
              pytest.mark.skipif(chromium_path() is None, reason="no Chromium installed (Debian: apt-get install chromium)")]

@pytest.fixture(scope="module")
def parts():
    "The benchmark and its shared parts; afterwards BrowserGym's Playwright stopped and nothing of ours left running."
    from personalwab.env.resources import Resources
    from personalwab.run.config import load_data
    from personalwab.web import browsergym_agents as bga
    with nothing_left_running(bga.stop_browsergym):
        b = load_data("default", progress=False)
        yield b, Resources(b)

def trace(se, task):
    "Replay the gold of `task` step by step: what each step saw and did, up to the step that ends the task."
    from personalwab.web.gold import gold_trajectory
    out = [(se.reset(task).url, se.obs.dom)]
    for g in gold_trajectory(se.env.b, se.session.task, se.env.track):
        obs, done, st = se.step(g.on(se.driver.tree()))
        out.append((st.url, st.action, st.ok, st.calls) + (() if done else (obs.url, obs.dom, obs.tokens)))
        if done: break
    e = se.episode().episode
    return out, (e.function_acc, e.result_acc, e.actions, e.end)

def test_browsergym_pages_are_the_in_process_pages(parts):
    """The gold of a recommendation (a select, a submit) and of a review (a select, typed text, a submit) through
    BrowserGym: every numbered page the agent would see, built from BrowserGym's DOM observation, is the in-process
    driver's, with the same node ids; the same calls and scores. (The page after the last step is not compared: the
    registered task shows its end page there.)"""
    from personalwab.env.environment import make_env
    from personalwab.web.browsergym_agents import BrowserGymShopEnv
    from personalwab.web.env import ShopEnv
    b, res = parts
    fast, slow = ShopEnv(make_env(b, "single", resources=res)), BrowserGymShopEnv(make_env(b, "single", resources=res))
    try:
        for kind in ("recommend", "review"):
            task = next(t for t in b.split("test") if t.type == kind)
            a, c = trace(fast, task), trace(slow, task)
            assert a == c, task.id
            assert slow.driver.actions[-1].startswith("click(") and slow.obs.url == "/end"
    finally: fast.close(); slow.close()

def test_published_planner_episodes_repeat_through_browsergym(parts, tmp_path):
    """The published web run of the rules planner, its verification sample (`evidence.verify.verification_sample`: one
    task of each type) played again through
    BrowserGym: the same page actions, calls, scores and step scores; the run is the project's (its own name, records
    with `"driver": "browsergym"`)."""
    from personalwab.web.browsergym_agents import compare_published
    b, res = parts
    got = compare_published("rules-single-dd330db0", ["test-00016", "test-00053", "test-00050"], scratch=tmp_path, benchmark=b, resources=res)
    assert [c.type for c in got] == ["search", "recommend", "review"], got
    assert all(c.identical for c in got), got
    (run,) = [d for d in tmp_path.iterdir() if d.is_dir()]
    recs = [json.loads(l) for l in (run/"results.jsonl").read_text().splitlines()]
    assert run.name != "rules-single-dd330db0" and {r["driver"] for r in recs} == {"browsergym"}
    assert json.loads((run/"config.json").read_text())["config"]["env_params"]["driver"] == "browsergym"

def test_a_published_model_episode_repeats_through_browsergym(parts, tmp_path):
    """A published episode of the prompted SmolLM2 page agent with PUMA's task-specific memory (a search task: the
    function identification, the page steps and the step score, every model call made again) through BrowserGym: the
    same page actions, calls, scores and step scores as published."""
    from personalwab.web.browsergym_agents import compare_published
    b, res = parts
    (c,) = compare_published("puma_gpt-single-a86899b6", ["test-00016"], scratch=tmp_path, benchmark=b, resources=res)
    assert c.identical, c
    rec = json.loads(next(tmp_path.glob("*/results.jsonl")).read_text().splitlines()[0])
    assert rec["usage"] and not any(u.get("cached") for u in rec["usage"])           # computed, not read from a cache

# An agent written the way BrowserGym agents are written: it reads the accessibility tree by bid
# (`flatten_axtree_to_str`), answers with an action string of BrowserGym's action set, and talks to the user with
# `send_msg_to_user`. Its policy is scripted: ask once in the multi-turn track, search for what the instruction (and
# the answer) says, then press Done in the multi-turn track.

class AxtreeSearchAgent:
    "A BrowserGym-convention agent (obs_preprocessor, get_action -> (action, info)) with a scripted policy over the axtree."
    question = "Which brand and which features matter most to you?"

    def __init__(self, ask: bool):
        from browsergym.core.action.highlevel import HighLevelActionSet
        self.action_set = HighLevelActionSet(subsets=["chat", "bid", "nav"], strict=False, multiaction=False)
        self.ask, self.asked, self.searched, self.filled = ask, False, False, False   # ask: the user answers (multi-turn)

    def obs_preprocessor(self, obs: dict) -> dict:
        from browsergym.utils.obs import flatten_axtree_to_str
        return {"goal": obs["goal"], "chat_messages": obs["chat_messages"], "url": obs["url"],
                "last_action_error": obs["last_action_error"], "axtree_txt": flatten_axtree_to_str(obs["axtree_object"])}

    @staticmethod
    def bid(axtree: str, role: str, name: str) -> str:
        m = re.search(rf"\[(\w+)\] {role} '{re.escape(name)}'", axtree)
        assert m, f"no {role} {name!r} in the accessibility tree:\n{axtree[:2000]}"
        return m.group(1)

    def get_action(self, obs: dict) -> tuple[str, dict]:
        tree = obs["axtree_txt"]
        replies = [m["message"] for m in obs["chat_messages"] if m["role"] == "user" and m["message"] != obs["goal"]]
        if self.ask and not self.asked:
            self.asked = True
            return f"send_msg_to_user({self.question!r})", {"think": "ask the user first"}
        if not self.searched:
            box = self.bid(tree, "textbox", "Search products")
            if not self.filled:
                self.filled = True
                query = " ".join(" ".join(replies[-1:] + [obs["goal"]]).split())[:200]
                return f"fill({box!r}, {query!r})", {"think": "search for what the user said"}
            self.searched = True
            return f"click({self.bid(tree, 'button', 'Search')!r})", {"think": "submit the search"}
        return f"click({self.bid(tree, 'button', 'Done')!r})", {"think": "the search is the answer"}

def play(env, agent, max_steps: int = 8):
    "BrowserGym's loop: reset, then the agent's action on each preprocessed observation until the task ends."
    obs, info = env.reset()
    total, done, steps = 0.0, False, 0
    while not done and steps < max_steps:
        action, _ = agent.get_action(agent.obs_preprocessor(obs))
        obs, reward, done, truncated, info = env.step(action)
        total += reward; steps += 1
        for _ in range(60):                        # BrowserGym's 500 ms on a loaded machine: wait for the page, as an agent would
            if done or not obs["last_action_error"].startswith("TimeoutError"): break
            obs, reward, done, truncated, info = env.step("noop(1000)"); total += reward
        assert obs["last_action_error"] == "" or done, (action, obs["last_action_error"])
    return total, done, info["task_info"]

@pytest.mark.parametrize("track", ["single", "multi"])
def test_a_browsergym_agent_on_the_axtree_is_scored_as_the_project(parts, tmp_path, track):
    """The axtree agent plays a search task through `gymnasium.make`; in the multi-turn track it asks the simulated user
    (SmolLM2, offline) with `send_msg_to_user` and gets the answer in the chat. Its episode is recorded as a run of the
    project's format: the recorded function and result accuracy are the project's grading of the same calls, and the
    rewards BrowserGym gave sum to the result accuracy."""
    import gymnasium as gym
    from personalwab.env.environment import make_env
    from personalwab.env.metrics import best_attempt
    from personalwab.env.resources import shared
    from personalwab.llm.base import get_llm
    from personalwab.run.protocol import grade
    from personalwab.web.browsergym import task_name
    from personalwab.web.browsergym_agents import on_browsergym_thread
    from personalwab.web.browsergym_runs import browsergym_run_config, record_browsergym_episode, write_browsergym_run
    b, res = parts
    shared(("llm", "smollm2"), lambda: get_llm("smollm2", cache=False))     # every answer computed, nothing cached on disk
    task = next(t for t in b.split("test") if t.type == "search")
    cfg = browsergym_run_config([task.id], "axtree_search", "scripted", track, user_llm="smollm2")
    def episode():
        env = gym.make(f"browsergym/{task_name(track, task.id)}", task_kwargs={"user_llm": "smollm2"})
        try:
            t0 = time.perf_counter()
            total, done, info = play(env, AxtreeSearchAgent(ask=track == "multi"))
            return total, done, info, record_browsergym_episode(env, "axtree_search", time.perf_counter() - t0)
        finally: env.close()
    total, done, info, rec = on_browsergym_thread(episode)
    run = write_browsergym_run(cfg, [rec], tmp_path, agent={"method": "axtree_search", "policy": "scripted"}, benchmark=b)
    (got,) = [json.loads(l) for l in (run/"results.jsonl").read_text().splitlines()]
    calls = [{"name": a["name"], "arguments": a["arguments"]} for a in got["actions"]]
    assert [c["name"] for c in calls] == (["search_product_by_query"] if track == "single" else
                                          ["respond", "search_product_by_query", "stop"])
    f, r = best_attempt(grade(make_env(b, "single", resources=res), task, calls))
    assert done and (got["function_acc"], got["result_acc"]) == (f, r) == (info["function_acc"], info["result_acc"])
    assert total == r and f == 1.0 and got["driver"] == "browsergym" and got["status"] == "ok"
    assert json.loads((run/"config.json").read_text())["config"]["method"] == "axtree_search"
    if track == "multi":
        answer = next(m["content"] for m in got["messages"][2:] if m["role"] == "user")
        assert answer.strip() and calls[1]["arguments"]["query"].startswith(" ".join(answer.split())[:40])  # it reached the agent
