"""Whatever a model does on the shop's pages, `ShopEnv.step` never raises, never leaves a node it showed
unusable, and the episode it records stays consistent with the `WebEnv` inside (hypothesis)."""
from hypothesis import HealthCheck, given, settings, strategies as st
from personalwab.env.environment import make_env
from personalwab.data.schema import tiny_benchmark
from personalwab.env.search import get_searcher
from personalwab.web.env import ShopEnv

TB = tiny_benchmark()
SE = ShopEnv(make_env(TB, "single", searcher=get_searcher(TB, "bm25s")), max_page_steps=12)

text = st.one_of(st.text(max_size=40), st.sampled_from(["drink mix", "<script>x</script>", "a\nb\r\nc", "é" * 3, " "]))
move = st.one_of(
    st.tuples(st.just("click"), st.integers(0, 120)),
    st.tuples(st.just("type"), st.integers(0, 120), text, st.booleans()),
    st.tuples(st.just("select"), st.integers(0, 120), st.sampled_from(["4 stars", "5", "nope"])),
    st.tuples(st.just("go_back")), st.tuples(st.just("message"), text),
    st.tuples(st.just("raw"), st.one_of(st.text(max_size=60), st.binary(max_size=30))))

def output(m, shown):
    kind, *args = m
    if kind == "raw": return args[0]
    if kind in ("click", "type", "select") and shown: args[0] = sorted(shown)[args[0] % len(shown)]   # mostly nodes on the page
    if kind == "click": return f"click({args[0]})"
    if kind == "type": return f"type({args[0]}, {args[1]!r}, submit={args[2]})"
    if kind == "select": return f"select({args[0]}, {args[1]!r})"
    if kind == "go_back": return "go_back()"
    return f"message({args[0]!r})"

@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(["train-00000", "test-00000"]), st.lists(move, min_size=1, max_size=12))
def test_random_page_episodes(task, moves):
    obs = SE.reset(task)
    for m in moves:
        obs2, done, st_ = SE.step(output(m, obs.nodes))
        if st_ is None: assert done; break
        assert st_.ok == (st_.error is None) and (st_.ok or obs2.note == st_.error)
        assert obs2.url.startswith("/") and obs2.tokens <= SE.budget
        obs = obs2
        if done: break
    w = SE.episode()
    e = w.episode
    assert [c for s in w.steps for c in s.calls] == e.actions          # every function call came from exactly one page step
    assert len(w.steps) <= SE.max_page_steps
    assert (e.function_acc, e.result_acc) in {(0.0, 0.0)} or e.function_acc == 1.0
