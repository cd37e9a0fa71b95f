"""Property tests for the official-format loader (personalwab.official), beyond the notebook's cases.

- round trip: any benchmark derived from `tiny_benchmark()` (extra users, unicode text, odd prices,
  any number of parts) loads back equal after `write_official`;
- robustness: random damage to any file (truncation, a flipped byte, a deleted span) makes
  `load_official` raise `DataError` naming that file, or load a valid benchmark, never another exception.
"""
import json, tempfile
from pathlib import Path
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st
from personalwab.schema import Behaviour, DataError, Review, User, tiny_benchmark
from personalwab.official import load_official, write_official

SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
text = st.text(st.characters(blacklist_categories=["Cs"]), max_size=30)

@st.composite
def benchmarks(draw):
    b = tiny_benchmark()
    for i in range(draw(st.integers(0, 3))):
        uid = f"U{i+2}{draw(st.text('abcXYZ', max_size=5))}"
        ts = sorted(draw(st.lists(st.integers(0, 10**13), max_size=4)))
        asins = list(b.products)
        bs = [Behaviour(product_info=b.products[asins[j % 3]], split=draw(st.sampled_from(["history", "train", "test"])),
                        review=Review(rating=draw(st.floats(0, 5)), title=draw(text), text=draw(text), parent_asin=asins[j % 3], timestamp=t))
              for j, t in enumerate(ts)]
        b.users[uid] = User(user_id=uid, profile=b.users["U1"].profile.model_copy(update={"occupation": draw(text)}), behaviours=bs)
    p = b.products["B000000002"]
    b.products["B000000002"] = p.model_copy(update={"price": draw(st.one_of(st.none(), st.floats(0, 1e4), text)), "details": {"note": draw(text)}})
    for u in b.users.values():   # keep behaviours' product_info identical to the catalog entry
        u.behaviours = [x.model_copy(update={"product_info": b.products[x.asin]}) for x in u.behaviours]
    return b

@SETTINGS
@given(b=benchmarks(), parts=st.integers(1, 5), indent=st.sampled_from([None, 2]))
def test_round_trip(b, parts, indent):
    with tempfile.TemporaryDirectory() as d:
        write_official(b, d, parts=parts, indent=indent)
        assert load_official(d, name=b.name) == b

FILES = ["user_profiles.json", "user_instructions.json", "user_history.json", "all_products.json"]

@SETTINGS
@given(fname=st.sampled_from(FILES), kind=st.sampled_from(["truncate", "flip", "cut"]), pos=st.floats(0, 1), byte=st.integers(0, 255))
def test_damage_gives_data_error(fname, kind, pos, byte):
    with tempfile.TemporaryDirectory() as d:
        write_official(tiny_benchmark(), d)
        p = Path(d)/fname; raw = bytearray(p.read_bytes()); i = int(pos*(len(raw) - 1))
        if kind == "truncate": raw = raw[:i]
        elif kind == "flip": raw[i] = byte
        else: raw = raw[:i] + raw[i + 1 + byte % 40:]
        p.write_bytes(bytes(raw))
        try: load_official(d)
        except DataError as e: assert fname in str(e) or "not in catalog" in str(e) or "unknown user" in str(e) or "no profile" in str(e), str(e)

def test_missing_each_file():
    for f in FILES:
        with tempfile.TemporaryDirectory() as d:
            write_official(tiny_benchmark(), d); (Path(d)/f).unlink()
            with pytest.raises(DataError, match=f.replace(".", r"\.")): load_official(d)
