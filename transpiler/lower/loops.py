"""What every run-time loop shares: entering and leaving it, its flags, carried names, body regions typed until stable."""

from __future__ import annotations

from typing import Callable, Optional

import libcst as cst

from ...graph.diagnostics import LoweringError
from ...graph.ir import Graph, Node
from ...graph.types import ArrayType, INT, OBJECT, ScalarType, TupleType, join
from ..cst_queries import assigned_names, contains, used_outside
from ..rules import LAX
from ..scope import RegionGroup, Scope
from ..values import MaybeUnbound, Seq, Static, UNBOUND, Undefined, is_static, static_value
from .bind import assign_name
from .branches import branch
from .containers import containers_in, items_of, name_of, restore, same_items, snapshot
from .control import ContainerChanged, NeedsStatic, NeedsUnroll


def enter_loop(state, frame, span, control: bool, body: list = ()) -> None:
    frame.loops.append(span)
    if control:
        depth = len(frame.loops)
        frame.env[f"$brk{depth}"] = Static(False)
        frame.env[f"$cont{depth}"] = Static(False)
        if contains(body, (cst.Return,)):
            frame.env.setdefault("$ret", Static(False))
            frame.env.setdefault("$rv", Static(None))


def exit_loop(state, frame) -> None:
    depth = len(frame.loops)
    frame.env.pop(f"$brk{depth}", None)
    frame.env.pop(f"$cont{depth}", None)
    frame.loops.pop()


def clear_flags(frame, depth: int) -> None:
    for name in (f"$brk{depth}", f"$cont{depth}", "$ret"):
        if name in frame.env:
            frame.env[name] = Static(False)


def any_of(state, flags: list, span):
    acc = flags[0]
    for f in flags[1:]:
        acc = state.emit("bitor", [acc, f], span=span)
    return acc


def check_loop_containers(state, saved: list, frame, span) -> None:
    """A compile-time list or dict may not change inside a run-time loop (the body runs once here)."""
    for obj, old in saved:
        if not same_items(old, items_of(obj)):
            kind = "list" if isinstance(obj, Seq) else "dict"
            raise _container_changed(f"the {kind} `{name_of(obj, frame.env)}` changes inside this run-time "
                                     "loop", span)


def carried_names(state, body: list, frame, exclude=(), extra=(), stmt=None, maybe_extra=()) -> list:
    """Names a loop carries: those its body assigns that are bound before it, flags, `extra`.

    At LAX (given the loop `stmt`) also the names the loop may or may not bind (first assigned in
    it, and `maybe_extra`) that the function mentions outside it: carried as value-or-UNBOUND, so
    a fallback block after the loop reads them as Python would.
    """
    names = [n for n in assigned_names(body) if n in frame.env and not isinstance(frame.env[n], Undefined)]
    names += [n for n in extra if n not in names]
    for flag in sorted(k for k in frame.env if k.startswith("$") and not k.startswith("$i")):
        if flag not in names and _flag_of_this_loop(flag, len(frame.loops)):
            names.append(flag)
    names = [n for n in names if n not in exclude]
    if state.level == LAX and stmt is not None:
        unbound = [n for n in [m for m in assigned_names(body) if m not in exclude] + list(maybe_extra)
                   if not n.startswith("$") and n not in names
                   and (n not in frame.env or isinstance(frame.env[n], Undefined) and not frame.env[n].poisoned)]
        for n in used_outside(stmt, frame, list(dict.fromkeys(unbound))) if unbound else []:
            old = frame.env.get(n)
            frame.env[n] = Undefined(n, "it is assigned only inside a run-time loop",
                                     maybe=old.maybe if isinstance(old, Undefined) else None)
            names.append(n)
    return names


MAX_CARRY_PASSES = 4   # a loop body is lowered at most this many times while its carried types widen


