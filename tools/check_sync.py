"""Fail (exit 1) if `nbdev_export` or `nbdev_clean` would change a file: the library must be exported from the
notebooks and the notebooks must be clean. Works on a scratch copy, so the checkout is never touched.

Usage: python tools/check_sync.py
"""
from __future__ import annotations
import shutil, subprocess, sys, tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent
SKIP = shutil.ignore_patterns("__pycache__", ".ipynb_checkpoints")

def files(d: Path, pattern: str) -> dict[Path, bytes]:
    return {p.relative_to(d): p.read_bytes() for p in d.rglob(pattern) if "__pycache__" not in p.parts and ".ipynb_checkpoints" not in p.parts}

def differences(a: Path, b: Path, pattern: str) -> list[str]:
    fa, fb = files(a, pattern), files(b, pattern)
    return sorted(str(p) for p in fa.keys() ^ fb.keys()) + sorted(str(p) for p in fa.keys() & fb.keys() if fa[p] != fb[p])

def main() -> int:
    with tempfile.TemporaryDirectory(prefix="pwab-sync-") as tmp:
        d = Path(tmp)
        for p in ["nbs", "personalwab"]: shutil.copytree(ROOT/p, d/p, ignore=SKIP)
        for p in ["settings.ini", "setup.py"]: shutil.copy(ROOT/p, d/p)
        for cmd in ["nbdev_export", "nbdev_clean"]:
            r = subprocess.run([str(BIN/cmd)], cwd=d, capture_output=True, text=True)
            if r.returncode: print(f"check-sync: {cmd} failed:\n{r.stdout}{r.stderr}", file=sys.stderr); return 1
        lib, nbs = differences(ROOT/"personalwab", d/"personalwab", "*.py"), differences(ROOT/"nbs", d/"nbs", "*.ipynb")
    for what, diff, fix in [("personalwab/", lib, "nbdev_export"), ("nbs/", nbs, "nbdev_clean")]:
        if diff: print(f"check-sync: {fix} would change {what}: {', '.join(diff)} (run `make export clean-nbs`)", file=sys.stderr)
    if lib or nbs: return 1
    print("check-sync: the library is exported from the notebooks and the notebooks are clean")
    return 0

if __name__ == "__main__": sys.exit(main())
