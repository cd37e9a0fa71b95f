"""Every parser of model output does work linear in its input up to its read limit, and returns exactly what it
returned before it was made linear (issue 46, item 5): on adversarial shapes (hypothesis) and on every model output
of the published records. Work is counted in operations (tests/parser_work.py), never timed; the timings are
benchmarks/bench_parsers.py's."""
import gzip, json
import pytest
from hypothesis import given, settings, strategies as st
import parsers_reference as old
from parser_work import AUDITED, SHAPES, OverBudget, audited, count_work
from personalwab.agents.baselines import parse_react
from personalwab.agents.memory import PROFILE_DEPTH, PROFILE_READ, _nesting, parse_profile_update
from personalwab.core.config import results_dir
from personalwab.puma.data import clean_query
from personalwab.agents.puma_prompts import param_to_action, parse_asins, parse_function
from personalwab.llm.toolcalls import MAX_CALL_CHARS, CallComplete, parse_tool_call
from personalwab.web.actions import MAX_OUTPUT, _CALL, _call_span, _last_call, parse_action
from personalwab.web.guide import StepGuide
from personalwab.env.functions import TOOL_SCHEMAS

def _call(r): return r if r[0] is None else ((r[0].name, r[0].arguments, r[0].raw), r[1])

_PAGE = '<a node="1" href="/">x</a><input node="2" type="search"><select node="3"><option>a</option></select>'
_GUIDE = StepGuide(3, _PAGE, thought=True)
_DONE = CallComplete(None, TOOL_SCHEMAS, 0)

# name -> (parser, read limit, ops per character allowed). A parser with no read limit of its own (a model's answer is
# bounded by its max_tokens) is held to the page-action parser's, 100,000 characters.
PARSERS = {
    "parse_action": (parse_action, MAX_OUTPUT, 20),
    "parse_tool_call": (lambda t: parse_tool_call(t, TOOL_SCHEMAS), MAX_CALL_CHARS, 60),
    "CallComplete.done": (_DONE.done, 100_000, 30),
    "parse_react": (parse_react, 100_000, 5),
    "parse_profile_update": (parse_profile_update, PROFILE_READ, 5),
    "clean_query": (clean_query, 100_000, 10),
    "parse_function": (parse_function, 100_000, 5),
    "parse_asins": (parse_asins, 100_000, 5),
    "param_to_action": (lambda t: param_to_action("get_recommendations_by_history", t), 100_000, 5),
    "StepGuide.complete": (_GUIDE.complete, 100_000, 5),
}
# json_repair (third-party) mends what parse_profile_update finds between braces: its work is not counted, so the answer
# is read to PROFILE_READ characters and refused when nested deeper than PROFILE_DEPTH; its seconds are bounded below.
SLOW_THIRD_PARTY: set = set()
SIZES = (8, 4, 2, 1)   # the read limit divided by these


def _ops(name, text, limit=None):
    return count_work(PARSERS[name][0], text, limit=limit)[1]


