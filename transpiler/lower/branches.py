"""Lowering `if`: decided now on a compile-time test, else an `if` region whose merged names are the phis."""

from __future__ import annotations

from typing import Any, Callable, Optional

import libcst as cst

from ...graph.diagnostics import LoweringError
from ...graph.ir import Graph, Node
from ...graph.types import TupleType, join
from ..cst_queries import else_body, if_body, used_outside
from ..rules import LAX
from ..scope import RegionGroup, Scope
from ..values import MaybeUnbound, Seq, Static, Undefined, is_static, static_value
from .bind import assign_name
from .containers import (containers_in, copy_structure, item_setter, name_of, restore, same_items, same_static,
                         same_value, snapshot)
from .control import Return


def lower_if(state, stmt: cst.If, frame) -> None:
    test = state.lower_expr(stmt.test, frame)
    if is_static(test) or isinstance(test, Seq):
        decided_if(state, stmt, test, frame)
        return
    span = state.span(stmt, frame)
    orelse = else_body(stmt)
    branch(state, test, lambda f: state.statements(if_body(stmt), f), lambda f: state.statements(orelse, f),
                frame, span, stmt=stmt)


def decided_if(state, stmt: cst.If, test, frame) -> None:
    truth = bool(static_value(test)) if is_static(test) else bool(test.items)
    state.statements(if_body(stmt) if truth else else_body(stmt), frame)


def returning_if(state, stmt: cst.If, test, rest: list, frame) -> None:
    span = state.span(stmt, frame)
    orelse = else_body(stmt)

    def run(body):
        def fn(f):
            value = state.block(list(body) + list(rest), f)
            return Static(None) if value is None else value
        return fn

    result = branch(state, test, run(if_body(stmt)), run(orelse), frame, span, result_fns=(None, None))[0]
    raise Return(result)


def branch(state, test, then_fn: Callable, else_fn: Callable, frame, span,
           result_fns: Optional[tuple] = None, stmt=None) -> list:
    """Lower a run-time `if`: both branches in regions, names they assign merged.

    `result_fns` (for ternaries and returning branches) give one extra value per branch,
    yielded first; the list of those results (one) is returned.
    """
    outer = state.scope
    cond = state.operand(test, span)
    graphs = [Graph(f"{outer.graph.name}.then", label="then"), Graph(f"{outer.graph.name}.else", label="else")]
    group = RegionGroup(graphs, outer)
    envs, results = [], []
    # lists and dicts built at compile time: each branch starts from their state before the `if`
    containers = containers_in(frame.env)
    before = snapshot(containers)
    states, result_spans = [], []
    for k, fn in enumerate((then_fn, else_fn)):
        state.scope = Scope(graphs[k], group, k)
        branch_frame = frame.fork()
        state.return_span = None
        try:
            value = fn(branch_frame)
            result_spans.append(state.return_span)  # where a returned value comes from
            results.append(copy_structure(value))
            states.append(snapshot(containers))
        finally:
            state.scope = outer
            restore(before)
        envs.append(branch_frame.env)
    names = _changed_names(frame.env, envs)
    merged: list[tuple[Any, list]] = merge_containers(state, containers, before, states, frame, span)
    maybe_names = set()
    # LAX: a name one branch of the `if` statement binds, mentioned after it, flows as value-or-UNBOUND
    lax_names = set(used_outside(stmt, frame, names)) if state.level == LAX and stmt is not None else set()
    for name in names:
        values = [env.get(name, frame.env.get(name)) for env in envs]
        if any(v is None or isinstance(v, Undefined) for v in values):
            reason = f"it is assigned in only one branch of the `if` at {span}"
            if name in lax_names and not name.startswith("$") and not any(
                    isinstance(v, Undefined) and v.poisoned for v in values) and \
                    all(v is None or isinstance(v, (Undefined, Node, Static, Seq)) for v in values):
                maybe_names.add(name)  # the branch yields its value, or UNBOUND
                merged.append((name, values))
                continue
            frame.env[name] = Undefined(name, reason)
            continue
        if all(is_static(v) for v in values) and same_static(values):
            frame.env[name] = values[0]
            continue
        merged.append((name, values))
    yields: list[list] = [[], []]
    with_result = result_fns is not None
    if with_result:
        for k in range(2):
            yields[k].append(results[k])
    for name, values in merged:
        for k in range(2):
            yields[k].append(values[k])
    out_types = []
    for k, g in enumerate(graphs):
        state.scope = Scope(g, group, k)
        try:
            g.set_outputs([state.maybe_operand(v, span) if maybe_names and (v is None or isinstance(v, Undefined))
                           else state.operand(v, (result_spans[k] or span) if j == 0 and with_result else span)
                           for j, v in enumerate(yields[k])])
        except LoweringError as e:
            raise e.add_context("while merging the branches of an `if`")
        finally:
            state.scope = outer
    for a, b in zip(graphs[0].outputs, graphs[1].outputs):
        out_types.append(join(a.type, b.type))
    node = state.scope.graph.add("if", [cond] + [outer.local(v) for v in group.outer], {},
                                TupleType(tuple(out_types)), span, regions=graphs)
    outs = [state.scope.graph.add("tuple_get", [node], {"index": k}, t, span)
            for k, t in enumerate(out_types)]
    offset = 1 if with_result else 0
    for k, ((name, values), value) in enumerate(zip(merged, outs[offset:])):
        if callable(name):
            name(value)  # an item of a compile-time list or dict
        elif any(isinstance(v, MaybeUnbound) for v in values):  # unbound on some path through a loop
            frame.env[name] = MaybeUnbound(value, _bound_type(values, [g.outputs[offset + k] for g in graphs]))
        elif name in maybe_names:
            frame.env[name] = Undefined(name, f"it is assigned in only one branch of the `if` at {span}",
                                        maybe=value)
        else:
            assign_name(state, name, value, frame)
    return outs[:offset]


