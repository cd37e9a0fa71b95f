"""Drafted decoding gives the tokens of plain greedy decoding (issue 58), on the real SmolLM2-135M.

`drafted_generate` is compared token for token with the `hf` backend's plain greedy call (`model.generate` as
`HFLLM._generate_one` makes it) on chat questions and on agent prompts under the environment's system prompt and tools,
each with six drafts: the right one (ending at end-of-sequence where the reply does), wrong at the first token, wrong in
the middle, a premature end-of-sequence, longer than the reply, and empty. Then the backend itself: multi-turn agent
episodes (prefix cache and tool-call stopping on) answered with drafts give the answers of a backend without drafts.
Then the same under the backend's logits processors (issue 58): constrained tool calls and guided page steps (with and
without a Thought line), drafts wrong at the first token, in the middle, at the end, longer than the reply, empty, and
the reply's text as a record keeps it (tokenized again where the model writes it in other tokens, `text_redraft`).
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


# Constrained tool calls and guided page steps (issue 58): the backend decodes them under logits processors whose masks
# depend on the answer so far; the drafted decode scores each draft position under the same processors.
CONSTRAINED_NEW, GUIDED_NEW = 48, 96


def backend_kw(llm, tok, ids, max_tokens, tools=None, constrained=False, guide=None):
    "The `generate` arguments the backend builds for one greedy call (its own fresh processors and stopping criteria)."
    p = dict(n=1, temperature=0.0, max_tokens=max_tokens, seed=0, num_beams=1, constrained=constrained)
    return llm._generation_kwargs(tok, p | ({"guide": guide} if guide is not None else {}), ids.shape[1], None, tools)


def plain_under(model, ids, kw):
    "`HFLLM._generate_one`'s plain call."
    with torch.inference_mode():
        out = model.generate(input_ids=ids, attention_mask=torch.ones_like(ids), return_dict_in_generate=True, **kw)
    return out.sequences[0, ids.shape[1]:].tolist()


def constrained_drafts(tok, reply, text):
    """Drafts of a constrained or guided reply: name -> (token ids, fewest tokens accepted, most; None: not pinned).
    `text`: the answer's text as a record keeps it (a guided step with its forced tail written out)."""
    eos, k = tok.eos_token_id, len(reply) // 2
    pool = tok(' the a of and {"name": "query"}', add_special_tokens=False)["input_ids"]
    other = lambda t: next(x for x in pool if x != t)
    return {"right": (reply, len(reply), len(reply)),
            "wrong_first": ([other(reply[0])] + reply[1:], 0, 0),
            "wrong_middle": (reply[:k] + [other(reply[k])] + reply[k + 1:], k, k),
            "wrong_end": (reply[:-1] + [other(reply[-1])], len(reply) - 1, len(reply) - 1),
            "longer": (reply + [eos] + reply, len(reply), len(reply)),
            "text": (tok(text, add_special_tokens=False)["input_ids"] + [eos], None, None),
            "empty": ([], 0, 0)}


def check_under_processors(hf, llm, ids, max_tokens, **how):
    "Plain and drafted decoding under the backend's processors give the same tokens for every draft; the stats."
    from personalwab.llm.draft import drafted_generate, text_redraft
    model, tok, _ = hf
    reply = plain_under(model, ids, backend_kw(llm, tok, ids, max_tokens, **how))
    assert "logits_processor" in backend_kw(llm, tok, ids, max_tokens, **how)
    text = tok.decode(reply, skip_special_tokens=True)
    if how.get("guide") is not None: text = how["guide"].complete(text)
    stats = {}
    for name, (draft, lo, hi) in constrained_drafts(tok, reply, text).items():
        redraft = text_redraft(tok, text) if name == "text" else None    # as the backend decodes a text draft
        with torch.inference_mode():
            r = drafted_generate(model, ids, draft, **backend_kw(llm, tok, ids, max_tokens, **how), redraft=redraft)
        assert r.tokens == reply, (name, tok.decode(r.tokens), tok.decode(reply))
        if lo is not None and not r.stats.replayed: assert lo <= r.stats.accepted <= hi, (name, r.stats)
        stats[name] = r.stats
    return reply, stats


def test_constrained_tool_calls_give_the_plain_tokens(hf):
    from personalwab.env.functions import tool_schemas
    model, tok, smollm2 = hf
    llm, tools = smollm2(cache=False), tool_schemas()
    stopped = 0
    for ids in prompts(hf)[len(QUESTIONS):]:
        reply, stats = check_under_processors(hf, llm, ids, CONSTRAINED_NEW, tools=tools, constrained=True)
        stopped += len(reply) < CONSTRAINED_NEW           # a complete call ends it (`CallComplete`)
        assert stats["text"].accepted >= len(reply) // 2, stats["text"]   # the call as a record keeps its text
    assert stopped >= 2, stopped