@pytest.mark.parametrize("name", list(PARSERS))
def test_work_is_linear_up_to_the_read_limit(name):
    fn, L, per_char = PARSERS[name]
    for shape, make in SHAPES.items():
        if (name, shape) in SLOW_THIRD_PARTY: continue
        sizes = [L // k for k in SIZES]
        ops = [_ops(name, make(n)).ops for n in sizes]
        for n, o in zip(sizes, ops): assert o <= per_char * n + 2_000, (name, shape, n, o)
        assert ops[-1] <= 1.25 * 8 * ops[0] + 2_000, (name, shape, list(zip(sizes, ops)))   # work per character does not grow


@pytest.mark.parametrize("name", list(PARSERS))
def test_every_regex_the_parsers_run_is_audited_as_linear(name):
    seen = set()
    for shape, make in SHAPES.items(): seen |= _ops(name, make(2_000)).patterns
    assert all(map(audited, seen)), sorted(p for p in seen if not audited(p))


def test_the_count_catches_the_old_quadratic_parsers():
    "The old page-action parser runs over its budget; the old tool-call and profile parsers run regexes never audited."
    n = 6_000
    budget = PARSERS["parse_action"][2] * n + 2_000
    with pytest.raises(OverBudget): count_work(old.parse_action, SHAPES["click("](n), limit=budget)
    assert _ops("parse_action", SHAPES["click("](n)).ops <= budget
    for fn, shape in ((lambda t: old.parse_tool_call(t, TOOL_SCHEMAS), "``` + spaces"), (old.parse_profile_update, "{")):
        pats = count_work(fn, SHAPES[shape](200))[1].patterns
        assert not all(map(audited, pats)), pats
    assert r"```(?:json|JSON|tool_call|python)?\s*(.*?)```" not in AUDITED and r"\{.*\}" not in AUDITED


# The same results as the old parsers: adversarial token soups (hypothesis) and every published model output.
ACTION_TOKENS = ["click(", "type(", "select(", "message(", "go_back(", "(", ")", '"', "'", "\\", "{", "}", "[", "]", ",",
                 " ", "\n", "1", "12", "x", "Action:", "Action: ", "Node: 3", "Description:", "```", "submit=True", "=", "`",
                 '{"action": "click", "node": 1}', "mouse_click_action", "\t"]
CALL_TOKENS = ["```", "```json", "```python", "json", "tool_call", "{", "}", '"name"', '"function"', ":", '"stop"',
               '"search_product_by_query"', ",", '"arguments"', '"query"', '"x"', "[", "]", "'", "\\", " ", "\n", "\u2003",
               "<tool_call>", "x", "search_product_by_query(", "\ud800"]
PROFILE_TOKENS = ["{", "}", '"like"', '"dislike"', '"expect"', ":", "[", "]", '"B0CAPS0009"', ",", '"hat"', "x", "\n", '"', "'"]
soup = lambda toks: st.one_of(st.lists(st.sampled_from(toks), max_size=60).map("".join), st.text(max_size=200))

@settings(max_examples=1_500, deadline=None)
@given(soup(ACTION_TOKENS))
def test_parse_action_reads_what_it_read(text):
    assert parse_action(text) == old.parse_action(text)

SCAN_TOKENS = ["click(", "type(1, ", "(", ")", '"', "'", "\\", "x", " ", "message("]

@settings(max_examples=500, deadline=None)
@given(st.lists(st.sampled_from(SCAN_TOKENS), max_size=400).map("".join))
def test_last_call_is_the_loop_it_replaces(text):
    "Long soups of calls, quotes, escapes and parentheses, where the scans of many calls meet: the same call as the old loop."
    loop = next((s for m in reversed(list(_CALL.finditer(text))) if (s := _call_span(text, m.start())) is not None), None)
    assert _last_call(text) == loop

@settings(max_examples=1_500, deadline=None)
@given(soup(CALL_TOKENS))
def test_parse_tool_call_reads_what_it_read(text):
    assert _call(parse_tool_call(text, TOOL_SCHEMAS)) == _call(old.parse_tool_call(text, TOOL_SCHEMAS))
    assert _call(parse_tool_call(text)) == _call(old.parse_tool_call(text))

@settings(max_examples=1_000, deadline=None)
@given(soup(PROFILE_TOKENS))
def test_parse_profile_update_reads_what_it_read(text):
    "As before within its bounds (the first PROFILE_READ characters, nesting up to PROFILE_DEPTH); no profile beyond them."
    span = text[:PROFILE_READ]
    i, j = span.find("{"), span.rfind("}")
    if len(text) <= PROFILE_READ and (i < 0 or j <= i or _nesting(span[i:j + 1]) <= PROFILE_DEPTH):
        assert parse_profile_update(text) == old.parse_profile_update(text)
    elif not (0 <= i < j) or _nesting(span[i:j + 1]) > PROFILE_DEPTH:
        assert parse_profile_update(text) == {"like": [], "dislike": [], "expect": []}


def test_json_repair_gets_bounded_input(monkeypatch):
    "json_repair's own work is not in the operation count: what it is handed is bounded instead, in characters and in nesting."
    import json_repair
    seen, loads = [], json_repair.loads
    monkeypatch.setattr(json_repair, "loads", lambda s, *a, **k: seen.append(s) or loads(s, *a, **k))
    for shape, make in SHAPES.items():
        for n in (PROFILE_READ // 2, PROFILE_READ, 4 * PROFILE_READ): parse_profile_update(make(n))
    assert seen and all(len(s) <= PROFILE_READ and _nesting(s) <= PROFILE_DEPTH for s in seen)


def published_outputs() -> list[str]:
    """Every model output the published records hold: the agents' and the user simulator's turns, the web steps'
    actions, PUMA's search labels and sampled parameters."""
    out, root = [], results_dir()
    for p in sorted((root/"runs").glob("*/records.jsonl.gz")):
        for line in gzip.open(p, "rt"):
            r = json.loads(line)
            for k in ("messages", "user_messages"):    # the agent's turns; the simulated user's (its own assistant turns)
                out += [m["content"] for m in r.get(k) or [] if m.get("role") == "assistant" and isinstance(m.get("content"), str)]
            out += [s["action"] for s in r.get("page_steps") or [] if isinstance(s.get("action"), str)]
    for p in sorted((root/"puma").glob("*/prepare/search_labels.jsonl.gz")): out += [json.loads(l)["raw"] for l in gzip.open(p, "rt")]
    for p in sorted((root/"puma").glob("*/candidates/candidates.jsonl.gz")):
        for l in gzip.open(p, "rt"): out += [t for k in ("sampled", "beams", "candidates") for t in json.loads(l).get(k) or []]
    return out

def test_published_outputs_read_as_they_were():
    texts = published_outputs()
    assert len(texts) > 5_000
    for t in texts:
        assert parse_action(t) == old.parse_action(t), t[:200]
        assert _call(parse_tool_call(t, TOOL_SCHEMAS)) == _call(old.parse_tool_call(t, TOOL_SCHEMAS)), t[:200]
        assert _call(parse_tool_call(t)) == _call(old.parse_tool_call(t)), t[:200]
        assert parse_profile_update(t) == old.parse_profile_update(t), t[:200]
