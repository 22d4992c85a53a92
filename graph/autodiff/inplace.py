"""In-place writes on the gradient's path: `a[i] = v` and `a op= b` on arrays.

An SSA graph names an array once, but an in-place write changes what later reads of it see. Two
things make the reverse walk right anyway:

- **Cotangents by time.** The walk runs in reverse program order, so when it reaches a write, the
  cotangent gathered for the array holds exactly what the reads *after* the write sent. At
  `a[i] = v` that cotangent's `[i]` part goes to `v` and is zeroed for the array before the
  write; at `a op= b` it goes through `op`'s rule to `b` and to the array before the write.
- **Values by time.** A backward rule that reads an array's value (`d(a * w)/dw = a`) runs after
  the whole forward pass, when later writes have changed the array. Such a read gets a copy taken
  in the forward pass right where it reads (`prepare` inserts it), so it sees the value it saw.

Writes through a view (`v = a[1:]; v[0] = 1`), into an argument or into a weight are refused
with an error naming the line; so is any other op that writes an operand (`out=`).
"""

from __future__ import annotations

from ..vjp_arrays import shift_refs
from ..ir import Graph, Node
from ..types import ArrayType

def is_write(node: Node) -> bool:
    """`a[i] = v`, or `a op= b` on an array that has memory (a number's `+=` is a plain op, and so
    is the `+=` of `a[i] += b`, which the write back `a[i] = ...` after it makes a write)."""
    return node.op in ("setitem", "add_at") or node.op == "inplace" and _has_buffer(node.operands[0]) \
        and not written_back(node)


def _as_plain_op(graph: Graph, node: Node) -> None:
    """`a[idx] += b` becomes `a[idx] = a[idx] + b`: the same values written, the sum a new array."""
    plain = graph.add(node.attrs["op"], list(node.operands), {}, node.type, node.span, node.name, before=node)
    graph.replace_all_uses(node, plain)
    graph.erase(node)


def written_back(node: Node) -> bool:
    """`a[idx] += b`: Python updates the view `a[idx]` in place, then assigns it to `a[idx]`; the
    gradient sees `a[idx] = a[idx] + b` (the view's old value is copied where it is read)."""
    view = node.operands[0]
    if view.op != "getitem" or node.graph is None:
        return False
    users = node.graph.users(node)
    return len(users) == 1 and users[0].op == "setitem" and users[0].operands[0] is view.operands[0] \
        and users[0].operands[1] is node and users[0].attrs.get("index") == view.attrs.get("index") \
        and list(users[0].operands[2:]) == list(view.operands[1:])


def _has_buffer(node: Node) -> bool:
    t = node.type
    return isinstance(t, ArrayType) and t.rank != 0


def prepare(graph: Graph, relevant: set, error, scratch: frozenset = frozenset()) -> dict:
    """Check the writes on the path, copy values that rules read before a later write; return the
    writes by node id, each with how its cotangent flows. `scratch`: arguments that stand in for
    arrays a replayed loop body writes (regions.py); their values are never read."""
    for node in list(graph.nodes):
        if node.op == "inplace" and node.id in relevant and written_back(node):
            _as_plain_op(graph, node)
    writes = {}
    for node in graph.nodes:
        if node.id not in relevant or not node.writes or (node.op == "inplace" and not _has_buffer(node.operands[0])):
            continue
        if not is_write(node):
            raise error(f"cannot differentiate through `{node.op}`: it writes an operand in place", node.span,
                        hint="write `y = f(x)` instead of `f(x, out=y)`")
        target, root = node.operands[0], buffer_of(node.operands[0])
        through_view = target.opdef.result == "view" and target.op != "inplace"   # `a += b` names a's buffer
        if root.id not in scratch and (through_view or root.op in ("arg", "param") or not root.opdef.fresh):
            raise error("cannot differentiate an in-place write into an argument, a weight or a view of another "
                        "array", node.span, hint="build a new array (`y = x.copy(); y[i] = v`) and write that")
        if node.op == "inplace" and node.attrs["op"] not in FLOWS:
            raise error(f"cannot differentiate the in-place `{node.attrs['op']}` update of an array", node.span,
                        hint="write `a = a op b` instead")
        writes[node.id] = node
    if writes or any(node.regions for node in graph.nodes if node.id in relevant):
        _snapshot(graph, relevant, writes, scratch)
    return {k: Write(n, _old_value(graph, n)) for k, n in writes.items()}


def _old_value(graph: Graph, node: Node):
    """`a *= w` needs the old `a` for w's gradient: a copy taken just before the write."""
    if node.op == "inplace" and node.attrs["op"] in NEEDS_OLD:
        return graph.add("copy", [node.operands[0]], {}, node.operands[0].type, node.span, before=node)
    return None


def buffer_of(value: Node) -> Node:
    """The node that allocated `value`'s memory, through in-place results and views."""
    while value.operands and value.opdef.result == "view":   # a view, an in-place result, a refresh
        value = value.operands[0]
    return value


