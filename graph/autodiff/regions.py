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

The recomputed body must be safe to run again: a loop body that calls Python code, writes arrays
from outside the loop or writes attributes or globals is an error naming that statement.
"""

from __future__ import annotations

from ..ir import Graph, Node, clone_region
from ..literals import Index, OperandRef
from ..types import INT, OBJECT, ArrayType, TupleType, join
from .fill import zeros_like
from ..vjp_common import differentiable
from .inplace import buffer_of

# Ops the backward pass cannot run a second time without changing what the program does.
NOT_REPLAYABLE = {"pycall": "calls Python code", "call": "calls a function graphjit does not know",
                  "fallback": "runs Python code (LAX fallback)", "store_global": "writes a global",
                  "setattr": "writes an attribute", "load_global": "reads a global written elsewhere"}


def if_rule(b, node: Node, g: dict, backward, error) -> tuple:
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


def for_rule(b, node: Node, g: dict, backward, error) -> tuple:
    """`for i in range(start, stop, step)` with carried values: taped forward, reversed backward."""
    c = node.attrs.get("carried", 0)
    inits, captures = node.operands[3:3 + c], node.operands[3 + c:]
    return _loop_backward(b, node, g, backward, error, inits, captures, first_arg=1, counter=True)


def while_rule(b, node: Node, g: dict, backward, error) -> tuple:
    """`while cond:` with carried values: the tape's length is the number of iterations."""
    c = node.attrs.get("carried", 0)
    inits, captures = node.operands[:c], node.operands[c:]
    return _loop_backward(b, node, g, backward, error, inits, captures, first_arg=0, counter=False)


def _loop_backward(b, node: Node, g: dict, backward, error, inits, captures, first_arg: int, counter: bool):
    body = node.regions[-1]
    c = len(inits)
    check_replayable(body, error)
    original = clone_region(body)
    tape = _record(b.graph, node, body, first_arg, c)
    slots = [j for j in range(c) if differentiable(body.args[first_arg + j]) or differentiable(inits[j])]
    taken = [m for m, cap in enumerate(captures) if differentiable(cap)]
    if not slots and not taken:
        return (None,) * len(node.operands)
    start = [g.get(j) if g.get(j) is not None else zeros_like(b, inits[j]) for j in slots]
    sums = [zeros_like(b, captures[m]) for m in taken]
    back_body = Graph(body.name, label="body")
    k = back_body.add_arg("k", INT)
    douts = [back_body.add_arg(f"d{j}", v.type) for j, v in zip(slots, start)]
    dsums = [back_body.add_arg(f"dcap{m}", v.type) for m, v in zip(taken, sums)]
    tape_arg = back_body.add_arg("tape", OBJECT)
    cap_args = [back_body.add_arg(a.name, a.type, a.span) for a in original.args[first_arg + c:]]
    state = back_body.add("getitem", [tape_arg, k], {"index": Index([OperandRef(1)])}, OBJECT, b.span)
    recorded = [back_body.add("tuple_get", [state], {"index": n}, a.type, b.span, a.name)
                for n, a in enumerate(original.args[:first_arg + c])]
    outs = inline(back_body, original, [*recorded, *cap_args])
    grads = backward(back_body, [recorded[first_arg + j] for j in slots] + [cap_args[m] for m in taken],
                     [(outs[j], d) for j, d in zip(slots, douts)])
    summed = [back_body.add("add", [s, gc], span=b.span) for s, gc in zip(dsums, grads[len(slots):])]
    back_body.set_outputs([*grads[:len(slots)], *summed])
    last = b.op("sub", b.op("len", tape), b.const(1))
    carried = [*start, *sums]
    back = b.graph.add("for_range", [last, b.const(-1), b.const(-1), *carried, tape, *captures],
                       {"carried": len(carried)}, TupleType(tuple(v.type for v in back_body.outputs)), b.span,
                       regions=[back_body])
    out = [None] * len(node.operands)
    base = len(node.operands) - 1 - len(captures) - c          # the tape is the last operand
    for n, j in enumerate(slots):
        out[base + j] = b.op("tuple_get", back, index=n)
    for n, m in enumerate(taken):
        out[base + c + m] = b.op("tuple_get", back, index=len(slots) + n)
    return tuple(out)


def _record(graph: Graph, node: Node, body: Graph, first_arg: int, c: int) -> Node:
    """Make the forward loop append its state (counter and carried values) to a new list."""
    tape = graph.add("list", [], {}, OBJECT, node.span, "tape", before=node)
    graph.set_operands(node, [*node.operands, tape])
    for region in node.regions:
        region.add_arg("tape", OBJECT)
    first = body.nodes[0] if body.nodes else None
    state = [_frozen(body, a, first) for a in body.args[:first_arg + c]]
    entry = body.add("tuple", state, {}, TupleType(tuple(s.type for s in state)), node.span, before=first)
    body.add("append", [body.args[-1], entry], {}, span=node.span, before=first)
    return tape


def _frozen(body: Graph, value: Node, before) -> Node:
    """An array is copied onto the tape (the body may write it in place); a number is kept."""
    if isinstance(value.type, ArrayType) and value.type.rank != 0:
        return body.add("copy", [value], {}, value.type, value.span, before=before)
    return value


def check_replayable(region: Graph, error) -> None:
    """The backward pass runs the body again: refuse bodies whose effects would then happen twice."""
    outer = {a.id for a in region.args}
    for node in region.all_nodes():
        why = NOT_REPLAYABLE.get(node.op)
        if why is None and any(buffer_of(w).id in outer and isinstance(w.type, ArrayType) and w.type.rank != 0
                               for w in node.writes):
            why = "writes an array from outside the loop in place"
        if why is not None:
            raise error(f"cannot differentiate a loop whose body {why}: the backward pass runs each "
                        f"iteration again", node.span,
                        hint="at jit_level O2 a loop that only fills an array is vectorized first and "
                             "differentiated whole; else move this statement out of the loop")


def outer_writes(node: Node) -> list:
    """The operands of a region node that code inside its regions writes in place (`out[i] = v` in a
    loop body writes the `out` the loop captured): a write the node makes, for the reverse walk."""
    written = []
    for region in node.regions:
        targets = {a.id: o for a, o in zip(region.args, _operands_of_args(node, region))}
        for inner in region.all_nodes():
            for w in inner.writes + tuple(outer_writes(inner) if inner.regions else ()):
                outer = targets.get(buffer_of(w).id)
                if outer is not None and all(outer is not x for x in written):
                    written.append(outer)
    return written


def _operands_of_args(node: Node, region: Graph) -> list:
    """The operand each argument of `region` receives (a loop's counter receives none)."""
    if node.op == "if":
        return list(node.operands[1:])
    if node.op == "for_range":
        return [None] + list(node.operands[3:])
    return list(node.operands)


def inline(target: Graph, region: Graph, args: list) -> list:
    """Copy `region`'s nodes into `target`, its arguments bound to `args`; the copies of its outputs."""
    mapping = {a.id: v for a, v in zip(region.args, args)}
    for node in region.nodes:
        mapping[node.id] = target.add(node.op, [mapping[o.id] for o in node.operands], dict(node.attrs), node.type,
                                      node.span, node.name, regions=[clone_region(r) for r in node.regions])
    return [mapping[o.id] for o in region.outputs]


RULES = {"if": if_rule, "for_range": for_rule, "while": while_rule}