def test_guided_page_steps_give_the_plain_tokens(hf):
    from personalwab.data.load import load_benchmark
    from personalwab.run.config import RunConfig, select_tasks
    from personalwab.web.guide import StepGuide
    from personalwab.web.prompt import fit_observation, step_messages
    from personalwab.web.run import web_config, web_env_factory
    model, tok, smollm2 = hf
    llm, b = smollm2(cache=False), load_benchmark(progress=False)
    cfg = web_config(RunConfig(method="no_memory", agent_llm="smollm2", split="test", limit=2, sample="stratified",
                               seed=2024), budget=1024)
    se = web_env_factory(cfg, b)
    try:
        for task, thought in zip(select_tasks(b, cfg), (False, True)):
            obs = fit_observation(se.reset(task), [], "", None, None)
            guide = StepGuide(1, obs.dom, obs.nodes, thought=thought)
            text = tok.apply_chat_template(step_messages(obs, []), add_generation_prompt=True, tokenize=False)
            ids = tok(text, return_tensors="pt", add_special_tokens=False)["input_ids"]
            reply, stats = check_under_processors(hf, llm, ids, GUIDED_NEW, guide=guide)
            assert stats["right"].accepted == len(reply), stats
            # the text as a record keeps it: under `thought` greedy writes `T`,`h`,`ought` where the text tokenizes as
            # `Th`,`ought`; tokenized again after the model's own token (`text_redraft`), the draft goes on
            assert stats["text"].accepted >= len(reply) // 2, stats
    finally: se.close()


def test_the_backend_answers_constrained_and_guided_calls_the_same_with_drafts(hf):
    "`chat(..., constrained=True / guide=, draft=)` on a backend with drafts and one without: the same completions."
    from personalwab.env.functions import tool_schemas
    from personalwab.web.guide import StepGuide
    *_, smollm2 = hf
    off, on, tools = smollm2(cache=False), smollm2(cache=False), tool_schemas()
    msgs = [{"role": "system", "content": "You are a shopping assistant. Use the tools."},
            {"role": "user", "content": "Find me a yoga mat."}]
    a = off.chat(msgs, tools=tools, max_tokens=CONSTRAINED_NEW, constrained=True)[0]
    for draft in (a.text, '{"name": "stop", "arguments": {}}'):
        b = on.chat(msgs, tools=tools, max_tokens=CONSTRAINED_NEW, constrained=True, draft=draft)[0]
        assert (b.text, b.tool_call, b.usage.completion_tokens, b.error) == (a.text, a.tool_call,
                                                                             a.usage.completion_tokens, a.error)
        assert hasattr(b, "draft")
        if draft == a.text: assert b.draft.accepted >= a.usage.completion_tokens // 2, b.draft   # the stripped text
    page = '<a node="1" href="/">Home</a><input node="2" type="search"><button node="3">Search</button>'
    guide = StepGuide(1, page)
    step = [{"role": "user", "content": f"Page:\n{page}\nWrite step 1: search for a yoga mat."}]
    a = off.chat(step, max_tokens=GUIDED_NEW, guide=guide)[0]
    b = on.chat(step, max_tokens=GUIDED_NEW, guide=guide, draft=a.text)[0]
    assert (b.text, b.usage.completion_tokens, b.error) == (a.text, a.usage.completion_tokens, a.error)
    assert b.draft.accepted >= 1


def test_under_processors_on_the_tiny_model():
    """The same on the tiny random model (seconds, not minutes): constrained calls and guided steps (with and without a
    Thought line), every kind of draft, text drafts tokenized again (`text_redraft`); its replies split text in many
    more pieces than the tokenizer does, so the re-drafting is exercised to its cap."""
    from personalwab.env.functions import tool_schemas
    from personalwab.llm.draft import draft_ids, drafted_generate, text_redraft
    from personalwab.llm.hf import tiny
    from personalwab.llm.toolcalls import with_tools
    from personalwab.web.guide import StepGuide
    llm, tools = tiny(cache=False), tool_schemas()
    model, tok, _ = llm.load()
    page = '<a node="1" href="/">Home</a><input node="2" type="search"><button node="3">Search</button>'
    ids_of = lambda msgs: tok(tok.apply_chat_template(msgs, add_generation_prompt=True, tokenize=False),
                              return_tensors="pt", add_special_tokens=False)["input_ids"]
    cases = []
    for q in ["I need a cheap kettle.", "Find running shoes"]:
        cases.append((ids_of(with_tools([{"role": "user", "content": q}], tools)), 40, dict(tools=tools,
                                                                                           constrained=True)))
        for thought in (False, True):
            cases.append((ids_of([{"role": "user", "content": f"{q} {page}"}]), 60,
                          dict(guide=StepGuide(1, page, thought=thought))))
    redrafted = 0
    for ids, n, how in cases:
        reply = plain_under(model, ids, backend_kw(llm, tok, ids, n, **how))
        text = tok.decode(reply, skip_special_tokens=True)
        text = (how["guide"].complete(text) if "guide" in how else text).strip()
        drafts = {name: (d, None) for name, (d, *_) in constrained_drafts(tok, reply, text).items() if name != "text"}
        wrong = text[:5] + "zz" + text[5:]
        for name, t in (("text", text), ("text_newline", "\n" + text), ("text_wrong", wrong)):
            drafts[name] = (draft_ids(tok, t.strip()), text_redraft(tok, t))
        for name, (d, rd) in drafts.items():
            with torch.inference_mode():
                r = drafted_generate(model, ids, d, **backend_kw(llm, tok, ids, n, **how), redraft=rd)
            assert r.tokens == reply, (name, list(how), tok.decode(r.tokens), tok.decode(reply), r.stats)
            assert r.stats.redrafts <= 4 and r.stats.accepted <= r.stats.draft_len
            redrafted += r.stats.redrafts
    assert redrafted > 0
