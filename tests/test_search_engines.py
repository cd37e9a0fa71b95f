"""The Python analyser of the bm25s engine against Lucene's own (Anserini's DefaultEnglishAnalyzer),
on generated product-like text: the same terms, in the same order, for every string."""
import pytest
from hypothesis import given, settings, strategies as st, HealthCheck

from personalwab.env.search import analyze, java_class, porter_stem

ALPHABET = "abcdefghijklmnopqrstuvwxyzABCDEFXYZ0123456789 .,;:'’_-$%&/()[]{}\"!?#+*éñüß東京"
WORDS = ["it's", "users'", "4.5", "1,299.00", "3.5mm", "USB-C", "e.g.", "don't", "B07XYZ1234", "technology",
         "assembly", "flexibly", "running", "hopping", "relational", "generalization", "us", "is", "the", "café"]


@pytest.fixture(scope="module")
def lucene():
    utils = java_class("io.anserini.analysis.AnalyzerUtils")
    an = java_class("io.anserini.analysis.DefaultEnglishAnalyzer").newDefaultInstance()
    return lambda text: list(utils.analyze(an, text).toArray())


text = st.lists(st.one_of(st.sampled_from(WORDS), st.text(alphabet=ALPHABET, min_size=1, max_size=12)), max_size=30).map(" ".join)


@settings(max_examples=1500, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text)
def test_analyzer_matches_lucene(lucene, s):
    assert analyze(s) == lucene(s)


@settings(max_examples=1500, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.text(alphabet="abcdefghijklmnopqrstuvwxyz", min_size=1, max_size=15))
def test_porter_matches_lucene(lucene, w):
    want = lucene(w)
    if want: assert [porter_stem(w)] == want        # stop words give []
