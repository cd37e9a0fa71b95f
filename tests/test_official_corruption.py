"""Property tests for the official-format loader (personalwab.data.official), beyond the notebook's cases.

- round trip: any benchmark derived from `tiny_benchmark()` (extra users, unicode text, odd prices,
  any number of parts) loads back equal after `write_official`;
- robustness: random damage to any file (truncation, a flipped byte, a deleted span) makes
  `load_official` raise `DataError` naming that file, or load a valid benchmark, never another exception;
- a value `json` cannot read (an integer of > 4,300 digits, nesting deeper than the recursion limit, a lone
  surrogate) is named at the record and field that hold it, whatever readable look-alike comes before it.
"""
import json, tempfile
from pathlib import Path
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st
from personalwab.data.schema import MAX_TIMESTAMP, Behaviour, DataError, Review, User, tiny_benchmark
from personalwab.data.official import load_official, write_official

SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
text = st.text(st.characters(blacklist_categories=["Cs"]), max_size=30)

@st.composite
def benchmarks(draw):
    b = tiny_benchmark()
    for i in range(draw(st.integers(0, 3))):
        uid = f"U{i+2}{draw(st.text('abcXYZ', max_size=5))}"
        ts = sorted(draw(st.lists(st.integers(0, MAX_TIMESTAMP), max_size=4)))
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

# ---- class 3: nothing clearly wrong passes silently ------------------------------------------------
from personalwab.data.official import HISTORY, INSTRUCTIONS, PRODUCTS, PROFILES
from personalwab.data.schema import Profile, data_warnings

# (file, path to a numeric value inside the raw JSON, the field the DataError must name)
NUMERIC = [(HISTORY, ["U1", 0, "review", "rating"], "review.rating"),
           (HISTORY, ["U1", 2, "review", "timestamp"], "review.timestamp"),
           (HISTORY, ["U1", 1, "product_info", "rating_number"], "product_info.rating_number"),
           (PRODUCTS, ["B000000002", "average_rating"], "average_rating"),
           (PRODUCTS, ["B000000003", "rating_number"], "rating_number"),
           (PRODUCTS, ["B000000001", "price"], "price"),
           (INSTRUCTIONS, ["test", 0, "timestamp"], "timestamp"),
           (INSTRUCTIONS, ["train", 0, "target", "review", "rating"], "target.review.rating"),
           (INSTRUCTIONS, ["test", 0, "target", "review", "timestamp"], "target.review.timestamp")]
BAD_NUMBERS = st.one_of(st.booleans(), st.sampled_from([float("nan"), float("inf"), float("-inf")]),
                        st.integers(max_value=-1), st.integers(min_value=MAX_TIMESTAMP + 1),
                        st.integers(19, 6000).map(lambda k: ("digits", k)), st.floats(max_value=-1e-9, allow_nan=False))

def _set(obj, path, value):
    for k in path[:-1]: obj = obj[k]
    obj[path[-1]] = value

def _write_corrupt(d, fname, path, value, parts=1):
    write_official(tiny_benchmark(), d, parts=parts)
    p = Path(d)/fname; obj = json.loads(p.read_text())
    if isinstance(value, tuple):             # ("digits", k): the integer 10**k, written as digits (Python refuses to print > 4300)
        _set(obj, path, "@@"); p.write_text(json.dumps(obj).replace('"@@"', "1" + "0" * value[1]))
    else: _set(obj, path, value); p.write_text(json.dumps(obj))   # NaN/Infinity as Python's json writes them

@SETTINGS
@given(where=st.sampled_from(NUMERIC), value=BAD_NUMBERS)
def test_bad_numbers_are_data_errors(where, value):
    "Booleans, NaN, infinities, negatives, huge numbers: a DataError naming file and field (a NaN or huge price is allowed)."
    fname, path, field = where
    may_pass = (field == "price" and not isinstance(value, bool) and (isinstance(value, tuple) or value != value or 0 <= value < float("inf"))
                or field.endswith("rating_number") and type(value) is int and 0 <= value < 2**63)   # a large but valid count
    with tempfile.TemporaryDirectory() as d:
        _write_corrupt(d, fname, path, value)
        if may_pass:
            try: load_official(d); return
            except DataError: pass
        with pytest.raises(DataError) as e: load_official(d)
    assert Path(e.value.file).name == fname, str(e.value)
    assert e.value.field == field, str(e.value)                   # an integer of > 4300 digits too: named where it is
    assert "\n" not in str(e.value)

def _nested_release(d, fname: str, path: list, depth: int) -> None:
    "The tiny benchmark's release in `d`, with the value at `path` of `fname` replaced by `depth` nested lists."
    write_official(tiny_benchmark(), d)
    p = Path(d)/fname; obj = json.loads(p.read_text()); _set(obj, path, "@@")
    p.write_text(json.dumps(obj).replace('"@@"', "[" * depth + "]" * depth))