def carry_until_stable(lower_pass: Callable[[list], Optional[list]], types: list, top=None) -> bool:
    """Lower a loop's regions again until the types of the values they carry stop widening.

    A carried value enters the body as a region argument of the type known so far; the body may
    leave it wider (an int it makes a float, a Python float it makes an `np.float32`: `f32[]|float`,
    an array whose shape it changes), and then the body must be lowered again with the wider type.
    `lower_pass(types)` lowers the regions once with the carried values typed `types` and returns
    the types the body leaves them, or None when the carried names changed (it updated `types` to
    match) and the regions must be lowered again. `types` is updated in place: the widest types
    found. After MAX_CARRY_PASSES - 1 passes a type still widening becomes `top` (when given, the
    type that covers every value), so the regions kept are typed for every iteration; without
    `top`, at most MAX_CARRY_PASSES passes and the last pass's regions are kept. True when the
    last pass was typed with the stable types (its regions are typed for every iteration).
    """
    passes = 0
    while passes < MAX_CARRY_PASSES or top is not None and passes < MAX_CARRY_PASSES + len(types):
        passes += 1
        new_types = lower_pass(types)
        if new_types is None:
            continue
        if new_types == types:
            return True
        if top is not None and passes >= MAX_CARRY_PASSES - 1:
            new_types = [t if t == n else top for t, n in zip(types, new_types)]
        types[:] = new_types
    return False


def loop_region(state, frame, span, carried: list, body_fn, index_name: str, exclude=(), placeholders=(),
                runs: bool = False):
    """The body region of a `for_range`; carried values' types widen until they are stable.

    `placeholders`: carried names unbound before the loop (their type is the body's); one the body
    does not surely bind is dropped. Returns the types the carried names have after the loop: the
    region arguments' (the value before the loop or a body's), or the body's alone when the loop
    surely `runs` (`s = 0.0` summing float32 elements is `f32[]` after it, `f32[]|float` inside).
    """
    placeholders = list(placeholders)
    init = [frame.env[n] for n in carried]
    maybe = {n for n in carried if isinstance(frame.env[n], Undefined)}
    types = [state.maybe_operand(v, span).type for v in init]
    # placeholders and names maybe unbound before the loop whose type is not known yet
    fresh = set(placeholders) | _untyped_unbound(frame, carried)
    ends_unbound: set = set()
    outs = group = g = None

    def lower_body(types: list) -> Optional[list]:
        nonlocal outs, group, g, ends_unbound
        outer = state.scope
        g = Graph(f"{outer.graph.name}.body", label="body")
        group = RegionGroup([g], outer)
        index = g.add_arg(index_name, INT, span)
        args = [g.add_arg(n.lstrip("$"), t, span) for n, t in zip(carried, types)]
        body_frame = frame.fork()
        state.scope = Scope(g, group, 0)
        saved = snapshot(containers_in(frame.env))
        try:
            for n, a in zip(carried, args):
                body_frame.env[n] = Undefined(n, frame.env[n].reason, maybe=a) if n in maybe else \
                    _carried_value(frame.env[n], a, n in fresh)
            try:
                body_fn(body_frame, index)
                check_loop_containers(state, saved, frame, span)
            except LoweringError as e:
                if isinstance(e, NeedsStatic):
                    raise NeedsUnroll(e) from None
                raise
            extra = _rebound(frame.env, body_frame.env, carried, exclude)
            unsure = [n for n in placeholders if n in carried and isinstance(body_frame.env.get(n), Undefined)]
            if not extra and not unsure:
                outs, ends, ends_unbound = _yield_carried(state, g, body_frame.env, carried, maybe, span)
        finally:
            state.scope = outer
            restore(saved)
        if extra:  # written by a fallback block (a nested def's `nonlocal`, a list): carry it too
            carried.extend(extra)
            types.extend(state.operand(frame.env[n], span).type for n in extra)
            return None
        if unsure:  # not bound on every path of the body: not bound after the loop either
            for n in unsure:
                k = carried.index(n)
                del carried[k], types[k]
                frame.env[n] = Undefined(n, f"it is not assigned on every path of the loop at {span}")
            return None
        new_types = _widened(carried, types, outs, ends, fresh)
        fresh.clear()
        return new_types

    stable = carry_until_stable(lower_body, types, OBJECT)
    after = _after_loop(types, outs, carried, fresh | maybe | ends_unbound) if runs and stable else types
    # after the loop, maybe unbound: names the body may leave so, and those that were before a
    # loop that may not run (placeholders are made only for loops that surely run)
    unsure_after = ends_unbound | {n for n in carried if isinstance(frame.env[n], MaybeUnbound)
                                   and n not in placeholders}
    return outs, after, group, g, unsure_after


