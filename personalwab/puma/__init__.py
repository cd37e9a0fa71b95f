"""PUMA's training: pseudo-labelled examples, LoRA SFT and DPO, the resumable pipeline and its published copy.
May import: core, llm, data, env, agents, run."""
