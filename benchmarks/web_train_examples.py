"""How many SFT examples the specialised web agent's training has, and how long they are (issue 29 item 2).

    .venv/bin/python benchmarks/web_train_examples.py [--config configs/web/scribe.yaml] [--limit N] [--out DIR]

Runs only the `prepare` stage of `personalwab.web.train` (no training) in a temporary work folder (or `--out`),
on the configuration's training tasks (`--limit`: a seeded random subset, to estimate on a busy machine), and
prints the counts: tasks, gold page steps, examples, steps dropped because the budget cut the target element,
steps whose page was cut, examples per type, and the prompt/completion token lengths (SmolLM2's chat template)
as n / mean / median / p95 / max, and the tokens of one epoch. Nothing is asserted.
"""
import argparse, json, tempfile, time

def main(argv=None):
    from personalwab.web.train import load_web_config, run_prepare
    ap = argparse.ArgumentParser()
    ap.add_argument("--config", default="configs/web/scribe.yaml"); ap.add_argument("--limit", type=int); ap.add_argument("--out")
    a = ap.parse_args(argv)
    out = a.out or tempfile.mkdtemp(prefix="web-train-examples-")
    cfg = load_web_config(a.config, {"work_dir": out} | ({"prepare.limit": a.limit} if a.limit else {}))
    t0 = time.time(); counts = run_prepare(cfg)
    print(json.dumps(counts | {"seconds": round(time.time() - t0, 1), "work_dir": out}, indent=1))

if __name__ == "__main__": main()
