"""Which buffers a value may share memory with, and which buffers a node may write.

Array mutation in the graph is an ordered effect on shared memory: a node writes the operands the
op table's `writes` rule names (`setitem`, `inplace`, a `{out=k}` node, a ufunc's `out` given by
keyword or positionally, `.shape` assignment, an opaque `call` or `pycall`: any operand), and a
region writes what its nodes write. Every pass that removes, merges, moves or rewrites nodes asks
this module before it touches an array.

    graph f(%x: f64[3]) -> f64[3]              roots
      %y = mul(%x, 2.0) : f64[3]               {%y}          a fresh buffer
      %v = getitem(%y) {index=[0:2]} : f64[2]  {%y}          a view of it
      %0 = setitem(%v, 1.0) {index=[0]} : none   writes {%y}
      return %x                                {EXTERNAL}    the caller's memory

Memory is named by *roots*: `EXTERNAL` is everything the caller (or an enclosing graph) can see:
arguments, parameters and non-literal constants; all of it may alias all of it. A node whose op
always allocates (`OpDef.fresh`) is its own root. A view or an op that might return (part of) its
operand inherits the operand's roots; an op we know nothing about, every operand's roots plus its
own. Python scalars (`int`, `float`, `bool`) are immutable and have no roots.

In a region, argument k is `("arg", k)` together with `EXTERNAL`: it aliases whatever the region
node passed in, which `region_writes` maps back to the region node's operands.
"""

from __future__ import annotations

from typing import Iterable, Optional

from .ir import Graph, Node, literal_const
from .types import ScalarType, TupleType, Type

EXTERNAL = "external"
REGION_OPS = ("if", "for_range", "while")
Roots = frozenset


def holds_memory(t: Type) -> bool:
    """False for values that cannot be mutated in place (Python scalars, tuples of them)."""
    if isinstance(t, ScalarType):
        return False
    if isinstance(t, TupleType):
        return any(holds_memory(i) for i in t.items)
    return True


def arg_mapping(node: Node, region: Graph) -> list[Optional[Node]]:
    """For each argument of `region`, the operand of region node `node` it receives (None: the index)."""
    if node.op == "if":
        return list(node.operands[1:])
    if node.op == "for_range":
        return [None] + list(node.operands[3:])
    return list(node.operands)  # while: carried then captures, in cond and body alike


def carried_count(node: Node) -> int:
    return node.attrs.get("carried", 0) if node.op in ("for_range", "while") else 0


