"""Differentiating run-time control flow: `if`, `for i in range(...)` and `while`.

- **`if`**: the backward pass is an `if` on the same condition, so it takes the branch the forward
  pass took. Each of its branches recomputes its forward branch and runs that branch's backward
  pass, yielding the cotangents of the values the branch captured.
- **Loops** keep a *tape*: the forward loop appends its carried state to a list at the top of
  each iteration (arrays copied, so later in-place writes cannot change what was recorded). The
  backward loop runs the iterations in reverse: it reads iteration k's state from the tape,
  recomputes that one iteration, and runs its backward pass. Memory is one carried state per
  iteration (not every intermediate value, which a stack of all residuals would keep); the price
  is computing each body twice. Values the loop captures from outside get their gradients summed
  over the iterations.
- **Arrays from outside that the body writes** (`out[i] = v`, `acc[j] += v`): their cotangent is
  carried through the backward loop like a carried value's, each write sending its part to the
  value written and zeroing it (inplace.py). The replayed body writes into a stand-in (zeros, so
  the real array keeps what the forward pass left), and each element it reads of such an array
  (`out[i - 1]`) is recorded by the forward loop where it reads, one tuple per iteration, and
  replayed (`replayed` nodes): memory is what the body reads, not a copy of the array per
  iteration.

The recomputed body must be safe to run again: a loop body that calls Python code, writes
attributes or globals, or writes in place an array it carries, is an error naming that statement;
so is reading, in a nested loop or branch, an array the body writes (the replay has no record of
it), and `a *= b` / `a /= b` on such an array (its backward pass needs the old value).
"""

from __future__ import annotations

from ..ir import Graph, Node, clone_region
from ..literals import Index, OperandRef
from ..types import INT, OBJECT, ArrayType, ScalarType, TupleType, join
from .fill import zeros_like
from ..vjp_common import differentiable
from . import inplace
from .inplace import buffer_of, operands_of_args, outer_writes

# Ops the backward pass cannot run a second time without changing what the program does.
NOT_REPLAYABLE = {"pycall": "calls Python code", "call": "calls a function graphjit does not know",
                  "fallback": "runs Python code (LAX fallback)", "store_global": "writes a global",
                  "setattr": "writes an attribute", "load_global": "reads a global written elsewhere"}


def if_rule(b, node: Node, g: dict, backward, error, after: dict) -> tuple:
    """`if c: ... else: ...`: an `if` on the same condition runs the branch's backward pass."""
    cond, captures = node.operands[0], node.operands[1:]
    written = outer_writes(node)
    if written:
        raise error(f"cannot differentiate a run-time `if` whose branch writes `{written[0].name or 'an array'}` "
                    f"in place", node.span, hint="compute the branch's value (`y = np.where(c, a, b)`, or assign "
                                                  "a new array in each branch) and write it after the `if`")
    present = [k for k in sorted(g) if g[k] is not None]
    wanted = [k for k, c in enumerate(captures) if differentiable(c)]
    if not present or not wanted:
        return (None,) * len(node.operands)
    branches = [_branch_backward(r, present, g, wanted, backward) for r in node.regions]
    types = tuple(join(a.type, e.type) for a, e in zip(branches[0].outputs, branches[1].outputs))
    back = b.graph.add("if", [cond, *captures, *(g[k] for k in present)], {}, TupleType(types), b.span,
                       regions=branches)
    out = [None] * len(node.operands)
    for j, k in enumerate(wanted):
        out[1 + k] = b.op("tuple_get", back, index=j)
    return tuple(out)


def _branch_backward(region: Graph, present: list, g: dict, wanted: list, backward) -> Graph:
    new = Graph(region.name, label=region.label)
    args = [new.add_arg(a.name, a.type, a.span) for a in region.args]
    seeds = [new.add_arg(f"d{k}", g[k].type) for k in present]
    outs = inline(new, region, args)
    new.set_outputs(backward(new, [args[k] for k in wanted], [(outs[k], s) for k, s in zip(present, seeds)]))
    return new


