"""Remove nodes whose results are never used, writes nobody can observe, and unused captures."""

from __future__ import annotations

from ..alias import Aliases, arg_mapping, carried_count
from ..ir import Graph, Node
from ..types import TupleType


def run(graph: Graph) -> bool:
    """Erase unused pure nodes, dead stores and unused region captures; True if anything changed.

    Before:
      graph f(%x: f64[3], %y: f64[3]) -> f64[3]
        %0 = add(%x, %y) : f64[3]
        %t = copy(%x) : f64[3]
        %1 = setitem(%t, 0.0) {index=[0]} : none
        %2 = mul(%x, 2.0) : f64[3]
        return %2
    After:
      graph f(%x: f64[3], %y: f64[3]) -> f64[3]
        %0 = mul(%x, 2.0) : f64[3]
        return %0

    Kept: every effect on memory the caller, a later node or a region can still see (writes to
    arguments, parameters, views of them, returned or later-read arrays), opaque calls, nodes
    that may raise (`Node.may_raise`: `x[i]` with a run-time or out-of-range index, `a // b` on
    Python ints, `int(x)`), and `while` loops (which might not terminate). An `if` or
    `for_range` whose regions hold only such removable nodes and whose results are unused is
    removed like a pure node.
    """
    changed = _dead_stores(graph)
    for node in graph.reverse_topological():
        for region in node.regions:
            changed |= run(region)
        if node.op == "for_range":
            changed |= _prune_carried(graph, node)
        if graph.users(node) or graph.is_output(node):
            continue
        if node.removable or _pure_region_node(node):
            graph.erase(node)
            changed = True
    for node in graph.nodes:
        if node.regions:
            changed |= _prune_captures(graph, node)
    for param in list(graph.params):
        if not graph.users(param) and not graph.is_output(param):
            graph.remove_param(param)
            changed = True
    return changed


def _prune_carried(graph: Graph, node: Node) -> bool:
    """Drop carried values of a `for_range` that nothing reads: not the body (except to pass the
    value on unchanged) and not the code after the loop. `for j in range(i): ...` followed by
    another `for j in ...` carries `j` from one loop to the next only in case the second is empty.
    """
    n = node.attrs.get("carried", 0)
    users = graph.users(node)
    if not n or graph.is_output(node) or any(u.op != "tuple_get" for u in users):
        return False
    body = node.regions[0]
    read_after = {u.attrs["index"] for u in users}
    dead = [k for k in range(n) if k not in read_after and not body.users(body.args[1 + k])
            and all(o is not body.args[1 + k] for j, o in enumerate(body.outputs) if j != k)]
    if not dead:
        return False
    keep = [k for k in range(n) if k not in dead]
    body.set_outputs([body.outputs[k] for k in keep])
    for k in reversed(dead):
        body.remove_arg(body.args[1 + k])
    inits = node.operands[3:3 + n]
    graph.set_operands(node, [*node.operands[:3], *(inits[k] for k in keep), *node.operands[3 + n:]])
    node.attrs["carried"] = len(keep)
    node.type = TupleType(tuple(node.type.items[k] for k in keep))
    for u in users:
        u.attrs["index"] = keep.index(u.attrs["index"])
    return True


def _pure_region_node(node: Node) -> bool:
    return node.op in ("if", "for_range") and all(_all_pure(r) for r in node.regions)


def _all_pure(graph: Graph) -> bool:
    return all(n.removable or _pure_region_node(n) for n in graph.nodes)


def _dead_stores(graph: Graph) -> bool:
    """Erase writes into a buffer made in this graph that nothing reads afterwards."""
    changed = False
    aliases = None
    for node in list(reversed(graph.nodes)):
        if not node.opdef.pure or not node.writes:
            continue  # not a write, or a write with other effects (an opaque call)
        if graph.users(node) or graph.is_output(node):
            continue
        aliases = aliases or Aliases(graph)
        written = aliases.writes(node)
        if len(written) != 1:
            continue
        (root,) = written
        if not isinstance(root, int) or aliases.buffer(_node_by_id(graph, root)) != root:
            continue
        if aliases.read_after(root, aliases.position[node.id], ignore=node):
            continue
        graph.erase(node)
        changed = True
        aliases = None  # positions moved
    return changed


def _node_by_id(graph: Graph, node_id: int) -> Node:
    return next(n for n in graph.nodes if n.id == node_id)


def _prune_captures(graph: Graph, node: Node) -> bool:
    """Drop region arguments no region of `node` uses, with the operand that fed them."""
    n = carried_count(node)
    first = {"if": 0, "for_range": 1 + n, "while": n}[node.op]
    mapping = arg_mapping(node, node.regions[0])
    unused = [k for k in range(first, len(node.regions[0].args))
              if all(not r.users(r.args[k]) and not r.is_output(r.args[k]) for r in node.regions)]
    if not unused:
        return False
    offset = len(node.operands) - len(mapping)  # operand j feeds region argument j - offset
    keep_operands = [o for j, o in enumerate(node.operands) if j - offset not in unused]
    for region in node.regions:
        for k in sorted(unused, reverse=True):
            region.remove_arg(region.args[k])
    graph.set_operands(node, keep_operands)
    return True
