"""PersonalWAB's tasks as BrowserGym tasks (personalwab.web.browsergym), end to end: real BrowserGym, real Chromium
(Debian's, for both of BrowserGym's browsers), the real shop and the project's scoring. The gold actions of each task
type, written as BrowserGym actions on the elements' bids, score exactly what the project scores; in the multi-turn
track a BrowserGym agent's `send_msg_to_user` gets the simulated user's answer (the offline SmolLM2) in the chat.
Skipped only where no Chromium is installed."""
import re, time
import pytest
from conftest import nothing_left_running
from personalwab.web.drivers import chromium_path

pytestmark = [pytest.mark.browser, pytest.mark.xdist_group("browsergym"),
              pytest.mark.skipif(chromium_path() is None, reason="no Chromium installed (Debian: apt-get install chromium)")]

@pytest.fixture(scope="module")
def bg():
    "The module (its tasks registered on import), the benchmark and its shared parts; afterwards nothing of ours left running."
    from personalwab.env.resources import Resources
    from personalwab.run.config import load_data
    from personalwab.web import browsergym as bgm
    with nothing_left_running(bgm.stop_playwright):
        b = load_data("default", progress=False)
        yield bgm, b, Resources(b)

def ax_bid(obs, role: str, name: str) -> str:
    "The bid of the element of `role` named `name` in BrowserGym's accessibility tree, read as a BrowserGym agent reads it."
    from browsergym.utils.obs import flatten_axtree_to_str
    tree = flatten_axtree_to_str(obs["axtree_object"])
    m = re.search(rf"\[(\w+)\] {role} '{re.escape(name)}'", tree)
    assert m, f"no {role} {name!r} on {obs['url']}:\n{tree[:3000]}"
    return m.group(1)

def test_gymnasium_make_serves_the_tasks_shop(bg):
    "`gymnasium.make` by the registered name: the shop of the task's user, the instruction as the goal, their orders before it."
    import gymnasium as gym
    bgm, b, _ = bg
    task = b.task("test-00000")
    assert "browsergym/personalwab.single.test-00000" in gym.registry and "browsergym/personalwab.multi.test-00000" in gym.registry
    env = gym.make("browsergym/personalwab.single.test-00000")
    try:
        obs, info = env.reset()
        assert obs["goal"] == task.task and obs["chat_messages"][-1] == {**obs["chat_messages"][-1], "role": "user", "message": task.task}
        assert info["task_info"]["user_id"] == task.user_id and obs["url"] == info["task_info"]["url"] + "/"
        obs, reward, terminated, _, info = env.step(f"click({ax_bid(obs, 'link', 'Your orders')!r})")
        history = b.history_before(task.user_id, task.timestamp)
        from browsergym.utils.obs import flatten_axtree_to_str
        tree = flatten_axtree_to_str(obs["axtree_object"])
        assert obs["url"].endswith("/orders") and obs["last_action_error"] == ""
        assert history and history[-1].product_info.title in tree and (reward, terminated) == (0.0, False)
        assert info["task_info"] | {"calls": None} == {"task_id": task.id, "type": task.type, "track": "single", "function_acc": 0.0,
                                                       "result_acc": 0.0, "end": "", "calls": None}
    finally: env.close()

