"""What a compiled function keeps between calls: the workspace of graph/passes/scratch.py (the buffers
of its big temporaries), which tracemalloc's peak over one call does not see, because an earlier
call made it. The benchmarks that report memory add it to the peak."""

from __future__ import annotations


def kept_bytes(compiled) -> int:
    """Bytes of the workspaces pooled by every compiled entry of `compiled` (a `jit` function, or a
    `grad`/`value_and_grad` function, whose entries are those of the function it compiles)."""
    jitted = getattr(compiled, "_jit", compiled)
    buffers = {}
    for entries in jitted.entries.table.values():
        for entry in entries:
            for workspace in getattr(entry.run, "__globals__", {}).get("_ws") or []:
                for view in workspace:
                    base = view if view.base is None else view.base
                    buffers[id(base)] = base.nbytes
    return sum(buffers.values())
