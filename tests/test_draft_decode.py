"""Drafted decoding gives the tokens of plain greedy decoding (issue 58), on the real SmolLM2-135M.

`drafted_generate` is compared token for token with the `hf` backend's plain greedy call (`model.generate` as
`HFLLM._generate_one` makes it) on chat questions and on agent prompts under the environment's system prompt and tools,
each with six drafts: the right one (ending at end-of-sequence where the reply does), wrong at the first token, wrong in
the middle, a premature end-of-sequence, longer than the reply, and empty. Then the backend itself: multi-turn agent
episodes (prefix cache and tool-call stopping on) answered with drafts give the answers of a backend without drafts.
Response caches are off, so every call reaches the model. About a minute and a half on one busy thread.
"""
import pytest
import torch

QUESTIONS = ["What is the capital of France?", "What is 12 times 7?", "Give me a name for a cat.",
             "Write a haiku about the sea.", "List three fruits."]
REQUESTS = ["Find me a waterproof hiking backpack under $80.", "Recommend something like the headphones I bought.",
            "Write a review of my coffee grinder: loud but grinds evenly."]
MAX_NEW = 16


@pytest.fixture(scope="module")
def hf():
    from personalwab.llm.hf import load_model, smollm2_path, smollm2
    model, tok, _ = load_model(smollm2_path())
    return model, tok, smollm2


def prompts(hf):
    from personalwab.env.environment import system_prompt
    from personalwab.env.functions import tool_schemas
    from personalwab.llm.toolcalls import with_tools
    _, tok, _ = hf
    convs = [[{"role": "user", "content": q}] for q in QUESTIONS]
    convs += [with_tools([{"role": "system", "content": system_prompt("single")},
                          {"role": "user", "content": f"user_id: U{i}. {r}"}], tool_schemas())
              for i, r in enumerate(REQUESTS)]
    return [tok(tok.apply_chat_template(c, add_generation_prompt=True, tokenize=False), return_tensors="pt",
                add_special_tokens=False)["input_ids"] for c in convs]


def plain(model, tok, ids, n):
    "The backend's plain greedy call (`HFLLM._generate_one` without a draft, no cached prefix)."
    with torch.inference_mode():
        out = model.generate(input_ids=ids, attention_mask=torch.ones_like(ids), return_dict_in_generate=True,
                             max_new_tokens=n, pad_token_id=tok.pad_token_id, eos_token_id=tok.eos_token_id,
                             do_sample=False, num_beams=1)
    return out.sequences[0, ids.shape[1]:].tolist()


def drafts_for(tok, reply):
    "The six drafts: name -> (token ids, fewest tokens the drafted decode must accept, most)."
    eos, k = tok.eos_token_id, len(reply) // 2
    other = next(t for t in tok(" the a of and", add_special_tokens=False)["input_ids"] if t != reply[k])
    first = next(t for t in tok(" the a of and", add_special_tokens=False)["input_ids"] if t != reply[0])
    return {"right": (reply, len(reply), len(reply)),
            "wrong_first": ([first] + reply[1:], 0, 0),
            "wrong_middle": (reply[:k] + [other] + reply[k + 1:], k, k),
            "early_eos": (reply[:k] + [eos], k, k),
            "longer": (reply + [eos] + reply, len(reply), len(reply)),
            "empty": ([], 0, 0)}


def test_drafted_decode_gives_the_plain_tokens(hf):
    from personalwab.llm.draft import drafted_generate
    model, tok, _ = hf
    combos, ended, ties = 0, 0, 0
    for ids in prompts(hf):
        reply = plain(model, tok, ids, MAX_NEW)
        ended += reply[-1] == tok.eos_token_id
        for name, (draft, lo, hi) in drafts_for(tok, reply).items():
            with torch.inference_mode():
                r = drafted_generate(model, ids, draft, max_new_tokens=MAX_NEW, pad_token_id=tok.pad_token_id,
                                     eos_token_id=tok.eos_token_id)
            assert r.tokens == reply, (name, tok.decode(r.tokens), tok.decode(reply))
            assert r.stats.draft_len == min(len(draft), MAX_NEW)
            if not r.stats.replayed: assert lo <= r.stats.accepted <= hi, (name, r.stats)
            ties += r.stats.near_ties
            combos += 1
    assert combos >= 20 and ended >= 2, (combos, ended)   # some replies end at EOS inside the draft
    assert ties <= 2, ties                                 # near ties are rare at the calibrated tolerance


def test_the_backend_answers_the_same_with_drafts(hf):
    "Agent episodes on two backends with the prefix cache on: one without drafts, one given drafts right and wrong."
    from personalwab.env.functions import tool_schemas
    *_, smollm2 = hf
    off, on = smollm2(cache=False), smollm2(cache=False)
    tools = tool_schemas()
    episodes = [["Find me a yoga mat.", "A thicker one, please."], ["I need running shoes.", "Cheaper ones?"]]
    kinds = ["right", "wrong", "right", "none"]
    accepted = 0
    for e, turns in enumerate(episodes):
        msgs = [{"role": "system", "content": "You are a shopping assistant. Use the tools."}]
        for t, u in enumerate(turns):
            msgs.append({"role": "user", "content": u})
            a = off.chat(msgs, tools=tools, max_tokens=24)[0]
            kind = kinds[2 * e + t]
            draft = {"right": a.text, "wrong": "I cannot help with that.", "none": None}[kind]
            b = on.chat(msgs, tools=tools, max_tokens=24, draft=draft)[0]
            assert (b.text, b.usage.completion_tokens, b.error) == (a.text, a.usage.completion_tokens, a.error), kind
            assert hasattr(b, "draft") == (draft is not None)
            accepted += b.draft.accepted if kind == "right" else 0
            msgs.append({"role": "assistant", "content": a.text})
    assert accepted > 0 and on.prefix_cache.stats()["hits"] >= 2
