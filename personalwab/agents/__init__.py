"""The agents: memories of the user, the paper's baselines, the rules, PUMA at inference and the registry of methods.
May import: core, llm, data, env."""
