"""The back end: graph → NumPy source → compiled, cached, run (or interpreted node by node)."""
