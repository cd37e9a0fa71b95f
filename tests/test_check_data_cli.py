"""`personalwab check-data` over a corpus of corrupted release folders, through the real console script.

Each case writes a small benchmark in the release's layout (history and products in 3 parts, as the
authors ship them), breaks it one way, runs the CLI in a subprocess and checks: the exit status (1 bad
data, 2 bad argument, 0 fine), exactly one line on stderr naming the file (and field where there is
one), and no traceback.
"""
import json, os, subprocess, sys, tempfile
from pathlib import Path
import pytest
from personalwab.data.official import write_official
from personalwab.data.schema import PROFILE_FIELDS, User, tiny_benchmark

EXE = Path(sys.executable).parent/"personalwab"

def bench():
    b = tiny_benchmark()
    for i in range(5): b.users[f"U{i+2}"] = User(user_id=f"U{i+2}", profile=b.users["U1"].profile, behaviours=[])
    return b

def edit(name, fn):
    "Load `name` as JSON, let `fn` change it, write it back."
    def f(d):
        p = d/name; obj = json.loads(p.read_text()); fn(obj); p.write_text(json.dumps(obj))
    return f

def raw(name, text):
    def f(d): (d/name).write_bytes(text if isinstance(text, bytes) else text.encode())
    return f

def replace_with_dir(name):
    def f(d): (d/name).unlink(); (d/name).mkdir()
    return f

def symlink_loop(name):
    def f(d): (d/name).unlink(); (d/name).symlink_to(name)
    return f

def broken_link(name):
    def f(d): (d/name).unlink(); (d/name).symlink_to("nowhere.json")
    return f

def setp(path, value):
    def f(o):
        for k in path[:-1]: o = o[k]
        o[path[-1]] = value
    return f

H1, P2, I, PR = "user_history_part_1.json", "all_products_part_2.json", "user_instructions.json", "user_profiles.json"
CASES = {   # name: (damage, exit status, file named, text the line must contain)
    "missing middle history part": (lambda d: (d/"user_history_part_2.json").unlink(), 1, "user_history_part_2.json", "missing part 2 of 3"),
    "missing first product part":  (lambda d: (d/"all_products_part_1.json").unlink(), 1, "all_products_part_1.json", "missing part 1 of 3"),
    "instructions is a directory": (replace_with_dir(I), 1, I, "is a directory"),
    "profiles symlink loop":       (symlink_loop(PR), 1, PR, "symlink loop"),
    "products broken symlink":     (broken_link(P2), 1, P2, "broken symlink"),
    "empty benchmark {}":          (raw(I, "{}"), 1, I, "no test split"),
    "empty test split":            (edit(I, setp(["test"], [])), 1, I, "test split is empty"),
    "empty file":                  (raw(PR, ""), 1, PR, "malformed JSON"),
    "over-long integer":           (raw(I, '{"test": [' + "7" * 5000 + "]}"), 1, I, "4300 digits"),
    "too-deep JSON":               (raw(H1, "[" * 200_000 + "]" * 200_000), 1, H1, "nested too deeply"),
    "deep JSON in a record":       (raw(PR, '{"U1": ' + "[" * 50 + "]" * 50 + "}"), 1, PR, "expected an object, got list"),
    "deep JSON in details":        (lambda d: (d/P2).write_text((d/P2).read_text().replace('"details": {}', '"details": {"x": ' + "[" * 900 + "]" * 900 + "}", 1)), 1, P2, "field details"),
    "deep JSON in an extra field": (lambda d: (d/H1).write_text((d/H1).read_text().replace('"split":', '"junk": ' + "{\"a\": " * 600 + "1" + "}" * 600 + ', "split":', 1)), 1, H1, "nested more than 32"),
    "not UTF-8":                   (raw(I, b'{"test": ["\xff\xfe"]}'), 1, I, "not UTF-8"),
    "top level is a list":         (raw(PR, "[]"), 1, PR, "expected an object"),
    "boolean timestamp":           (edit(I, setp(["test", 0, "timestamp"], True)), 1, I, "field timestamp"),
    "boolean rating":              (edit(H1, setp(["U1", 0, "review", "rating"], False)), 1, H1, "field review.rating"),
    "NaN rating":                  (edit(H1, setp(["U1", 1, "review", "rating"], float("nan"))), 1, H1, "finite"),
    "Infinity average rating":     (edit("all_products_part_1.json", setp(["B000000001", "average_rating"], float("inf"))), 1, "all_products_part_1.json", "field average_rating"),
    "negative count":              (edit(P2, setp(["B000000002", "rating_number"], -1)), 1, P2, "field rating_number"),
    "timestamp in microseconds":   (edit(H1, setp(["U1", 2, "review", "timestamp"], 3_000 * 10**12)), 1, H1, "field review.timestamp"),
    "negative timestamp":          (edit(I, setp(["train", 0, "timestamp"], -5)), 1, I, "field timestamp"),
    "whitespace instruction":      (edit(I, setp(["test", 0, "task"], "   ")), 1, I, "field task"),
    "review of another product":   (edit(H1, setp(["U1", 0, "review", "parent_asin"], "B000000003")), 1, H1, "field review.parent_asin"),
    "title contradicts catalog":   (edit(I, setp(["test", 0, "target", "product_info", "title"], "Kayak")), 1, I, "field target.product_info.title"),
    "newline in a record key":     (edit(H1, lambda o: o.update({"U\n9": []})), 1, H1, "field user_id"),
    "profiles of other users":     (raw(PR, json.dumps({f"V{i}": {"user_profile": {k: "x" for k in PROFILE_FIELDS}} for i in range(1000)})), 1, PR,
                                    "record (top level): field user_id: [A204] none of the 1,000 profiles is of a user in user_history.json: its 6 users"),
    "a user's profile missing":    (edit(PR, lambda o: o.pop("U3")), 1, "user_history_part_2.json", "record U3: field user_id: [A203] user has a history but no profile"),
    "long integer after a float":  (lambda d: (d/I).write_text((d/I).read_text().replace('"timestamp": 2000', '"timestamp": 2.' + "0" * 5000, 1)
                                                                       .replace('"timestamp": 3000', '"timestamp": ' + "3" * 5000, 1)),
                                    1, I, "record test[0]: field timestamp: unreadable JSON value"),
}

