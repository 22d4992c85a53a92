"""Reverse-mode automatic differentiation of graphs (a graph → graph transform).

`differentiate(graph, wrt, output)` appends the backward pass of `output` to `graph` and returns
the gradient of each node of `wrt`: transform.py walks straight-line code with each op's VJP rule
(graph/derivatives.py), regions.py differentiates run-time `if`, `for` and `while`, and
inplace.py makes in-place writes (`a[i] = v`, `a += b`) safe to differentiate.
"""

_EXPORTS = {"NotDifferentiableError": ".transform", "differentiate": ".transform", "sum_to": ".transform",
            "gradient_of": ".function", "GradRequest": ".request"}


def __getattr__(name):
    """Loaded on first use, so `import graphjit` does not pay for networkx."""
    if name in _EXPORTS:
        import importlib
        return getattr(importlib.import_module(_EXPORTS[name], __name__), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = sorted(_EXPORTS)
