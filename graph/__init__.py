"""The middle of the pipeline: the SSA graph, its op table, text form, verifier and passes.

Nothing here imports from `transpiler/` or `backends/`.
"""

from .diagnostics import GraphjitError
from .ir import Graph, Node
from .parser import parse
from .printer import print_graph
from .spans import SourceSpan
from .verify import verify

__all__ = ["Graph", "Node", "parse", "print_graph", "verify", "SourceSpan", "GraphjitError"]