@SETTINGS
@given(where=st.sampled_from(NUMERIC), depth=st.one_of(st.integers(1, 60), st.integers(1000, 200_000)))
def test_deep_nesting(where, depth):
    "Deep nesting anywhere: a DataError naming the file, never a RecursionError or a traceback."
    fname, path, field = where
    with tempfile.TemporaryDirectory() as d:
        _nested_release(d, fname, path, depth)
        with pytest.raises(DataError) as e: load_official(d)
    assert Path(e.value.file).name == fname, str(e.value)

@settings(max_examples=25, deadline=None)
@given(parts=st.integers(3, 6), data=st.data())
def test_missing_middle_part(parts, data):
    "A deleted part file other than the last is named; the rest of the release is not loaded without it."
    b = tiny_benchmark()
    for i in range(parts * 2): b.users[f"U{i+2}"] = User(user_id=f"U{i+2}", profile=b.users["U1"].profile, behaviours=[])
    kind = data.draw(st.sampled_from(["user_history", "all_products"]))
    gap = data.draw(st.integers(1, parts - 1))
    with tempfile.TemporaryDirectory() as d:
        write_official(b, d, parts=parts)
        (Path(d)/f"{kind}_part_{gap}.json").unlink()
        with pytest.raises(DataError, match=rf"{kind}_part_{gap}\.json: record -: missing part {gap} of {parts}"): load_official(d)

WHITESPACE = st.text(" \t\n\r\u00a0\u2003", min_size=0, max_size=6)

@SETTINGS
@given(ws=WHITESPACE, where=st.sampled_from([(INSTRUCTIONS, ["test", 0, "task"], "task"), (INSTRUCTIONS, ["train", 0, "user_id"], "user_id"),
                                              (HISTORY, ["U1", 0, "review", "parent_asin"], "review.parent_asin")]))
def test_blank_texts(ws, where):
    fname, path, field = where
    with tempfile.TemporaryDirectory() as d:
        _write_corrupt(d, fname, path, ws)
        with pytest.raises(DataError) as e: load_official(d)
    assert (Path(e.value.file).name, e.value.field) == (fname, field), str(e.value)

def test_contradictions():
    "A review of another product, a title contradicting the catalog, a release without test tasks."
    cases = [(HISTORY, ["U1", 0, "review", "parent_asin"], "B000000002", "U1[0]", "review.parent_asin"),
             (INSTRUCTIONS, ["test", 0, "target", "review", "parent_asin"], "B000000001", "test[0]", "target.review.parent_asin"),
             (HISTORY, ["U1", 2, "product_info", "title"], "Something Else", "U1[2]", "product_info.title"),
             (INSTRUCTIONS, ["train", 0, "target", "product_info", "title"], "Other", "train[0]", "target.product_info.title"),
             (INSTRUCTIONS, ["test"], [], "test", "(split)")]
    for fname, path, value, rec, field in cases:
        with tempfile.TemporaryDirectory() as d:
            _write_corrupt(d, fname, path, value)
            with pytest.raises(DataError) as e: load_official(d)
            assert (Path(e.value.file).name, e.value.record, e.value.field) == (fname, rec, field), str(e.value)
    with tempfile.TemporaryDirectory() as d:
        write_official(tiny_benchmark(), d)
        (Path(d)/INSTRUCTIONS).write_text(json.dumps({"train": json.loads((Path(d)/INSTRUCTIONS).read_text())["train"]}))
        with pytest.raises(DataError, match="no test split"): load_official(d)

def test_warnings_after_loading():
    """What the release may contain loads, and `data_warnings` counts it: NaN price, a product copy unlike the catalog; a task dated
    before its target review is an audit error (A103) for `load_official`, still counted by `data_warnings` without the audit."""
    b = tiny_benchmark()
    with tempfile.TemporaryDirectory() as d:
        write_official(b, d)
        raw = json.loads((Path(d)/INSTRUCTIONS).read_text())
        raw["test"][0]["timestamp"] = 2_500          # the user never had the target by then, the review is later
        raw["train"][0]["target"] = raw["test"][0]["target"] | {}
        (Path(d)/INSTRUCTIONS).write_text(json.dumps(raw))
        prods = json.loads((Path(d)/PRODUCTS).read_text()); prods["B000000001"]["price"] = float("nan")
        (Path(d)/PRODUCTS).write_text(json.dumps(prods))
        with pytest.raises(DataError, match=r"record train\[0\]: field timestamp: \[A103\] task timestamp 2000 is 1,000 ms before .* \(and 1 more: A103 x1\)"): load_official(d)
        got = load_official(d, audit=False)
    kinds = [w.kind for w in data_warnings(got)]
    assert kinds.count("timestamp differs from target") == 2 and "NaN price" in kinds, kinds
    assert kinds.count("product differs from catalog") == 1, kinds      # the history copy of B000000001 still has its price