def check(args, env=None):
    r = subprocess.run([str(EXE), "check-data", *args], capture_output=True, text=True, timeout=300,
                       env={**os.environ, "OMP_NUM_THREADS": "1", **(env or {})})
    assert "Traceback" not in r.stderr + r.stdout, r.stderr
    return r

@pytest.fixture(scope="module")
def corpus():
    with tempfile.TemporaryDirectory() as t:
        for name, (damage, *_) in CASES.items():
            d = Path(t)/name.replace(" ", "_").replace("{}", "braces"); write_official(bench(), d, parts=3); damage(d)
        yield Path(t)

@pytest.mark.parametrize("name", list(CASES))
def test_corrupted_release(corpus, name):
    _, status, fname, text = CASES[name]
    r = check([str(corpus/name.replace(" ", "_").replace("{}", "braces"))])
    lines = r.stderr.splitlines()
    assert r.returncode == status, (r.returncode, r.stderr)
    assert len(lines) == 1 and lines[0].startswith("error: "), r.stderr
    assert fname in lines[0] and text in lines[0], lines[0]
    assert r.stdout == ""

def test_usage_errors(tmp_path):
    (tmp_path/"file.json").write_text("{}")
    for arg in [str(tmp_path/"missing"), str(tmp_path/"file.json")]:
        r = check([arg])
        assert r.returncode == 2 and len(r.stderr.splitlines()) == 1 and arg in r.stderr, r.stderr

def test_keywords_and_warnings(tmp_path):
    "`tiny` works; `default` reads `$PERSONALWAB_DATA`; warnings are counted (exit 0, 1 with --strict); audit errors print the report and exit 1."
    r = check(["tiny"])
    assert r.returncode == 0 and "audit: 0 errors, 0 warnings" in r.stdout and "valid: 1 users" in r.stdout, r.stdout + r.stderr
    write_official(bench(), tmp_path/"users", parts=3)                 # 5 profiles without behaviours: warnings
    r = check(["default"], env={"PERSONALWAB_DATA": str(tmp_path/"users")})
    assert r.returncode == 0 and r.stderr == "", r.stderr
    assert f"benchmark folder: {tmp_path/'users'}" in r.stdout and "audit: 0 errors, 5 warnings" in r.stdout, r.stdout
    r = check([str(tmp_path/"users"), "--strict"])
    assert r.returncode == 1 and "audit: 0 errors, 5 warnings (--strict: warnings count as errors)" in r.stdout, r.stdout
    assert r.stderr.count("\n") == 1 and "the audit found 5 problems (A202 x5)" in r.stderr, r.stderr
    b = bench(); b.tasks["test"][0].timestamp = 500              # dated before its target review (and before the user had anything)
    write_official(b, tmp_path/"odd", parts=3)
    r = check([str(tmp_path/"odd")])
    assert r.returncode == 1, r.stderr
    assert "read: 6 users" in r.stdout and "audit: 2 errors, 5 warnings" in r.stdout, r.stdout
    assert "A103 error: " in r.stdout and "A104 error: " in r.stdout
    assert r.stderr.count("\n") == 1 and "the audit found 2 errors (A103 x1, A104 x1)" in r.stderr, r.stderr
