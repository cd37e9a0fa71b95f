"""The page-action parser never raises, whatever a model writes, and reads back what it writes (hypothesis)."""
import json
from hypothesis import given, settings, strategies as st
from personalwab.web.actions import ACTION_KINDS, MAX_TEXT, PageAction, make_action, parse_action

texts = st.text(min_size=1, max_size=200).filter(lambda s: s.strip())
actions = st.one_of(
    st.builds(lambda n: PageAction("click", n), st.integers(0, 10**6)),
    st.builds(lambda n, t, s: PageAction("type", n, t, s), st.integers(0, 10**6), texts, st.booleans()),
    st.builds(lambda n, t: PageAction("select", n, t), st.integers(0, 10**6), texts),
    st.just(PageAction("go_back")),
    st.builds(lambda t: PageAction("message", None, t), texts))

@settings(max_examples=300, deadline=None)
@given(st.one_of(st.text(max_size=400), st.binary(max_size=400), st.dictionaries(st.text(max_size=10), st.one_of(st.text(max_size=20), st.integers(), st.booleans(), st.none()), max_size=5),
                 st.integers(), st.none(), st.lists(st.integers(), max_size=3)))
def test_parse_never_raises(out):
    a, err = parse_action(out)
    assert (a is None) != (err is None)
    if a is None: assert isinstance(err, str) and err
    else: assert a.kind in ACTION_KINDS

@settings(max_examples=300, deadline=None)
@given(actions)
def test_round_trip(a):
    assert parse_action(str(a)) == (a, None)
    assert parse_action(f"Thought: let me act.\nAction: {a}") == (a, None)
    assert parse_action(f"2.\nDescription: a step\nAction: {a}\nNode: {a.node}\nTarget: <a node=\"{a.node}\">\n3.\nAction: go_back()") == (a, None)
    assert parse_action(json.dumps({"action": a.kind, "node": a.node, "text": a.text, "submit": a.submit})) == (a, None)

@settings(max_examples=100, deadline=None)
@given(st.text(max_size=50), st.text(max_size=50))
def test_calls_inside_text(before, after):
    a, err = parse_action(f"{before}\nclick(7)")
    assert a == PageAction("click", 7) or err is not None   # an earlier open string can swallow it; never an exception

def test_bad_outputs_are_reasons():
    cases = {"": "no action", "type(3, '')": "non-empty", "type(3, 'x' * 3)": "cannot read", b"\xc3\x28": "not UTF-8",
             "click(-1)": "node id", "select(2)": "text string", "type(3, " + repr("x" * (MAX_TEXT + 1)) + ")": "at most",
             "message('\\ud800')": "surrogates", "go_back(1)": "takes 0", "click(1, 2)": "takes 1"}
    for out, why in cases.items():
        a, err = parse_action(out)
        assert a is None and why in err, (out, err)

def test_huge_output_is_read_from_its_end():
    a, err = parse_action("x" * 2_000_000 + " click(5)")
    assert a == PageAction("click", 5)


# truncation: whatever the DOM and budget, the cut is a suffix of the DOM that starts at an element and fits
from personalwab.web.observation import elements_of, smollm2_tokens, truncate

doms = st.lists(st.tuples(st.sampled_from(["p", "a", "li", "button"]), st.integers(0, 999), st.text(alphabet="abc xyz&;", max_size=30)),
                max_size=40).map(lambda xs: "".join(f'<{t} node="{n}">{x.replace("&", "&amp;")}</{t}>' for t, n, x in xs))

@settings(max_examples=150, deadline=None)
@given(doms, st.integers(0, 400))
def test_truncate_keeps_whole_elements_of_the_end(dom, budget):
    cut, was_cut = truncate(dom, budget, smollm2_tokens)
    assert dom.endswith(cut) and (cut == dom) == (not was_cut)
    if was_cut: assert smollm2_tokens(cut) <= budget and (cut == "" or cut.startswith("<") and not cut.startswith("</"))
    assert "".join(elements_of(dom)) == dom