def test_gold_actions_of_each_task_type_score_as_the_project(bg):
    """Each type's first test task: its gold page steps as BrowserGym actions (click, fill + press Enter, select_option on
    bids) end the task with the reward and accuracies the web track's own gold replay scores, by the same calls."""
    import gymnasium as gym
    from personalwab.env.environment import make_env
    from personalwab.web.env import ShopEnv
    from personalwab.web.gold import gold_trajectory, replay_gold
    bgm, b, res = bg
    project = ShopEnv(make_env(b, "single", resources=res))       # the web track in process: the project's own score
    for kind in ("search", "recommend", "review"):
        task = next(t for t in b.split("test") if t.type == kind)
        w, _ = replay_gold(project, task)
        want = w.episode
        env = gym.make(f"browsergym/personalwab.single.{task.id}")
        try:
            obs, _ = env.reset()
            done, acts = False, []
            for g in gold_trajectory(b, task, "single"):
                assert not done, task.id
                for a in bgm.gold_actions(g, bgm.dom_tree(obs)):
                    url = obs["url"]
                    obs, reward, done, truncated, info = env.step(a)
                    acts.append(a)
                    err = obs["last_action_error"]
                    # BrowserGym gives every action 500 ms (its convention); an action that submits a form waits for the
                    # shop's answer within them, which a loaded machine can exceed: the key was pressed, the page comes
                    # (validate waits for the shop's pending requests), and the reward below checks the outcome
                    assert err == "" or (err.startswith("TimeoutError") and a.startswith(("press(", "click("))), (task.id, a, err)
                    for _ in range(60):                 # then the page it submitted to is waited for, as an agent would
                        if err == "" or done or obs["url"] != url: break
                        obs, reward, done, truncated, info = env.step("noop(1000)")
            got = info["task_info"]
            assert done and not truncated and got["end"] == "terminal" and obs["url"].endswith("/end"), (task.id, acts)
            assert (got["function_acc"], got["result_acc"], reward) == (want.function_acc, want.result_acc, want.result_acc), task.id
            assert [c for c in got["calls"]] == want.actions, task.id
            assert want.function_acc == 1.0 and (kind == "recommend" or reward > 0), task.id   # the gold scores
        finally: env.close()

def test_multi_turn_chat_reaches_the_simulated_user(bg):
    """A BrowserGym agent on the multi-turn track: it asks with `send_msg_to_user`, the simulator (SmolLM2, offline) answers
    in `obs['chat_messages']`; then it searches, by bids from the accessibility tree, and presses Done: the reward is the
    project's score of its search."""
    import gymnasium as gym
    from personalwab.env.environment import make_env
    from personalwab.env.metrics import best_attempt
    from personalwab.env.resources import shared
    from personalwab.llm.base import get_llm
    from personalwab.run.protocol import grade
    bgm, b, res = bg
    shared(("llm", "smollm2"), lambda: get_llm("smollm2", cache=False))     # every answer computed, nothing cached on disk
    task = b.task("test-00000")
    env = gym.make(f"browsergym/personalwab.multi.{task.id}", task_kwargs={"user_llm": "smollm2"})
    try:
        obs, _ = env.reset()
        n = len(obs["chat_messages"])
        question = "Which capacity and which brand are you looking for?"
        obs, reward, done, _, info = env.step(f"send_msg_to_user({question!r})")
        new = obs["chat_messages"][n:]
        assert [m["role"] for m in new] == ["assistant", "user"] and new[0]["message"] == question, new
        answer = new[1]["message"]
        assert answer.strip() and answer != "(The user does not answer.)" and (reward, done) == (0.0, False)
        assert info["task_info"]["calls"] == [{"name": "respond", "arguments": {"content": question}}]
        box = ax_bid(obs, "textbox", "Search products")
        obs, reward, done, _, info = env.step(f"fill({box!r}, {task.target.product_info.title!r})")
        obs, reward, done, _, info = env.step(f"press({box!r}, 'Enter')")
        assert not done and "/results/" in obs["url"] and reward == 0.0      # multi-turn: a search does not end the task
        page_text = " ".join(" ".join(bgm.dom_tree(obs).itertext()).split())
        assert f"User: {' '.join(answer.split())}" in page_text                  # the next page's chat shows the answer too
        obs, reward, done, _, info = env.step(f"click({ax_bid(obs, 'button', 'Done')!r})")
        got = info["task_info"]
        assert done and got["end"] == "stop" and obs["url"].endswith("/end")
        calls = got["calls"]
        assert [c["name"] for c in calls] == ["respond", "search_product_by_query", "stop"]
        f, r = best_attempt(grade(make_env(b, "single", resources=res), task, calls))
        assert (got["function_acc"], got["result_acc"], reward) == (f, r, r) and f == 1.0 and r > 0
        obs, reward, done, _, info = env.step("noop()")                            # the reward is given once
        assert reward == 0.0 and done
    finally: env.close()
