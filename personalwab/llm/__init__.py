"""Language models behind one interface: completions, the answer cache, tool calls, and the local, OpenAI-compatible
and scripted backends. May import: core."""