def merge_containers(state, containers: list, before: list, states: list, frame, span) -> list:
    """Lists/dicts both branches left with the same shape: their differing items become phis.

    A list (dict) whose length (keys) depends on the run-time branch cannot be followed by the
    graph: that is a lowering error (at LAX the `if` runs as a fallback block).
    """
    merged = []
    for obj, old, then_state, else_state in zip(containers, before, states[0], states[1]):
        old_items, new = old[1], (then_state[1], else_state[1])
        if all(same_items(old_items, n) for n in new):
            continue
        name = name_of(obj, frame.env)
        if isinstance(obj, Seq):
            if len(new[0]) != len(new[1]):
                raise LoweringError(f"the list `{name}` has a different length after each branch of this "
                                    "run-time `if`", span, hint="make both branches add the same number of "
                                    "items, or collect the values in an array")
            obj.items[:] = list(new[0])
            for k, (a, b) in enumerate(zip(*new)):
                if not same_value(a, b):
                    merged.append((item_setter(obj.items, k), [a, b]))
        else:
            if list(new[0]) != list(new[1]):
                raise LoweringError(f"the dict `{name}` has different keys after each branch of this "
                                    "run-time `if`", span, hint="set the same keys in both branches")
            obj.value.clear()
            obj.value.update(new[0])
            for key in new[0]:
                a, b = (v if isinstance(v, (Node, Static, Seq)) else Static(v) for v in (new[0][key], new[1][key]))
                if not same_value(a, b):
                    merged.append((item_setter(obj.value, key), [a, b]))
    return merged


def ternary(state, test, then_fn, else_fn, frame, span):
    return branch(state, test, then_fn, else_fn, frame, span, result_fns=(then_fn, else_fn))[0]


def _bound_type(values: list, nodes: list):
    """The type of a merged value where it is bound: maybe-unbound values count by their bound type."""
    out = None
    for v, node in zip(values, nodes):
        t = v.vtype if isinstance(v, MaybeUnbound) else node.type
        if t is not None:
            out = t if out is None else join(out, t)
    return out


def _changed_names(before: dict, envs: list) -> list:
    names = []
    for env in envs:
        for name, value in env.items():
            if (name not in before or before[name] is not value) and name not in names:
                names.append(name)
    return names
