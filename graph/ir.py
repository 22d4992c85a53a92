"""The SSA graph: nodes in program order, def-use edges held in networkx.

A `Graph` is a function body (or a region of an `if`/`for_range`/`while` node): its arguments,
its parameters (arrays read through an access path at each call), its nodes in program order and
its outputs. Operand order is exact (a tuple on each node); networkx holds the def-use edges so
passes can ask `users`, reachability and order questions. Passes use the methods here, never
networkx directly.
"""

from __future__ import annotations

import itertools
from typing import Any, Iterable, Iterator, Optional, Sequence

import networkx as nx

from . import ops as _ops
from .literals import is_literal
from .raising import may_raise
from .spans import SourceSpan
from .types import OBJECT, Type, type_of_value

_ids = itertools.count()


class Node:
    """One SSA value: `op(operands) {attrs} : type`, with the span it came from."""

    __slots__ = ("id", "op", "operands", "attrs", "type", "span", "name", "regions", "graph")

    def __init__(self, op: str, operands: Sequence["Node"] = (), attrs: Optional[dict] = None,
                 type: Type = OBJECT, span: Optional[SourceSpan] = None, name: str = "",
                 regions: Sequence["Graph"] = ()):
        self.id = next(_ids)
        self.op = op
        self.operands = tuple(operands)
        self.attrs = dict(attrs or {})
        self.type = type
        self.span = span
        self.name = name          # the user's variable name, a hint for printing and emitting
        self.regions = list(regions)
        self.graph: Optional[Graph] = None

    @property
    def opdef(self) -> _ops.OpDef:
        return _ops.OPS[self.op]

    @property
    def is_pure(self) -> bool:
        """No effects: the node may be removed, merged or moved.

        A node that writes an operand's buffer (the op table's `writes`: `setitem`, `{out=k}` set by
        memory planning, the user's `np.exp(x, out=y)` or `np.exp(x, y)`) is an effect even when its
        op is pure.
        """
        return self.opdef.pure and not self.written_positions and not self.regions

    @property
    def written_positions(self) -> tuple:
        """Positions of the operands this node writes in place (the op table's `writes` rule)."""
        return self.opdef.writes(self.operands, self.attrs)

    @property
    def writes(self) -> tuple["Node", ...]:
        """The operands this node writes in place."""
        return tuple(self.operands[k] for k in self.written_positions)

    @property
    def may_raise(self) -> bool:
        """Running it may raise (an index, a division, a conversion): unused, it still runs."""
        return may_raise(self)

    @property
    def removable(self) -> bool:
        """Pure and unable to raise: a node nothing uses may be dropped."""
        return self.is_pure and not self.may_raise

    @property
    def out_operand(self) -> Optional["Node"]:
        """The operand whose buffer receives the result: `{out=k}`, a user's `out=` keyword or a ufunc's
        positional output."""
        k = self.opdef.writes.out_position(len(self.operands), self.attrs)
        return None if k is None else self.operands[k]

    @property
    def is_const(self) -> bool:
        return self.op == "const"

    @property
    def value(self) -> Any:
        """The value of a `const` node."""
        return self.attrs["value"]

    def __repr__(self) -> str:
        return f"<Node {self.op}#{self.id} {self.name or ''}: {self.type}>"


