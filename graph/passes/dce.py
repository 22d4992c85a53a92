"""Remove pure nodes whose results are never used."""

from __future__ import annotations

from ..ir import Graph


def run(graph: Graph) -> bool:
    """Erase pure nodes with no users (in every region); return True if anything changed.

    Before:                                   After:
      %0 = add(%x, %y) : f64[?]                 %1 = mul(%x, 2.0) : f64[?]
      %1 = mul(%x, 2.0) : f64[?]                return %1
      return %1
    """
    changed = False
    for node in graph.reverse_topological():
        for region in node.regions:
            changed |= run(region)
        if node.is_pure and not graph.users(node) and not graph.is_output(node):
            graph.erase(node)
            changed = True
    for param in list(graph.params):
        if not graph.users(param) and not graph.is_output(param):
            graph.params.remove(param)
            graph._edges.remove_node(param)
            changed = True
    return changed
