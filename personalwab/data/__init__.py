"""The benchmark's data: typed records, the official release's files, the embedded generator, the paper's construction
pipeline, statistics and the audit. May import: core, llm."""
