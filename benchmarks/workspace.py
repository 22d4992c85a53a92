"""What a compiled function keeps between calls: the workspace of graph/passes/scratch.py (the buffers
of its big temporaries), which tracemalloc's peak over one call does not see, because an earlier
call made it. The benchmarks that report memory add it to the peak."""

from __future__ import annotations


def kept_bytes(compiled) -> int:
    """Bytes of the workspaces pooled by every compiled entry of `compiled` (a `jit` function, or a
    `grad`/`value_and_grad` function)."""
    return compiled.cache_info()["workspace_bytes"]