def _snapshot(graph: Graph, relevant: set, writes: dict, scratch: frozenset = frozenset()) -> None:
    """Give each read that a later write would change a copy taken where it reads. A loop or
    branch writing an array from outside counts as a write of it (and its operand is no read)."""
    last_write = {}
    written_by = {}
    for k, node in enumerate(graph.nodes):
        if node.id in writes:
            last_write[buffer_of(node.operands[0]).id] = k
        elif node.regions and node.id in relevant:
            written_by[node.id] = {w.id for w in outer_writes(node)}
            for w in outer_writes(node):
                last_write[buffer_of(w).id] = k
    for k, node in enumerate(list(graph.nodes)):
        if node.id not in relevant:
            continue
        own = buffer_of(node.operands[0]).id if node.id in writes else None
        operands = list(node.operands)
        for n, operand in enumerate(operands):
            if n == 0 and own is not None or operand.id in written_by.get(node.id, ()):
                continue                       # the write's own target
            root = buffer_of(operand).id
            if root in scratch:
                continue                       # a stand-in: its values are never read
            if root in last_write and last_write[root] >= k and _has_buffer(operand):   # k: before any copy
                operands[n] = graph.add("copy", [operand], {}, operand.type, node.span, before=node)
        if operands != list(node.operands):
            graph.set_operands(node, operands)


def outer_writes(node: Node) -> list:
    """The operands of a region node that code inside its regions writes in place (`out[i] = v` in a
    loop body writes the `out` the loop captured): a write the node makes, for the reverse walk."""
    written = []
    for region in node.regions:
        targets = {a.id: o for a, o in zip(region.args, operands_of_args(node, region))}
        for inner in region.all_nodes():
            for w in inner.writes + tuple(outer_writes(inner) if inner.regions else ()):
                outer = targets.get(buffer_of(w).id)
                if outer is not None and all(outer is not x for x in written):
                    written.append(outer)
    return written


def operands_of_args(node: Node, region: Graph) -> list:
    """The operand each argument of `region` receives (a loop's counter receives none)."""
    if node.op == "if":
        return list(node.operands[1:])
    if node.op == "for_range":
        return [None] + list(node.operands[3:])
    return list(node.operands)


def rewritten_later(graph: Graph, relevant: set, writes: dict) -> set:
    """Ids of the relevant nodes whose own array a later write changes (`z = np.exp(x); z *= 2`):
    a rule reading the node's value (exp's reads its result) must read a copy taken in time."""
    last = {}
    for k, node in enumerate(graph.nodes):
        if node.id in writes:
            last[buffer_of(node.operands[0]).id] = k
        elif node.regions:
            for w in outer_writes(node):
                last[buffer_of(w).id] = k
    return {node.id for k, node in enumerate(graph.nodes) if node.id in relevant and last.get(node.id, -1) > k}


def own_value_in_time(graph: Graph, node: Node, first_new: int) -> None:
    """The backward nodes from `first_new` on that read `node`'s value read a copy taken right
    after `node`, before the later write changed it."""
    users = [n for n in graph.nodes[first_new:] if any(o is node for o in n.operands)]
    if not users:
        return
    following = graph.nodes[graph.nodes.index(node) + 1]
    copy = graph.add("copy", [node], {}, node.type, node.span, before=following)
    for user in users:
        graph.set_operands(user, [copy if o is node else o for o in user.operands])


class Write:
    """How the cotangent flows at one in-place write (see the module docstring)."""

    def __init__(self, node: Node, old):
        self.node = node
        self.old = old          # the array before the write, when the rule needs it

    def flow(self, b, node: Node, cotangents) -> None:
        target = node.operands[0]
        after = _gather(b, cotangents, node, target)
        if after is None:
            return
        if node.op == "add_at":             # `np.add.at(a, index, v)`: v's cotangent is gathered back
            index = node.attrs["index"]
            cotangents.add(node.operands[1], b.op("getitem", after, *node.operands[2:], index=shift_refs(index, -1)))
            cotangents.replace(target, after)
            return
        if node.op == "setitem":
            index = node.attrs["index"]
            cotangents.add(node.operands[1], b.op("getitem", after, *node.operands[2:], index=shift_refs(index, -1)))
            masked = b.op("copy", after)
            b.op("setitem", masked, b.const(0.0), *node.operands[2:], index=index)
            cotangents.replace(target, masked)
            return
        before, other = FLOWS[node.attrs["op"]](b, node.operands[1], self.old, after)
        cotangents.replace(target, before)
        cotangents.add(node.operands[1], other)


def _gather(b, cotangents, node: Node, target: Node):
    """What the reads after the write sent to the array (through any name it has)."""
    parts = [cotangents.pop(node)] if node.op == "inplace" else []
    parts.append(cotangents.peek(target))
    parts = [p for p in parts if p is not None]
    if not parts:
        return None
    total = parts[0]
    for p in parts[1:]:
        total = b.op("add", total, p)
    return total


# `a op= w`: the cotangent of `a` before the write and of `w`, from the cotangent `g` after it.
FLOWS = {
    "add": lambda b, w, old, g: (g, g),
    "sub": lambda b, w, old, g: (g, b.op("neg", g)),
    "mul": lambda b, w, old, g: (b.op("mul", g, w), b.op("mul", g, old)),
    "truediv": lambda b, w, old, g: (b.op("truediv", g, w),
                                     b.op("neg", b.op("truediv", b.op("mul", g, old), b.op("mul", w, w)))),
}
NEEDS_OLD = {"mul", "truediv"}