def _after_loop(types: list, outs: list, carried: list, unsure: set) -> list:
    """The carried names' types after a loop that surely ran: what the last pass of its body yields
    (typed for every iteration once the types are stable), unless a name may be unbound there."""
    return [t if n in unsure else o.type for n, t, o in zip(carried, types, outs)]


def while_region(state, frame, span, body: list, cond_fn, body_fn, extra=(), exclude=(), stmt=None,
                 maybe_extra=()) -> None:
    carried = carried_names(state, body, frame, extra=extra, stmt=stmt, maybe_extra=maybe_extra)
    init = [frame.env[n] for n in carried]
    maybe = {n for n in carried if isinstance(frame.env[n], Undefined)}
    types = [state.maybe_operand(v, span).type for v in init]
    fresh = _untyped_unbound(frame, carried)  # maybe unbound, type not known yet: the body's
    ends_unbound: set = set()
    group = cond_g = body_g = None
    never_runs = False

    def lower_cond_and_body(types: list) -> Optional[list]:
        nonlocal group, cond_g, body_g, ends_unbound, never_runs
        outer = state.scope
        cond_g = Graph(f"{outer.graph.name}.cond", label="cond")
        body_g = Graph(f"{outer.graph.name}.body", label="body")
        group = RegionGroup([cond_g, body_g], outer)
        outs, more = None, []
        # carried values first in both graphs, before the condition captures outer values
        all_args = [[g.add_arg(n.lstrip("$"), t, span) for n, t in zip(carried, types)]
                    for g in (cond_g, body_g)]
        for k, g in enumerate((cond_g, body_g)):
            args = all_args[k]
            f = frame.fork()
            for n, a in zip(carried, args):
                f.env[n] = Undefined(n, frame.env[n].reason, maybe=a) if n in maybe else \
                    _carried_value(frame.env.get(n), a, n in fresh)
            state.scope = Scope(g, group, k)
            saved = snapshot(containers_in(frame.env))
            try:
                if k == 0:
                    test = cond_fn(f)
                    check_loop_containers(state, saved, frame, span)
                    if is_static(test) and not static_value(test):
                        state.scope = outer
                        never_runs = True  # `while False:`
                        return types
                    g.set_outputs([state.operand(test, span)])
                else:
                    body_fn(f)
                    check_loop_containers(state, saved, frame, span)
                    more = _rebound(frame.env, f.env, carried, exclude)
                    if not more:
                        outs, ends, ends_unbound = _yield_carried(state, g, f.env, carried, maybe, span)
            finally:
                state.scope = outer
                restore(saved)
        if more:  # written by a fallback block: carry it too
            carried.extend(more)
            init.extend(frame.env[n] for n in more)
            maybe.update(n for n in more if isinstance(frame.env[n], Undefined))
            types.extend(state.operand(frame.env[n], span).type for n in more)
            return None
        new_types = _widened(carried, types, outs, ends, fresh)
        fresh.clear()
        return new_types

    carry_until_stable(lower_cond_and_body, types, OBJECT)
    if never_runs:
        return
    init_nodes = [state.maybe_operand(v, span) for v in init]
    unsure = ends_unbound | {n for n, v in zip(carried, init) if isinstance(v, MaybeUnbound)}
    node = state.scope.graph.add("while", init_nodes + [state.scope.local(v) for v in group.outer],
                                {"carried": len(carried)}, TupleType(tuple(types)), span,
                                regions=[cond_g, body_g])
    bind_results(state, node, carried, types, frame, span, unsure)


def bind_results(state, node, carried: list, types: list, frame, span, unsure=()) -> None:
    """Bind the loop's results to their names; those in `unsure` may be unbound (`MaybeUnbound`)."""
    for k, (n, t) in enumerate(zip(carried, types)):
        value = state.scope.graph.add("tuple_get", [node], {"index": k}, t, span)
        if n in unsure:
            value.name = value.name or n
            frame.env[n] = MaybeUnbound(value, t)
        elif isinstance(frame.env.get(n), Undefined):
            frame.env[n] = Undefined(n, frame.env[n].reason, maybe=value)  # LAX: value or UNBOUND
        elif n.startswith("$"):
            frame.env[n] = value
        else:
            assign_name(state, n, value, frame)


