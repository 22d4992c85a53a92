"""Where lowering adds nodes: the top graph or a region, and how regions capture outer values.

Regions take outer values explicitly: the first use of an outer value inside a region adds an
argument to every graph of the region node (then/else share one list, as do cond/body), and the
outer value becomes an operand of the region node. Nested regions capture through their parents.
"""

from __future__ import annotations

from typing import Optional

from ..graph.ir import Graph, Node


class RegionGroup:
    """The graphs of one region node, sharing one list of captured outer values."""

    def __init__(self, graphs: list[Graph], parent: "Scope"):
        self.graphs = graphs
        self.parent = parent
        self.outer: list[Node] = []              # operands of the region node, in order
        self.args: dict[int, list[Node]] = {}     # outer node id -> arg in each graph

    def capture(self, outer: Node, graph_index: int) -> Node:
        if outer.id not in self.args:
            self.outer.append(outer)
            self.args[outer.id] = [g.add_arg(outer.name, outer.type, outer.span) for g in self.graphs]
        return self.args[outer.id][graph_index]


class Scope:
    """The graph lowering adds nodes to now: the top graph, or graph `index` of a region group."""

    def __init__(self, graph: Graph, group: Optional[RegionGroup] = None, index: int = 0):
        self.graph = graph
        self.group = group
        self.index = index

    @property
    def parent(self) -> Optional["Scope"]:
        return self.group.parent if self.group else None

    def local(self, node: Node) -> Node:
        """`node` as a value of this scope's graph, capturing it if it lives outside."""
        if node.graph is self.graph:
            return node
        if self.group is None:
            raise AssertionError(f"{node!r} is not visible in graph {self.graph.name}")
        outer = self.parent.local(node)
        return self.group.capture(outer, self.index)
