"""The environment agents act in: products as text, BM25 search, SASRec, the five functions, metrics, the tracks,
the user simulator and the resources they share. May import: core, llm, data."""
