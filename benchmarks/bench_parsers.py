"""Benchmark: the parsers of model output on adversarial shapes (issue 46, item 5), old path against new.

For each parser and shape (tests/parser_work.py's SHAPES) at sizes up to the parser's read limit (tests/
test_parsers_linear.py's PARSERS), the median seconds of the old path (tests/parsers_reference.py: the page-action,
tool-call and profile-update parsers as they were) and of the new one, and old/new. A parser that did not change has
one path: its column `old` is empty. A path whose run took longer than --cap seconds is not run at the larger sizes
(`-`); a quadratic one takes about 4x longer each time the size doubles. The op counts the tests bound are printed
beside (the new path's lines + regex characters per character of input).

Usage:
    .venv/bin/python benchmarks/bench_parsers.py [--repeat 3] [--cap 20] [--parsers 'parse_action|parse_tool_call']
                                                 [--shapes 'click(|mixed']
"""
from __future__ import annotations
import argparse, statistics, sys, time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
import parsers_reference as old                     # noqa: E402  (the old parsers, kept with the tests)
from parser_work import SHAPES, count_work           # noqa: E402
from test_parsers_linear import PARSERS              # noqa: E402
from personalwab.env.functions import TOOL_SCHEMAS       # noqa: E402

OLD = {"parse_action": old.parse_action, "parse_tool_call": lambda t: old.parse_tool_call(t, TOOL_SCHEMAS),
       "parse_profile_update": old.parse_profile_update}
SIZES = (16, 8, 4, 2, 1)   # the read limit divided by these


def median_s(fn, text: str, repeat: int) -> float:
    ts = []
    for _ in range(repeat):
        t = time.perf_counter(); fn(text); ts.append(time.perf_counter() - t)
    return statistics.median(ts)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--cap", type=float, default=20.0, help="seconds: a path slower than this is not run at larger sizes")
    ap.add_argument("--parsers", default="|".join(PARSERS), help="names separated by |")
    ap.add_argument("--shapes", default="|".join(SHAPES), help="names separated by | (some hold commas)")
    a = ap.parse_args(argv)
    print(f"{'parser':20s} {'shape':22s} {'chars':>7s} {'old s':>9s} {'new s':>9s} {'old/new':>8s} {'ops/char':>8s}")
    for name in a.parsers.split("|"):
        new, L, _ = PARSERS[name]
        for shape in a.shapes.split("|"):
            make, slow = SHAPES[shape], {"old": False, "new": False}
            for k in SIZES:
                n = L // k; text = make(n)
                t_old = None if name not in OLD or slow["old"] else median_s(OLD[name], text, 1 if n > L // 4 else a.repeat)
                t_new = None if slow["new"] else median_s(new, text, a.repeat)
                slow["old"] |= t_old is not None and t_old > a.cap
                slow["new"] |= t_new is not None and t_new > a.cap
                ops = count_work(new, text)[1].ops / n if t_new is not None and t_new < 2 else float("nan")
                fmt = lambda t: f"{t:9.4f}" if t is not None else f"{'' if name not in OLD else '-':>9s}"
                ratio = f"{t_old / t_new:8.1f}" if t_old is not None and t_new else f"{'':>8s}"
                print(f"{name:20s} {shape:22s} {n:7d} {fmt(t_old)} {fmt(t_new)} {ratio} {ops:8.2f}", flush=True)


if __name__ == "__main__":
    main()
