"""Time plain against drafted greedy decoding on the real SmolLM2-135M (issue 58), and measure the logit drift.

    OMP_NUM_THREADS=1 .venv/bin/python benchmarks/bench_draft_decode.py [--max-tokens 32] [--runs 2] [--calibrate]

Two `hf` backends (response cache off, prefix cache on but cleared before every call, so every call reads its whole
prompt): one answers plainly, the other is given the model's own greedy reply as its draft (`chat(draft=text)`). On
the same 24 prompts (12 chat questions, 12 agent requests under the environment's system prompt and tools) it prints
the median seconds per call of each, their ratio, and checks that every drafted answer is the plain one. With
`--calibrate`, it also prints the largest logit drift (`llm.draft.logit_drift`) over 36 prompts (the 24 and 12
two-turn conversations), the number that `NEAR_TIE` must exceed twice over.
"""
import argparse, os, statistics, time

QUESTIONS = ["What is the capital of France?", "Write a haiku about the sea.", "List three fruits.",
             "Explain gravity in one sentence.", "How do I boil an egg?", "Give me a name for a cat.",
             "What is 12 times 7?", "Translate 'good morning' into Spanish.", "Why is the sky blue?",
             "Tell me a fun fact about octopuses.", "What is a prime number?", "Suggest a title for a blog about coffee."]
REQUESTS = ["Find me a waterproof hiking backpack under $80.",
            "Recommend something like the headphones I bought last month.",
            "Write a review of the coffee grinder I bought: it is loud but grinds evenly.",
            "I need a compact air fryer for a small kitchen.", "Search for a red yoga mat that is not slippery.",
            "What should I buy next after my running shoes?", "Review my desk lamp: bright, cheap plastic, 3 stars.",
            "Find a kettle that boils fast and is quiet.", "Show me gaming mice with good reviews.",
            "I want a phone case for an iPhone 13 that is slim.", "Suggest products for my camping trip.",
            "Write a short review for the portable speaker: great bass, poor battery."]


def conversations():
    "(messages, tools) of the 36 prompts: questions, agent requests with tools, two-turn conversations."
    from personalwab.env.environment import system_prompt
    from personalwab.env.functions import tool_schemas
    sys_prompt, tools = system_prompt("single"), tool_schemas()
    out = [([{"role": "user", "content": q}], None) for q in QUESTIONS]
    out += [([{"role": "system", "content": sys_prompt}, {"role": "user", "content": f"user_id: U{i}. {r}"}], tools)
            for i, r in enumerate(REQUESTS)]
    out += [([{"role": "system", "content": "You are a helpful shopping assistant."}, {"role": "user", "content": r},
              {"role": "assistant", "content": "Sure, let me look."},
              {"role": "user", "content": "Thanks, keep it short."}], None) for r in REQUESTS]
    return out


def calibrate(llm, max_tokens):
    from personalwab.llm.draft import logit_drift, NEAR_TIE
    model, tok, _ = llm.load()
    rows = []
    for msgs, tools in conversations():
        text = tok.apply_chat_template(llm._prepare(msgs, tools), add_generation_prompt=True, tokenize=False)
        ids = tok(text, return_tensors="pt", add_special_tokens=False)["input_ids"]
        rows.append(logit_drift(model, ids, max_tokens, pad_token_id=tok.pad_token_id, eos_token_id=tok.eos_token_id))
    worst = max(max(r["one_pass"], r["decoding_on"]) for r in rows)
    print(f"calibration: {len(rows)} prompts, {sum(r['tokens'] for r in rows)} reply tokens; largest drift: one pass "
          f"{max(r['one_pass'] for r in rows):.3e}, decoding on {max(r['decoding_on'] for r in rows):.3e}; "
          f"smallest top-2 gap {min(r['min_gap'] for r in rows):.3e}; NEAR_TIE {NEAR_TIE:g} = "
          f"{NEAR_TIE / worst:.1f} x the drift")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--max-tokens", type=int, default=32)
    ap.add_argument("--runs", type=int, default=2, help="timed calls per prompt and kind")
    ap.add_argument("--calibrate", action="store_true")
    a = ap.parse_args()
    from personalwab.llm.hf import smollm2
    plain, drafted = smollm2(cache=False), smollm2(cache=False)
    if a.calibrate: calibrate(plain, a.max_tokens)
    convs = conversations()[:24]
    plain.chat(convs[0][0], max_tokens=4)                         # load and warm up
    tp, td, accepted, tokens = [], [], 0, 0
    for msgs, tools in convs:
        ref = plain.chat(msgs, tools=tools, max_tokens=a.max_tokens)[0]
        for _ in range(a.runs):
            plain.prefix_cache.clear(); drafted.prefix_cache.clear()
            t0 = time.perf_counter(); p = plain.chat(msgs, tools=tools, max_tokens=a.max_tokens)[0]
            tp.append(time.perf_counter() - t0)
            t0 = time.perf_counter(); d = drafted.chat(msgs, tools=tools, max_tokens=a.max_tokens, draft=ref.text)[0]
            td.append(time.perf_counter() - t0)
            assert (d.text, d.usage.completion_tokens) == (p.text, p.usage.completion_tokens) == \
                   (ref.text, ref.usage.completion_tokens), (p.text, d.text)
        accepted += d.draft.accepted; tokens += d.usage.completion_tokens
    mp, md = statistics.median(tp), statistics.median(td)
    print(f"{len(convs)} prompts x {a.runs} runs, max_tokens {a.max_tokens}, torch threads "
          f"{os.environ.get('OMP_NUM_THREADS', 'default')}: {tokens} reply tokens, {accepted} accepted from drafts")
    print(f"median s/call: plain {mp:.3f}, drafted {md:.3f}; drafted/plain {md / mp:.3f} ({mp / md:.1f}x faster)")


if __name__ == "__main__":
    main()
