"""Which writes into arrays an ONNX file can hold: `a[i] = v` and `a op= b` become new values (ScatterND),
which later reads read, only when no other name of the array can see the old buffer.

ONNX values are never written after they are made, so backends/emit_onnx.py writes `a[index] = v` as a
new value of `a` and rebinds `a` (and the `a op= b` results that are the same array) to it. That is
NumPy's meaning only when the graph made the array itself (a fresh buffer: not an argument, a weight or
a view; in a branch or loop body, an array of the enclosing graph the region writes, which the If or
Loop then carries out as a value) and no view of the old buffer is read after the write. `check_rebindable`
decides, from the graph alone; anything it cannot prove is an `OnnxRefusal`.
"""

from __future__ import annotations

from ..graph.alias import arg_mapping
from ..graph.ir import Node
from ..graph.onnx_ops import OnnxRefusal
from ..graph.types import ScalarType


def check_rebindable(target: Node, write: Node, carried: set) -> None:
    """May a write into `target` become a new value that later reads read? Only when the graph made
    the array itself (a fresh buffer, not an argument or a weight; in a branch or loop, an array of the
    enclosing graph it writes, carried as a value of the If or Loop) and nothing read after the write
    can see the old buffer: every view of it, and every branch or loop reading it, comes after the last
    write. `a += b` results are the same array (`alias_group`)."""
    graph = write.graph
    group = alias_group(target)
    root = group[0]
    made_here = root.op not in ("arg", "param") and root.opdef.result == "fresh"
    if root.graph is not graph or not (made_here or root.id in carried):
        raise OnnxRefusal("writes an array in place that the graph did not make here (an argument, a weight, "
                          "or a view); ONNX values are never written after they are made")
    order = graph.positions()
    users = [(u, m) for m in group for u in graph.users(m)]
    writers = {u.id for u, m in users if writes_to(u, m)}
    for u, m in users:
        if u.id in writers or (u.opdef.result == "fresh" and not u.regions and m not in u.writes):
            continue
        later = sorted(order[w] for w in writers if order[w] > order[u.id])
        if not later:
            continue                       # made after the last write: it sees the final value
        # a view made before a write is harmless when all its reads are copies made before that write
        reads = graph.users(u)
        if u.regions or graph.is_output(u) or any(
                r.regions or r.opdef.result != "fresh" or order[r.id] > later[0] for r in reads):
            raise OnnxRefusal(f"writes an array that `{u.op}` (a view, or a region that reads it) sees "
                              "before the write and reads after it; ONNX values are never written after "
                              "they are made")
    if root.id in carried:
        # the next iteration writes it again: no view of it may outlive this one (yielded, or kept by a
        # branch or loop inside)
        for u, m in users:
            if u.id in writers or (u.opdef.result == "fresh" and not u.regions):
                continue
            escapes = graph.is_output(u) or any(
                r.regions or r.opdef.result != "fresh" for r in graph.users(u)) \
                if not u.regions else any(
                    not (o.opdef.result == "fresh" or isinstance(o.type, ScalarType) or o.op == "arg")
                    for region in u.regions for o in region.outputs)
            if escapes:
                raise OnnxRefusal(f"writes, in a branch or loop, an array a view of which (`{u.op}`) may "
                                  "outlive the write; ONNX values are never written after they are made")


def alias_group(node: Node) -> list:
    """The nodes that are one array: its root and the `a op= b` results chained from it (root first)."""
    root = node
    while root.op == "inplace" and not isinstance(root.operands[0].type, ScalarType):
        root = root.operands[0]
    group, frontier = [root], [root]
    while frontier:
        current = frontier.pop()
        for user in current.graph.users(current):
            if user.op == "inplace" and user.operands[0] is current:
                group.append(user)
                frontier.append(user)
    return group


def writes_to(node: Node, target: Node) -> bool:
    """`node` is `target[...] = v`, or a branch or loop writing `target` inside."""
    if node.op == "setitem" or node.op == "inplace" and not isinstance(node.operands[0].type, ScalarType):
        return node.operands[0] is target    # (`k += 1` on a Python number rebinds `k`: no write)
    return any(target is operand for operand in region_writes(node))


def region_writes(node: Node) -> list:
    """The operands of region node `node` whose arrays its regions write (`out[i] = v` in a loop body),
    in operand order."""
    if not node.regions:
        return []
    written = []
    for region in node.regions:
        for arg, operand in zip(region.args, arg_mapping(node, region)):
            if operand is not None and operand not in written and \
                    any(writes_to(user, arg) for user in region.users(arg)):
                written.append(operand)
    return sorted(written, key=lambda o: next(k for k, x in enumerate(node.operands) if x is o))