def for_rule(b, node: Node, g: dict, backward, error, after: dict) -> tuple:
    """`for i in range(start, stop, step)` with carried values: taped forward, reversed backward."""
    return _loop_backward(b, node, g, backward, error, after, operand_base=3, first_arg=1)


def while_rule(b, node: Node, g: dict, backward, error, after: dict) -> tuple:
    """`while cond:` with carried values: the tape's length is the number of iterations."""
    return _loop_backward(b, node, g, backward, error, after, operand_base=0, first_arg=0)


def _loop_backward(b, node: Node, g: dict, backward, error, after: dict, operand_base: int, first_arg: int):
    """The backward loop. `after` holds the cotangent, after the loop, of each array from outside
    that the body writes in place (`out[i] = v`): it is carried through the backward loop like a
    carried value's, and what comes out replaces it (the writes happened in the loop)."""
    body = node.regions[-1]
    c = node.attrs.get("carried", 0)
    inits = node.operands[operand_base:operand_base + c]
    captures = node.operands[operand_base + c:]
    cap_args = body.args[first_arg + c:first_arg + c + len(captures)]
    outer = outer_writes(node)
    written = [m for m, cap in enumerate(captures) if any(cap is w for w in outer)]
    targets = {cap_args[m].id for m in written}
    check_replayable(body, error, targets)
    reads = _reads(body, targets, error)
    original = clone_region(body)
    read_positions = [body.nodes.index(r) for r in reads]
    tape, read_tape = _record(b.graph, node, body, first_arg, c, reads)
    slots = [j for j in range(c) if differentiable(body.args[first_arg + j]) or differentiable(inits[j])]
    taken = [m for m, cap in enumerate(captures) if differentiable(cap) and m not in written]
    written = [m for m in written if differentiable(captures[m])]
    if not slots and not taken and not written:
        return (None,) * len(node.operands)
    start = [g.get(j) if g.get(j) is not None else zeros_like(b, inits[j]) for j in slots]
    sums = [zeros_like(b, captures[m]) for m in taken]
    dwritten = [after.get(captures[m].id) if after.get(captures[m].id) is not None else zeros_like(b, captures[m])
                for m in written]
    back_body = Graph(body.name, label="body")
    k = back_body.add_arg("k", INT)
    douts = [back_body.add_arg(f"d{j}", v.type) for j, v in zip(slots, start)]
    dsums = [back_body.add_arg(f"dcap{m}", v.type) for m, v in zip(taken, sums)]
    dws = [back_body.add_arg(f"dw{m}", v.type) for m, v in zip(written, dwritten)]
    tape_arg = back_body.add_arg("tape", OBJECT)
    reads_arg = back_body.add_arg("reads", OBJECT) if read_tape is not None else None
    caps = [back_body.add_arg(a.name, a.type, a.span) for a in original.args[first_arg + c:first_arg + c + len(captures)]]
    state = back_body.add("getitem", [tape_arg, k], {"index": Index([OperandRef(1)])}, OBJECT, b.span)
    recorded = [back_body.add("tuple_get", [state], {"index": n}, a.type, b.span, a.name)
                for n, a in enumerate(original.args[:first_arg + c])]
    replay = {}
    if reads_arg is not None:
        seen = back_body.add("getitem", [reads_arg, k], {"index": Index([OperandRef(1)])}, OBJECT, b.span)
        replay = {original.nodes[p].id: back_body.add("tuple_get", [seen], {"index": n}, original.nodes[p].type, b.span)
                  for n, p in enumerate(read_positions)}
    recompute_start = len(back_body.nodes)
    outs = inline(back_body, original, [*recorded, *caps], replay)
    finals = [_last_name(back_body.nodes[recompute_start:], caps[m]) for m in written]
    grads = backward(back_body, [recorded[first_arg + j] for j in slots] + [caps[m] for m in taken]
                     + [caps[m] for m in written],
                     [(outs[j], d) for j, d in zip(slots, douts)] + list(zip(finals, dws)),
                     frozenset(caps[m].id for m in written))
    _settle_replays(back_body)
    n_slots, n_taken = len(slots), len(taken)
    summed = [back_body.add("add", [s, gc], span=b.span) for s, gc in zip(dsums, grads[n_slots:n_slots + n_taken])]
    back_body.set_outputs([*grads[:n_slots], *summed, *grads[n_slots + n_taken:]])
    last = b.op("sub", b.op("len", tape), b.const(1))
    carried = [*start, *sums, *dwritten]
    scratch = {m: zeros_like(b, captures[m]) for m in written}   # the replayed writes land here
    back_captures = [scratch.get(m, cap) for m, cap in enumerate(captures)]
    back = b.graph.add("for_range", [last, b.const(-1), b.const(-1), *carried, tape,
                                     *([read_tape] if read_tape is not None else []), *back_captures],
                       {"carried": len(carried)}, TupleType(tuple(v.type for v in back_body.outputs)), b.span,
                       regions=[back_body])
    out = [None] * len(node.operands)
    for n, j in enumerate(slots):
        out[operand_base + j] = b.op("tuple_get", back, index=n)
    for n, m in enumerate(taken):
        out[operand_base + c + m] = b.op("tuple_get", back, index=n_slots + n)
    for n, m in enumerate(written):
        out[operand_base + c + m] = b.op("tuple_get", back, index=n_slots + n_taken + n)
    return tuple(out)


