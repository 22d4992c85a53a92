"""Reverse-mode automatic differentiation of graphs (a graph → graph transform).

`differentiate(graph, wrt, output)` appends the backward pass of `output` to `graph` and returns
the gradient of each node of `wrt`: transform.py walks straight-line code with each op's VJP rule
(graph/derivatives.py), regions.py differentiates run-time `if`, `for` and `while`, and
inplace.py makes in-place writes (`a[i] = v`, `a += b`) safe to differentiate.
"""

from .transform import NotDifferentiableError, differentiate, sum_to

__all__ = ["NotDifferentiableError", "differentiate", "sum_to"]
