"""The middle of the pipeline: the SSA graph, its op table, text form, verifier and passes.

Nothing here imports from `transpiler/` or `backends/`. Names are loaded lazily so that
`import graphjit` does not pay for networkx until something is compiled.
"""

_EXPORTS = {
    "Graph": ".ir", "Node": ".ir", "parse": ".parser", "print_graph": ".printer", "verify": ".verifier",
    "SourceSpan": ".spans", "GraphjitError": ".diagnostics",
}


def __getattr__(name):
    if name in _EXPORTS:
        import importlib
        return getattr(importlib.import_module(_EXPORTS[name], __name__), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = sorted(_EXPORTS)
