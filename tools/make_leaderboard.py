"""Regenerate the generated files of leaderboard/, and (with --oracle) the verified oracle submission.

  python tools/make_leaderboard.py            # submission.schema.json, paper-single.json, paper-multi.json
  python tools/make_leaderboard.py --oracle   # + leaderboard/submissions/oracle-default-single/ from a real
                                              #   oracle run over the full test split of the default benchmark
"""
from __future__ import annotations
import argparse, shutil, sys, tempfile
from pathlib import Path

def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--oracle", action="store_true", help="also run the oracle on every test task and prepare its submission")
    args = ap.parse_args(argv)
    from personalwab.core.config import offline
    offline()
    from personalwab.evidence.leaderboard import leaderboard_dir, prepare, validate, write_leaderboard_files
    for p in write_leaderboard_files(): print(f"wrote {p.relative_to(leaderboard_dir().parent)}")
    if not args.oracle: return
    from personalwab.run.runner import RunConfig, run
    with tempfile.TemporaryDirectory() as tmp:
        res = run(RunConfig(method="oracle", workers=2), out_dir=tmp, progress=False)
        out = leaderboard_dir()/"submissions"/"oracle-default-single"
        if out.exists(): shutil.rmtree(out)
        prepare([res.dir], out, contact="https://github.com/personalwab/personalwab/issues", method="Oracle (ceiling: the ideal call for every task)",
                links=["https://github.com/personalwab/personalwab"],
                notes=("Not an agent: the oracle calls the right function with the ideal argument (the target's title, the user's "
                       "recent history, the user's real review). It marks the ceiling the environment allows on the embedded "
                       "default benchmark; made with tools/make_leaderboard.py --oracle."))
    rep = validate(out)
    print(f"{out.relative_to(leaderboard_dir().parent)}: {rep.summary()}")
    if not rep.ok: sys.exit(1)

if __name__ == "__main__": main()
