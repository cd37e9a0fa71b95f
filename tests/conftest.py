"""Shared test set-up: offline switches before anything imports transformers, and run folders in a temporary
directory (never `runs/` in the checkout): `PERSONALWAB_RUNS` is set here, in the controller, so pytest-xdist
workers, notebooks and every subprocess they start inherit it."""
import atexit, os, shutil, tempfile
for k, v in {"HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1",
             "TOKENIZERS_PARALLELISM": "false", "PYTHONHASHSEED": "0", "OMP_WAIT_POLICY": "PASSIVE"}.items():
    os.environ.setdefault(k, v)
if "PERSONALWAB_RUNS" not in os.environ:
    os.environ["PERSONALWAB_RUNS"] = _runs = tempfile.mkdtemp(prefix="pwab-test-runs-")
    _owner = os.getpid()
    atexit.register(lambda: os.getpid() == _owner and shutil.rmtree(_runs, ignore_errors=True))
