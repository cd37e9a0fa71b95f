"""Shared test set-up: offline switches before anything imports transformers."""
import os
for k, v in {"HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1",
             "TOKENIZERS_PARALLELISM": "false", "PYTHONHASHSEED": "0", "OMP_WAIT_POLICY": "PASSIVE"}.items():
    os.environ.setdefault(k, v)
