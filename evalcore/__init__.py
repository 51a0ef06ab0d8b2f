"""evalcore: score LLM query expansions against a golden set, gate CI, record sign-off."""

__version__ = "0.1.0"