class Aliases:
    """Roots of every value of one graph (regions are summarized through their region node)."""

    def __init__(self, graph: Graph):
        self.graph = graph
        self.roots: dict[int, Roots] = {}
        self.position = graph.positions()
        self._writes: dict[int, Roots] = {}
        is_region = graph.parent is not None
        for k, a in enumerate(graph.args):
            self.roots[a.id] = Roots({EXTERNAL, ("arg", k)} if is_region else {EXTERNAL}) \
                if holds_memory(a.type) else Roots()
        for p in graph.params:
            self.roots[p.id] = Roots({EXTERNAL})
        for node in graph.nodes:
            self.roots[node.id] = self._roots_of(node)

    # --- roots -------------------------------------------------------------------------------
    def of(self, node: Node) -> Roots:
        if node.id not in self.roots:  # a constant made after the analysis, or an outer value
            return Roots() if literal_const(node) else Roots({EXTERNAL})
        return self.roots[node.id]

    def of_all(self, nodes: Iterable[Node]) -> Roots:
        out: set = set()
        for n in nodes:
            out |= self.of(n)
        return Roots(out)

    def _roots_of(self, node: Node) -> Roots:
        op = node.op
        if op == "const":
            return Roots() if literal_const(node) else Roots({EXTERNAL})
        if not holds_memory(node.type):
            return Roots()
        out = node.out_operand
        if out is not None:
            return self.of(out)
        if op == "inplace":
            target = node.operands[0]
            if holds_memory(target.type):
                return self.of(target)
            return Roots({node.id})  # `n += arr` on a scalar n: a new array
        if op in REGION_OPS:
            return self.of_all(node.operands) | {node.id}
        if op in ("tuple", "tuple_get", "getitem"):
            return self.of_all(node.operands[:1] if op == "getitem" else node.operands)
        if node.opdef.fresh and not node.opdef.views_any:
            return Roots({node.id})
        return self.of_all(node.operands) | {node.id}  # unknown, or `views_any`: may view any operand

    def buffer(self, node: Node) -> Optional[int]:
        """The id of the fresh node whose buffer `node` *is* (not a view of), or None.

        A fresh node is its own buffer; an in-place update or an `out=` node is the buffer it
        wrote into.
        """
        while True:
            if node.graph is not self.graph or node.op in ("arg", "param", "const"):
                return None
            out = node.out_operand
            if out is not None:
                node = out
            elif node.op == "inplace" and holds_memory(node.operands[0].type):
                node = node.operands[0]
            elif node.opdef.fresh and holds_memory(node.type) and not node.regions:
                return node.id if self.roots.get(node.id) == Roots({node.id}) else None
            else:
                return None

    # --- writes ------------------------------------------------------------------------------
    def writes(self, node: Node) -> Roots:
        """Roots of the memory `node` may write when it runs."""
        if node.id in self._writes:
            return self._writes[node.id]
        result: set = set(self.of_all(node.writes))  # the op table's `writes` (graph/ops.py)
        if node.op in REGION_OPS:
            result |= self.region_writes(node)
        self._writes[node.id] = Roots(result)
        return self._writes[node.id]

    def region_writes(self, node: Node) -> Roots:
        """What the regions of `node` may write, as roots of this graph."""
        result: set = set()
        n = carried_count(node)
        for region in node.regions:
            inner = Aliases(region)
            mapping = arg_mapping(node, region)
            for inner_node in region.nodes:
                for root in inner.writes(inner_node):
                    if isinstance(root, tuple) and root[0] == "arg":
                        k = root[1]
                        outer = mapping[k] if k < len(mapping) else None
                        carried = node.op in ("for_range", "while") and \
                            (1 <= k <= n if node.op == "for_range" else k < n)
                        if carried:
                            # a carried value may be, by the later iterations, anything the loop can reach
                            result |= self.of_all(node.operands)
                        elif outer is not None:
                            result |= self.of(outer)
                    elif root == EXTERNAL:
                        result.add(EXTERNAL)
                    # a buffer made inside the region is invisible here, unless it is yielded, and
                    # then the region node's result stands for it
        return Roots(result)

    def writes_between(self, start: int, end: int) -> Roots:
        """Union of writes of the nodes at positions start < p < end."""
        out: set = set()
        for node in self.graph.nodes[start + 1:end]:
            out |= self.writes(node)
        return Roots(out)

    def writes_after(self, start: int) -> Roots:
        return self.writes_between(start, len(self.graph.nodes))

    def all_writes(self) -> Roots:
        return self.writes_between(-1, len(self.graph.nodes))

    # --- escape and liveness -----------------------------------------------------------------
    def escaping(self) -> Roots:
        """Roots reachable from the graph's outputs (returned to the caller or yielded)."""
        return self.of_all(self.graph.outputs)

    def holders(self, root) -> list[Node]:
        """Every value of this graph that may share memory with `root`."""
        return [n for n in self.graph.args + self.graph.params + self.graph.nodes if root in self.roots.get(n.id, ())]

    def read_after(self, root, position: int, ignore: Optional[Node] = None) -> bool:
        """Is memory `root` read (used by a node) after `position`, or returned from the graph?"""
        g = self.graph
        for value in self.holders(root):
            if value is ignore:
                continue
            if g.is_output(value):
                return True
            for user in g.users(value):
                if user is ignore:
                    continue
                if self.position.get(user.id, -1) > position:
                    return True
        return False

