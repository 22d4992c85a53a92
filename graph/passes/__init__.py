"""Optimization passes, one per module, and the pipeline each `jit_level` runs."""
