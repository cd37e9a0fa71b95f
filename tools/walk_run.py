"""The walk of one RunConfig through run(): the personalwab modules whose functions run() calls directly, in order
(consecutive calls into the same module counted once), and how often each module is entered.

    PYTHONPATH=$PWD .venv/bin/python tools/walk_run.py     # the oracle on 3 test tasks, bm25s, in a temporary folder

Measured for issue #26 (one owner for the run directory):
  before (7947f77): runner -> runconfig -> runner -> protocol -> runconfig -> records -> runner -> records -> provenance
                    -> records -> runner -> resources -> runconfig -> runner -> records -> runner -> records -> runner
                    -> records -> runner; records.py entered 6 times, runner.py returned to 7 times
  after:            runner -> runconfig -> resources -> protocol -> rundir -> runner -> runconfig -> runner -> rundir
                    -> runner; the records layer (rundir.py) entered by one `with RunDir(...)`: its enter and its
                    exit; records.py and provenance.py only through it; runner.py returned to 3 times
"""
import sys, tempfile, collections
from personalwab.run.config import RunConfig
import personalwab.run.runner as R

def walk(cfg, out):
    seq = []
    def prof(frame, event, arg):
        if event == "call" and frame.f_back is not None and frame.f_back.f_code is R.run.__code__:
            mod = frame.f_globals.get("__name__", "?")
            if mod.startswith("personalwab") and frame.f_code.co_name not in ("<genexpr>", "<lambda>", "<listcomp>"):
                seq.append((mod.split(".")[-1], frame.f_code.co_name))
    sys.setprofile(prof)
    try: R.run(cfg, out_dir=out, progress=False)
    finally: sys.setprofile(None)
    mods = [m for i, (m, _) in enumerate(seq) if i == 0 or seq[i-1][0] != m]
    return seq, mods

cfg = RunConfig(method="oracle", track="single", limit=3, data="default", env_params={"engine": "bm25s"})
with tempfile.TemporaryDirectory() as d:
    seq, mods = walk(cfg, d)
print("calls:", " ".join(f"{m}.{f}" for m, f in seq))
print("walk:", " -> ".join(mods))
print("entries:", dict(collections.Counter(mods)))
