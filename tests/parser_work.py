"""Counting the work a parser of model output does, in operations rather than seconds (issue 46, item 5), and the
adversarial shapes it is measured on. Used by tests/test_parsers_linear.py and benchmarks/bench_parsers.py.

The work of a call is the Python lines it runs in the library (`personalwab/`) and in the reference copy of the old
parsers (tests/parsers_reference.py), counted with `sys.settrace`, plus the characters each regex call made from there
is handed: from where it starts to the end of its match, or to the end of the text when it finds nothing (a whole
`finditer`/`findall`/`sub`/`split` counts the whole text). Backtracking inside one regex is not seen, so every regex
a parser runs must be one of `AUDITED`, each linear for the reason given; the regexes the old parsers were quadratic
with are not among them. C code the parsers call once per parse (`json.loads`, `ast.parse`, `str.find`, `splitlines`)
is linear and not counted; json_repair (third-party, pure Python) is not counted either: see bench_parsers.py."""
from __future__ import annotations
import random, re, sys
from pathlib import Path
import personalwab

PKG = str(Path(personalwab.__file__).resolve().parent) + "/"
REF = str(Path(__file__).resolve().parent / "parsers_reference.py")


class OverBudget(BaseException):
    "Raised once a call has done more work than allowed: a BaseException, as the parsers catch every Exception."


class Work:
    "The lines and regex characters of one call (`ops` = both); `limit`: raise `OverBudget` past that many ops."
    def __init__(self, limit: int | None = None):
        self.lines = self.chars = 0
        self.limit, self.patterns = limit, set()

    @property
    def ops(self) -> int: return self.lines + self.chars

    def _check(self):
        if self.limit is not None and self.lines + self.chars > self.limit: raise OverBudget(f"more than {self.limit:,} operations")

    def _local(self, frame, event, arg):
        if event == "line": self.lines += 1; self._check()
        return self._local

    def _global(self, frame, event, arg):
        f = frame.f_code.co_filename
        return self._local if f.startswith(PKG) or f == REF else None

    def scanned(self, pattern: str, k: int):
        self.chars += max(k, 1); self.patterns.add(pattern); self._check()


class CountingPattern:
    "A compiled regex that adds what each call is handed to a `Work`."
    def __init__(self, p: re.Pattern, work: Work): self.p, self.work = p, work
    def __getattr__(self, k): return getattr(self.p, k)
    def _one(self, f, s, pos=0, endpos=sys.maxsize):
        m = f(s, pos, endpos)
        self.work.scanned(self.p.pattern, (m.end() if m else min(len(s), endpos)) - pos + 1)
        return m
    def search(self, s, pos=0, endpos=sys.maxsize): return self._one(self.p.search, s, pos, endpos)
    def match(self, s, pos=0, endpos=sys.maxsize): return self._one(self.p.match, s, pos, endpos)
    def fullmatch(self, s, pos=0, endpos=sys.maxsize): return self._one(self.p.fullmatch, s, pos, endpos)
    def _all(self, s, pos=0): self.work.scanned(self.p.pattern, len(s) - pos + 1)
    def finditer(self, s, pos=0, endpos=sys.maxsize): self._all(s, pos); return self.p.finditer(s, pos, endpos)
    def findall(self, s, pos=0, endpos=sys.maxsize): self._all(s, pos); return self.p.findall(s, pos, endpos)
    def sub(self, repl, s, count=0): self._all(s); return self.p.sub(repl, s, count)
    def subn(self, repl, s, count=0): self._all(s); return self.p.subn(repl, s, count)
    def split(self, s, maxsplit=0): self._all(s); return self.p.split(s, maxsplit)


class CountingRe:
    "The `re` module as a library module sees it while counting: its functions go through `CountingPattern`."
    def __init__(self, work: Work): self.work = work
    def __getattr__(self, k): return getattr(re, k)
    def compile(self, pattern, flags=0): return CountingPattern(re.compile(pattern, flags), self.work)
    def search(self, pattern, string, flags=0): return self.compile(pattern, flags).search(string)
    def match(self, pattern, string, flags=0): return self.compile(pattern, flags).match(string)
    def fullmatch(self, pattern, string, flags=0): return self.compile(pattern, flags).fullmatch(string)
    def finditer(self, pattern, string, flags=0): return self.compile(pattern, flags).finditer(string)
    def findall(self, pattern, string, flags=0): return self.compile(pattern, flags).findall(string)
    def sub(self, pattern, repl, string, count=0, flags=0): return self.compile(pattern, flags).sub(repl, string, count)
    def subn(self, pattern, repl, string, count=0, flags=0): return self.compile(pattern, flags).subn(repl, string, count)
    def split(self, pattern, string, maxsplit=0, flags=0): return self.compile(pattern, flags).split(string, maxsplit)


def _counted(v, work):
    if v is re: return CountingRe(work)
    if isinstance(v, re.Pattern): return CountingPattern(v, work)
    if isinstance(v, tuple) and v and all(isinstance(x, re.Pattern) for x in v): return tuple(CountingPattern(x, work) for x in v)
    return None


