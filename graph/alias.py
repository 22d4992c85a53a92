"""Which buffers a value may share memory with, and which buffers a node may write: the one alias
analysis, used by every pass and the vectorizer. What each op's result may share is the op table's
`result` fact (graph/ops.py): `fresh`, a `view` of operand 0, `views_any` (a view of any operand,
`np.einsum("ii->i", a)`), or unknown.

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
always allocates (`result` fresh) is its own root. A view or an op that might return (part of) its
operand inherits the operand's roots; an op we know nothing about, every operand's roots plus its
own. Python scalars (`int`, `float`, `bool`) are immutable and have no roots.

In a region, argument k is `("arg", k)` together with `EXTERNAL`: it aliases whatever the region
node passed in, which `region_writes` maps back to the region node's operands.

Two ways to ask, over the same facts and the same map from region arguments to operands:

- `Aliases(graph)`: the roots of every value of one graph, the writes of every node, what escapes
  (the O1 passes: dead code, CSE, LICM, folding, memory planning).
- `may_alias(a, b)` and `value_roots(node)`: two values anywhere in the nest of regions, traced
  through region arguments to the values outside (the vectorizer's alias guards, scalarize). Here
  an external root is `(EXTERNAL, node)`, and any two external roots may be the same memory; an op
  of unknown result is external.
"""

from __future__ import annotations

from typing import Iterable, Optional

from .ir import Graph, Node, literal_const
from .ops import OPS, REGION_OPS
from .types import ScalarType, TupleType, Type

EXTERNAL = "external"
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


def carried_init(node: Node, k: int) -> Optional[Node]:
    """The initial value of carried value k of loop `node` (None: `node` carries no value k)."""
    if k >= carried_count(node):
        return None
    return node.operands[3 + k] if node.op == "for_range" else node.operands[k]


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
        if node.opdef.result == "fresh":
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
            elif node.opdef.result == "fresh" and holds_memory(node.type) and not node.regions:
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



# --- two values anywhere in a nest of regions ----------------------------------------------------
def value_roots(node: Node, _seen: Optional[set] = None) -> frozenset:
    """The fresh nodes `node` may be (a view of), and `(EXTERNAL, n)` for memory from outside."""
    seen = _seen if _seen is not None else set()
    if node.id in seen:
        return frozenset()
    seen.add(node.id)
    op = node.op
    if op in ("arg", "param"):
        parent = node.graph.parent if node.graph is not None else None
        if op == "arg" and parent is not None:
            return _region_arg_roots(node, parent, seen)
        return frozenset({(EXTERNAL, node)})
    out = node.out_operand
    if out is not None:  # `np.multiply(z, z, z)`, `np.sum(a, out=b)`: the result is the `out` array
        return value_roots(out, seen)
    result = OPS[op].result
    if result == "fresh":
        return frozenset({node})
    if result == "view":
        return value_roots(node.operands[0], seen)
    if result == "views_any":  # a view of any operand, or a new array
        found = frozenset({node})
        for operand in node.operands:
            found |= value_roots(operand, seen)
        return found
    if op == "tuple_get" and node.operands[0].op in REGION_OPS:
        region_node = node.operands[0]
        k = node.attrs["index"]
        found = frozenset()
        for region in region_node.regions:
            if region.label != "cond" and k < len(region.outputs):
                found |= value_roots(region.outputs[k], seen)
        init = carried_init(region_node, k)
        return found | value_roots(init, seen) if init is not None else found
    return frozenset({(EXTERNAL, node)})


def _region_arg_roots(arg: Node, parent: Node, seen: set) -> frozenset:
    """Argument k of a region: the operand the region node passes in, and for a carried value also
    what the body yields for the next iteration."""
    region: Graph = arg.graph
    k = region.args.index(arg)
    if parent.op not in REGION_OPS or parent.op == "for_range" and k == 0:
        return frozenset({(EXTERNAL, arg)})     # the loop index: not an array
    found = value_roots(arg_mapping(parent, region)[k], seen)
    carried = k - 1 if parent.op == "for_range" else k
    if parent.op != "if" and carried < carried_count(parent):
        found |= value_roots(parent.regions[-1].outputs[carried], seen)
    return found


def may_alias(a: Node, b: Node) -> bool:
    """May `a` and `b` (distinct values) share memory?"""
    ra, rb = value_roots(a), value_roots(b)
    if ra & rb:
        return True
    external_a = any(isinstance(r, tuple) for r in ra)
    external_b = any(isinstance(r, tuple) for r in rb)
    return external_a and external_b
