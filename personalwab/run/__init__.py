"""Running agents over tasks: run configurations, crash-safe records, run folders, the runner, the scoring protocol,
re-scoring, trials, estimates and result tables. May import: core, llm, data, env, agents."""