def read_maybe_unbound(state, name: str, value: MaybeUnbound, frame, span) -> Node:
    """Read a name a loop may have left unbound: UnboundLocalError there, as in Python.

        if isinstance(j, str):              # `and j == UNBOUND` unless `j` is never a string
            raise UnboundLocalError("cannot access local variable 'j' where it is not associated ...")
    """
    node = state.operand(value, span)
    error, message = ("NameError", f"cannot access free variable '{name}' where it is not associated with a "
                      "value in enclosing scope") if value.free else \
        ("UnboundLocalError", f"cannot access local variable '{name}' where it is not associated with a value")

    def fail(f):
        state.emit("raise", [Static(f"builtins.{error}"), Static(message)], span=span)

    def test_value(f):
        branch(state, state.emit("eq", [node, Static(UNBOUND)], span=span), fail, lambda g: None, f, span)

    is_str = state.emit("isinstance", [node], {"classes": ("builtins.str",)}, span)
    never_str = value.vtype is not None and _never_str(value.vtype)
    branch(state, is_str, fail if never_str else test_value, lambda f: None, frame, span)
    frame.env[name] = node  # tested: bound from here on
    return node


def undefine_loop_locals(state, body: list, frame, span) -> None:
    for n in assigned_names(body):
        if n not in frame.env:
            frame.env[n] = Undefined(n, f"it is assigned only inside the run-time loop at {span}")


def _never_str(t) -> bool:
    """A value of type `t` is never a string (so never the UNBOUND sentinel)."""
    return isinstance(t, (ArrayType, TupleType)) or isinstance(t, ScalarType) and t.kind != "str"


def _yield_carried(state, graph, env: dict, carried: list, maybe: set, span) -> tuple:
    """The body graph yields the carried names' values: (its outputs, the values, the names maybe unbound)."""
    outs = [state.maybe_operand(env[n], span) if n in maybe else state.operand(env[n], span) for n in carried]
    graph.set_outputs(outs)
    return outs, [env.get(n) for n in carried], {n for n in carried if isinstance(env.get(n), MaybeUnbound)}


def _widened(carried: list, types: list, outs: list, ends: list, fresh: set) -> list:
    """The carried types after one pass: joined with what the body yields (a fresh name takes the body's)."""
    return [_output_type(e, o) if n in fresh else join(t, o.type) for n, t, o, e in zip(carried, types, outs, ends)]


def _output_type(value, node: Node):
    """The type a loop body gives a carried name whose type is not known yet: a maybe-unbound one's
    bound type (the UNBOUND placeholder does not count)."""
    if isinstance(value, MaybeUnbound) and value.vtype is not None:
        return value.vtype
    return node.type


def _untyped_unbound(frame, carried: list) -> set:
    """Carried names maybe unbound before the loop whose bound type is not known yet."""
    return {n for n in carried if isinstance(frame.env.get(n), MaybeUnbound) and frame.env[n].vtype is None}


def _carried_value(before, arg: Node, fresh: bool):
    """The loop body's value of a carried name: its region argument, maybe unbound if it was before."""
    if isinstance(before, MaybeUnbound):
        return MaybeUnbound(arg, None if fresh else arg.type)
    return arg


def _rebound(outer: dict, inner: dict, carried: list, exclude) -> list:
    """Names of values a loop body rebound that are not carried yet (a fallback block wrote them)."""
    out = []
    for name, value in inner.items():
        if name in carried or name in exclude or name.startswith("$") or name not in outer:
            continue
        old = outer[name]
        if value is old or not isinstance(value, (Node, Static, Seq)) or not isinstance(old, (Node, Static, Seq)):
            continue
        out.append(name)
    return out


def _container_changed(message, span):
    return ContainerChanged(message, span, hint="build the values in an array (preallocate it and assign items), "
                            "or loop over a compile-time range")


def _flag_of_this_loop(flag: str, depth: int) -> bool:
    return flag in (f"$brk{depth}", "$ret", "$rv")
