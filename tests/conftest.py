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


import contextlib as _contextlib, time as _time

@_contextlib.contextmanager
def nothing_left_running(stop):
    """Around a module's browser work: on exit call `stop()` and assert that no child process and no listening port of
    this process remains beyond those before (processes exit as their browsers close: waited for, not timed)."""
    import psutil
    me = psutil.Process()
    def alive(): return {p.pid for p in me.children(recursive=True) if p.is_running() and p.status() != psutil.STATUS_ZOMBIE}
    def listening(): return {c.laddr.port for c in me.net_connections("tcp") if c.status == psutil.CONN_LISTEN}
    procs, ports = alive(), listening()
    yield
    stop()
    for _ in range(50):
        if alive() <= procs: break
        _time.sleep(0.1)
    assert alive() <= procs and listening() <= ports