def _record(graph: Graph, node: Node, body: Graph, first_arg: int, c: int, reads: list) -> tuple:
    """Make the forward loop append its state (counter and carried values) to a new list at the
    top of each iteration and, when it reads arrays it writes, what each read saw to a second list
    at the bottom. Returns the two lists (the second is None without such reads)."""
    tape = graph.add("list", [], {}, OBJECT, node.span, "tape", before=node)
    read_tape = graph.add("list", [], {}, OBJECT, node.span, "reads", before=node) if reads else None
    graph.set_operands(node, [*node.operands, tape, *([read_tape] if reads else [])])
    for region in node.regions:
        region.add_arg("tape", OBJECT)
        if reads:
            region.add_arg("reads", OBJECT)
    tape_arg = body.args[-2] if reads else body.args[-1]
    first = body.nodes[0] if body.nodes else None
    state = [_frozen(body, a, first) for a in body.args[:first_arg + c]]
    entry = body.add("tuple", state, {}, TupleType(tuple(s.type for s in state)), node.span, before=first)
    body.add("append", [tape_arg, entry], {}, span=node.span, before=first)
    if reads:
        seen = []
        for r in reads:
            following = body.nodes[body.nodes.index(r) + 1] if body.nodes[-1] is not r else None
            seen.append(_frozen(body, r, following))       # copied where it reads: later writes change it
        entry = body.add("tuple", seen, {}, TupleType(tuple(s.type for s in seen)), node.span)
        body.add("append", [body.args[-1], entry], {}, span=node.span)
    return tape, read_tape


def _frozen(body: Graph, value: Node, before) -> Node:
    """An array is copied onto the tape (the body may write it in place); a number is kept."""
    if isinstance(value.type, ArrayType) and value.type.rank != 0:
        return body.add("copy", [value], {}, value.type, value.span, before=before)
    return value


# Reading these of an array reads no element: the replayed body reads them from its stand-in.
METADATA = ("shape", "dim", "ndim", "size", "len")


def _rooted(value: Node, targets: set) -> bool:
    """Is `value` (a view of) the memory of one of `targets`? A number never is."""
    t = value.type
    if isinstance(t, ScalarType) or isinstance(t, ArrayType) and t.rank == 0:
        return False
    return buffer_of(value).id in targets