class Graph:
    """A function body or a region: arguments, parameters, nodes in program order, outputs."""

    def __init__(self, name: str, parent: Optional[Node] = None, label: str = ""):
        self.name = name
        self.label = label                  # a region's role: then, else, body, cond
        self.args: list[Node] = []
        self.params: list[Node] = []
        self.nodes: list[Node] = []          # program order, excluding args and params
        self.outputs: tuple[Node, ...] = ()
        self.parent = parent                 # the region node that owns this graph
        self.span: Optional[SourceSpan] = None
        self._edges = nx.DiGraph()

    # --- building ------------------------------------------------------------------------
    def _own(self, node: Node) -> Node:
        node.graph = self
        self._edges.add_node(node)
        for operand in node.operands:
            self._edges.add_edge(operand, node)
        for region in node.regions:
            region.parent = node
        return node

    def add_arg(self, name: str, type: Type, span: Optional[SourceSpan] = None) -> Node:
        node = Node("arg", (), {"index": len(self.args)}, type, span, name)
        self.args.append(self._own(node))
        return node

    def add_param(self, path: str, type: Type, name: str = "") -> Node:
        node = Node("param", (), {"path": path}, type, None, name)
        self.params.append(self._own(node))
        return node

    def add(self, op: str, operands: Sequence[Node] = (), attrs: Optional[dict] = None,
            type: Optional[Type] = None, span: Optional[SourceSpan] = None, name: str = "",
            regions: Sequence["Graph"] = (), before: Optional[Node] = None) -> Node:
        """Append (or insert before `before`) a node; its type is inferred when not given."""
        attrs = dict(attrs or {})
        if type is None:
            type = _ops.infer_type(op, operands, attrs)
        node = self._own(Node(op, operands, attrs, type, span, name, regions))
        if before is None:
            self.nodes.append(node)
        else:
            self.nodes.insert(self.nodes.index(before), node)
        return node

    def const(self, value: Any, span: Optional[SourceSpan] = None) -> Node:
        return self.add("const", (), {"value": value}, type_of_value(value), span)

    def add_node(self, node: Node, before: Optional[Node] = None) -> Node:
        """Insert an already built node (one made by `Node(...)`, or moved from another graph)."""
        self._own(node)
        if before is None:
            self.nodes.append(node)
        else:
            self.nodes.insert(self.nodes.index(before), node)
        return node

    def remove_arg(self, arg: Node) -> None:
        """Drop an unused argument of a region (the caller fixes the region node's operands)."""
        if self.users(arg) or self.is_output(arg):
            raise ValueError(f"cannot remove {arg!r}: it still has users")
        self.args.remove(arg)
        self._edges.remove_node(arg)
        for k, a in enumerate(self.args):
            a.attrs["index"] = k

    def remove_param(self, param: Node) -> None:
        if self.users(param) or self.is_output(param):
            raise ValueError(f"cannot remove {param!r}: it still has users")
        self.params.remove(param)
        self._edges.remove_node(param)

    def set_outputs(self, outputs: Iterable[Node]) -> None:
        self.outputs = tuple(outputs)
        for out in self.outputs:
            self._edges.add_node(out)

    # --- queries -------------------------------------------------------------------------
    def users(self, node: Node) -> list[Node]:
        """Nodes of this graph that take `node` as an operand (regions capture explicitly)."""
        if node not in self._edges:
            return []
        return list(self._edges.successors(node))

    def is_output(self, node: Node) -> bool:
        return any(out is node for out in self.outputs)

    def topological(self) -> list[Node]:
        """Nodes in program order, which is a topological order of the def-use edges."""
        return list(self.nodes)

    def reverse_topological(self) -> list[Node]:
        return list(reversed(self.nodes))

    def all_nodes(self) -> Iterator[Node]:
        """Every node of this graph and of its regions, depth first in program order."""
        for node in itertools.chain(self.args, self.params, self.nodes):
            yield node
            for region in node.regions:
                yield from region.all_nodes()

    def positions(self) -> dict[int, int]:
        """Node id -> index in program order (args and params are -1)."""
        out = {n.id: -1 for n in itertools.chain(self.args, self.params)}
        out.update((n.id, k) for k, n in enumerate(self.nodes))
        return out

    def is_dag(self) -> bool:
        return nx.is_directed_acyclic_graph(self._edges)

    # --- rewriting -----------------------------------------------------------------------
    def set_operands(self, node: Node, operands: Sequence[Node]) -> None:
        for old in set(node.operands):
            if self._edges.has_edge(old, node):
                self._edges.remove_edge(old, node)
        node.operands = tuple(operands)
        for operand in node.operands:
            self._edges.add_edge(operand, node)

    def replace_all_uses(self, old: Node, new: Node) -> None:
        for user in self.users(old):
            self.set_operands(user, [new if o is old else o for o in user.operands])
        if self.is_output(old):
            self.set_outputs(new if o is old else o for o in self.outputs)

    def erase(self, node: Node) -> None:
        if self.users(node) or self.is_output(node):
            raise ValueError(f"cannot erase {node!r}: it still has users")
        self.nodes.remove(node)
        self._edges.remove_node(node)

    def __str__(self) -> str:
        from .printer import print_graph
        return print_graph(self)


def clone_region(region: Graph) -> Graph:
    """A deep copy of `region`: new nodes, new nested regions (regions capture what they use, so
    nothing outside the copy is referenced)."""
    new = Graph(region.name, label=region.label)
    new.span = region.span
    mapping: dict[int, Node] = {}
    for a in region.args:
        mapping[a.id] = new.add_arg(a.name, a.type, a.span)
    for node in region.nodes:
        mapping[node.id] = new.add(node.op, [mapping[o.id] for o in node.operands], dict(node.attrs), node.type,
                                   node.span, node.name, regions=[clone_region(r) for r in node.regions])
    new.set_outputs(mapping[o.id] for o in region.outputs)
    return new


def literal_const(node: Node) -> bool:
    """A const whose value prints inline in graph text (and so survives a round trip)."""
    return node.op == "const" and is_literal(node.value)