@SETTINGS
@given(depth=st.integers(1, 2000), where=st.sampled_from([(PRODUCTS, ["B000000001", "details", "x"], "details"),
                                                         (PRODUCTS, ["B000000002", "categories"], "categories"),
                                                         (HISTORY, ["U1", 0, "product_info", "extra"], "product_info"),
                                                         (INSTRUCTIONS, ["test", 0, "note"], "")]))
def test_deep_free_form_values(depth, where):
    "Free-form values (details, categories, extra fields) load up to 32 levels of nesting; deeper is a DataError, never a crash later."
    fname, path, field = where
    with tempfile.TemporaryDirectory() as d:
        _nested_release(d, fname, path, depth)
        if depth + (field == "details") <= 32:
            b = load_official(d); json.dumps([p.to_official() for p in b.products.values()]); return
        with pytest.raises(DataError) as e: load_official(d)
    assert Path(e.value.file).name == fname and (e.value.field.startswith(field) or e.value.field == "(syntax)"), str(e.value)


# ---- unreadable values: named where they are -----------------------------------------------------------
def _two_users():
    "The tiny benchmark, a second user U2 (a copy of U1) and a second test task (U2's): history in parts 1 (U1) and 2 (U2)."
    b = tiny_benchmark(); b.users["U2"] = b.users["U1"].model_copy(update={"user_id": "U2"})
    b.tasks["test"].append(b.tasks["test"][0].model_copy(update={"user_id": "U2", "id": "test-00001"}))
    return b

# a value json cannot read, and a readable one like it (json reads a float of any length, a 50-deep list, a surrogate pair)
UNREADABLE = {"long integer": ("9" * 5000, "4." + "0" * 5000, "Exceeds the limit (4300 digits)"),
              "long integer after an exponent": ("-" + "9" * 5000, "4e" + "0" * 5000, "Exceeds the limit (4300 digits)"),
              "long integer after a long float": ("9" * 5000, "9" * 5000 + ".5", "Exceeds the limit (4300 digits)"),
              "deep nesting": ("[" * 100_000 + "]" * 100_000, "[" * 50 + "]" * 50, "nested too deeply to read"),
              "lone surrogate": ('"a \\ud800"', '"\\ud83d\\ude00"', "lone surrogate")}
# (file, where the readable look-alike sits, where the unreadable value sits, the record and field the error must name)
PLACES = [(INSTRUCTIONS, ["test", 0, "target", "review", "rating"], ["test", 1, "timestamp"], "test[1]", "timestamp"),   # the case
          (INSTRUCTIONS, ["train", 0, "timestamp"], ["test", 0, "target", "review", "timestamp"], "test[0]", "target.review.timestamp"),
          (INSTRUCTIONS, ["test", 1, "timestamp"], ["test", 1, "target", "product_info", "rating_number"], "test[1]", "target.product_info.rating_number"),
          ("user_history_part_1.json", ["U1", 0, "review", "rating"], ["U1", 2, "review", "timestamp"], "U1[2]", "review.timestamp"),
          ("user_history_part_2.json", ["U2", 0, "review", "rating"], ["U2", 1, "product_info", "details", "x"], "U2[1]", "product_info.details.x"),
          ("all_products_part_1.json", ["B000000001", "average_rating"], ["B000000002", "rating_number"], "B000000002", "rating_number"),
          ("all_products_part_2.json", ["B000000003", "price"], ["B000000003", "categories", 0], "B000000003", "categories"),
          (PROFILES, ["U1", "user_profile", "Age"], ["U2", "user_profile", "Age"], "U2", "user_profile.Age")]

@pytest.mark.parametrize("kind", list(UNREADABLE))
@pytest.mark.parametrize("place", PLACES, ids=[f"{p[0]}:{p[3]}:{p[4]}" for p in PLACES])
def test_unreadable_value_named_where_it_is(tmp_path, kind, place):
    fname, decoy_at, bad_at, rec, field = place
    bad, decoy, text = UNREADABLE[kind]
    write_official(_two_users(), tmp_path, parts=2)
    p = tmp_path/fname; obj = json.loads(p.read_text())
    if bad_at[-1] == 0: _set(obj, bad_at[:-1], ["@@"])
    else: _set(obj, bad_at, "@@")
    _set(obj, decoy_at, "@0")
    p.write_text(json.dumps(obj).replace('"@0"', decoy).replace('"@@"', bad))
    with pytest.raises(DataError) as e: load_official(tmp_path)
    assert (Path(e.value.file).name, e.value.record, e.value.field) == (fname, rec, field), str(e.value)
    assert text in str(e.value) and "\n" not in str(e.value)