def _reads(body: Graph, targets: set, error) -> list:
    """The nodes of `body` that read the elements of an array from outside that the body writes:
    the backward pass replays the body with a stand-in for that array (its writes must not touch
    the real one), so each such read gets, instead, the value it had, recorded by the forward
    loop. A read inside a nested loop or branch, or a write the backward pass needs the old value
    of, is refused."""
    reads = []
    for node in body.nodes:
        rooted = [n for n, o in enumerate(node.operands) if _rooted(o, targets)]
        if not rooted or node.op in METADATA:
            continue
        if node.regions:
            _only_written(node, {node.operands[n].id for n in rooted}, error)
        elif inplace.is_write(node):
            if rooted != [0]:
                raise error("cannot differentiate a loop that writes part of an array it writes in place into "
                            "another place", node.span, hint="copy the part first (`part = a[...].copy()`)")
            if node.op == "inplace" and node.attrs["op"] not in ("add", "sub"):
                raise error(f"cannot differentiate the in-place `{node.attrs['op']}` update, inside a loop, of an "
                            f"array from outside the loop", node.span, hint="write `a[...] = a[...] op b` instead")
        elif not _rooted(node, targets):
            reads.append(node)
    return reads


def _only_written(node: Node, outer: set, error) -> None:
    """Inside a loop or branch nested in the body, an array the body writes may only be written."""
    for region in node.regions:
        args = {a.id for a, o in zip(region.args, operands_of_args(node, region)) if o is not None and o.id in outer}
        for inner in region.nodes:
            rooted = [n for n, o in enumerate(inner.operands) if _rooted(o, args)]
            if not rooted or inner.op in METADATA:
                continue
            if inner.regions:
                _only_written(inner, {inner.operands[n].id for n in rooted}, error)
            elif not (inplace.is_write(inner) and rooted == [0]) and not _rooted(inner, args):
                raise error("cannot differentiate a loop that reads, in a nested loop or branch, an array it writes "
                            "in place", inner.span, hint="at jit_level O2 a loop that only fills an array is "
                                                         "vectorized first; else read the array in the loop's own "
                                                         "body, or carry the value in a variable")


def _last_name(nodes: list, array: Node) -> Node:
    """The name `array` has at the end of `nodes`: `a += b` on an array names its result anew."""
    current = array
    for node in nodes:
        if node.op in ("inplace", "refresh") and node.operands[0] is current:
            current = node
    return current


def _settle_replays(region: Graph) -> None:
    """Once the backward pass is built, a replayed read is its recorded value (what the stand-in
    holds is never read)."""
    for node in list(region.nodes):
        if node.op == "replayed":
            region.replace_all_uses(node, node.operands[1])
            region.erase(node)


def check_replayable(region: Graph, error, targets: set = frozenset()) -> None:
    """The backward pass runs the body again: refuse bodies whose effects would then happen twice.
    Writes into `targets` (arrays from outside, which the replay writes into a stand-in) are fine."""
    outer = {a.id for a in region.args} - set(targets)
    for node in region.all_nodes():
        why = NOT_REPLAYABLE.get(node.op)
        if why is None and any(buffer_of(w).id in outer and isinstance(w.type, ArrayType) and w.type.rank != 0
                               for w in node.writes):
            why = "writes in place an array it carries from one iteration to the next"
        if why is not None:
            raise error(f"cannot differentiate a loop whose body {why}: the backward pass runs each "
                        f"iteration again", node.span,
                        hint="at jit_level O2 a loop that only fills an array is vectorized first and "
                             "differentiated whole; else move this statement out of the loop")


def inline(target: Graph, region: Graph, args: list, replay: dict = None) -> list:
    """Copy `region`'s nodes into `target`, its arguments bound to `args`; the copies of its outputs.
    A node in `replay` is copied too, but its users see the recorded value `replay[id]` (through a
    `replayed` node, so the gradient still flows to the read)."""
    mapping = {a.id: v for a, v in zip(region.args, args)}
    for node in region.nodes:
        mapping[node.id] = target.add(node.op, [mapping[o.id] for o in node.operands], dict(node.attrs), node.type,
                                      node.span, node.name, regions=[clone_region(r) for r in node.regions])
        if replay and node.id in replay:
            mapping[node.id] = target.add("replayed", [mapping[node.id], replay[node.id]], {}, node.type, node.span)
    return [mapping[o.id] for o in region.outputs]


RULES = {"if": if_rule, "for_range": for_rule, "while": while_rule}
