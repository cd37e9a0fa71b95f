"""Identical results with and without the `hf` backend's prefix cache.

A few multi-turn episodes of the real SmolLM2 (greedy agent turns with a shared system prompt and
tool list, sampled user-simulator turns) run twice: on a backend with the prefix cache off and on
one with it on (the default). Every answer must be the same, token for token (same text, same
number of completion tokens), while the cached run really reuses most of its prompts. Response
caches are off so that every call reaches the model. About a minute on one thread.
"""
import pytest

SYSTEM = ("You are a helpful shopping assistant of an online store. Answer the user's requests by calling "
          "the store's functions; when you have what the user needs, answer in one short sentence.")
TOOLS = [{"type": "function", "function": {"name": "search_product_by_query", "description": "Search the store's products with a text query.",
          "parameters": {"type": "object", "properties": {"query": {"type": "string", "description": "what to search for"}}, "required": ["query"]}}},
         {"type": "function", "function": {"name": "get_recommendations_by_history", "description": "Recommend products from the user's purchase history.",
          "parameters": {"type": "object", "properties": {}}}}]
EPISODES = [["I need a waterproof hiking backpack under $80.", "Something lighter, please.", "Thanks, the second one."],
            ["Recommend me something like the headphones I bought last month.", "Not that brand."],
            ["Find a compact air fryer for a small kitchen.", "Does it have good reviews?", "Ok, what else?"]]


def agent_episode(llm, turns, max_tokens=24):
    msgs, out = [{"role": "system", "content": SYSTEM}], []
    for u in turns:
        msgs.append({"role": "user", "content": u})
        c = llm.chat(msgs, tools=TOOLS, max_tokens=max_tokens, seed=0)[0]
        assert c.usage.prompt_tokens > 0 and not getattr(c, "failed", False), c.error
        out.append((c.text, c.usage.completion_tokens))
        msgs.append({"role": "assistant", "content": c.text})
    return out


def simulator_episode(llm, turns, max_tokens=16):
    msgs, out = [{"role": "system", "content": "You play a customer of an online store. Answer the assistant briefly."}], []
    for i, u in enumerate(turns):
        msgs.append({"role": "user", "content": f"Assistant: how can I help? ({u})"})
        c = llm.chat(msgs, temperature=1.0, max_tokens=max_tokens, seed=100 + i, role="user_simulator")[0]
        out.append((c.text, c.usage.completion_tokens))
        msgs.append({"role": "assistant", "content": c.text})
    return out


@pytest.fixture(scope="module")
def llms():
    from personalwab.llm.hf import smollm2
    return smollm2(cache=False, prefix_cache=False), smollm2(cache=False)


def test_prefix_cache_gives_identical_answers(llms):
    off, on = llms
    assert off.prefix_cache is None and on.prefix_cache is not None   # on by default
    for turns in EPISODES:
        assert agent_episode(on, turns) == agent_episode(off, turns)
    assert simulator_episode(on, EPISODES[0]) == simulator_episode(off, EPISODES[0])
    s = on.prefix_cache.stats()
    # everything after each episode's first call, and the shared system prompt + tools of later episodes
    assert s["hits"] >= s["lookups"] - 2 and s["reused_tokens"] > 2 * s["computed_tokens"], s
    reused = [u.reused_tokens for u in on.usage]
    assert all(r == 0 for r in (u.reused_tokens for u in off.usage)) and sum(reused) == s["reused_tokens"]


def test_episodes_in_parallel_give_the_answers_of_one_after_another(llms):
    "The runner's workers share one backend (greedy calls run concurrently, one torch thread each): same answers, token for token."
    import concurrent.futures as cf
    from personalwab.core.config import torch_threads
    from personalwab.llm.hf import smollm2
    off, _ = llms
    alone = [agent_episode(off, turns) for turns in EPISODES]
    shared = smollm2(cache=False)                       # prefix cache on, shared by the threads as in a run
    with torch_threads(1), cf.ThreadPoolExecutor(len(EPISODES)) as ex:
        together = list(ex.map(lambda turns: agent_episode(shared, turns), EPISODES))
    assert together == alone