def count_work(fn, *args, limit: int | None = None, **kw) -> tuple[object, Work]:
    "`fn(*args, **kw)` and its `Work`: every library module's `re` and compiled regexes count while it runs."
    work, saved = Work(limit), []
    mods = [m for n, m in list(sys.modules.items()) if m is not None and (n.startswith("personalwab") or n == "parsers_reference")]
    for m in mods:
        for k, v in list(vars(m).items()):
            if (c := _counted(v, work)) is not None: saved.append((m, k, v)); setattr(m, k, c)
    old = sys.gettrace()
    sys.settrace(work._global)
    try: out = fn(*args, **kw)
    finally:
        sys.settrace(old)
        for m, k, v in saved: setattr(m, k, v)
    return out, work


# Every regex the parsers may run, and why one call of it is linear in what it is handed.
AUDITED = {
    r"\b(click|type|select|go_back|message)\s*\(": "a word, then spaces and `(`: only the spaces after a word are re-read",
    r"[()\"']": "one character of a class", r'["\\]': "one character of a class", r"['\\]": "one character of a class",
    r"^[ \t]*Action:[ \t]*": "anchored at line starts: the blanks of each line once",
    r"^[ \t]*Node:[ \t]*(\d{1,9})\b": "anchored at line starts: the blanks of each line once",
    r"^[ \t]*(Node|Description):": "anchored at line starts: the blanks of each line once",
    r"([A-Za-z_]+)\s*[:(]?\s*(.*?)\)?$": "anchored, one line: the lazy tail reaches the line's end on the first try",
    r"(\d{1,9})\s*(?:,\s*(.*))?$": "anchored: at most 9 digits, each tail tried once",
    "```": "a literal", r"```(?:json|JSON|tool_call|python)?\s*": "anchored: a tag, then blanks",
    r"""["']?(name|function|arguments)["']?\s*:""": "a word, then blanks and `:`: only the blanks after a word are re-read",
    r"^[A-Z0-9]{10}$": "anchored, at most 11 characters",
    r"^\s*(search_product_by_query|query|search query|search)\s*[:=(]\s*": "anchored at the start of one line",
    r"\b(?=[A-Z0-9]*\d)(?=[A-Z0-9]*[A-Z])[A-Z0-9]{10}\b|\b\d{9}[\dX]\b":
        "tried at word boundaries: each word's run read a bounded number of times",
}
# `\bNAME\s*\(` for a tool name (parse_tool_call's test of a reply that looks like a call): a word, then blanks and `(`
TOOL_NAME_CALL = re.compile(r"\\b[A-Za-z_]+\\s\*\\\(")


def audited(pattern: str) -> bool: return pattern in AUDITED or bool(TOOL_NAME_CALL.fullmatch(pattern))


# Adversarial shapes: each `SHAPES[k](n)` is n characters long.
def _rep(unit: str): return lambda n: (unit * (n // len(unit) + 1))[:n]

def _mixed(n: int, seed: int = 0) -> str:
    r, toks, out, k = random.Random(seed), MIXED, [], 0
    while k < n: t = r.choice(toks); out.append(t); k += len(t)
    return "".join(out)[:n]

MIXED = ["click(", "type(1, ", "(", ")", '"', "'", "\\", "{", "}", "[", "]", ":", ",", " ", "\n", "a", "1", "```", "```json",
         '{"name":', '"arguments":', "Action:", "Arguments:", "Node:", "Description:", "<tool_call>", "B0ABCDE123", "query: "]

SHAPES = {
    "click(": _rep("click("), "click(3) then click(": lambda n: "click(3)" + _rep(" click(")(n - 8), 'type(1, "': _rep('type(1, "'),
    "message('": _rep("message('"), 'click("': _rep('click("'), "click( + spaces": lambda n: "click(" + " " * (n - 6),
    '{"name":': _rep('{"name":'), "<tool_call>": _rep("<tool_call>"), "Action:": _rep("Action:"),
    "Arguments: {": _rep("Action: x\nArguments: {"),
    "step form": _rep("Description: x\nAction: click("), "```": _rep("```"), "``` + spaces": lambda n: "```" + " " * (n - 3),
    '"': _rep('"'), "'": _rep("'"), "\\": _rep("\\"), "(": _rep("("), ")": _rep(")"), "{": _rep("{"), "}{": _rep("}{"),
    "[": _rep("["),
    "a": _rep("a"), "space": _rep(" "), "newline": _rep("\n"), "A1 run": _rep("A1"),
    "((…))": lambda n: "(" * (n // 2) + ")" * (n - n // 2), "{{…}}": lambda n: "{" * (n // 2) + "}" * (n - n // 2),
    "mixed": _mixed,
    "click(1,1,…)": lambda n: "click(" + _rep("1,")(n - 7) + ")", 'type(1, "a" "a" …)': lambda n: "type(1, " + _rep('"a" ')(n - 9) + ")",
}
