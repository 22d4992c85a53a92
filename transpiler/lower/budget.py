"""The lowering's side of the compile budget: metering unrolled comprehensions and inlined calls, rolling back (limits in transpiler/budget.py)."""

from __future__ import annotations

from ...graph.diagnostics import UnsupportedSyntaxError
from ..budget import MAX_GRAPH_NODES, MAX_INLINED_NODES, MAX_INLINE_DEPTH, MAX_UNROLL_ITERATIONS, Meter, OverBudget
from ..rules import rule
from .containers import containers_in, restore, snapshot


def loop_text(stmt, frame) -> str:
    """`for pos in np.ndindex(data.shape)`: how messages name a loop."""
    module = frame.parsed.module
    return f"for {module.code_for_node(stmt.target)} in {module.code_for_node(stmt.iter)}"


def budget_error(key: str, message: str, span) -> UnsupportedSyntaxError:
    r = rule(key)
    return UnsupportedSyntaxError(message, span, rule=r)


def comprehension_meter(state, node, frame) -> Meter:
    clause = node.for_in
    module = frame.parsed.module
    text = f"for {module.code_for_node(clause.target)} in {module.code_for_node(clause.iter)}"
    meter = Meter("comprehension", node, state.budget.made, name=text)
    meter.span = state.span(node, frame)
    return meter


def count_comprehension(state, meter: Meter, clause, items: list):
    """The items of one clause, stopping with the budget error past the unrolling limits."""
    outer = clause is meter.owner.for_in
    if outer:
        meter.total = len(items)
    for item in items:
        meter.done += 1
        if meter.done > MAX_UNROLL_ITERATIONS:
            raise budget_error("unroll_budget", f"the comprehension `{meter.name}` runs more than "
                               f"{MAX_UNROLL_ITERATIONS} times: more than the unrolling limit", meter.span)
        yield item
        if outer:
            meter.steps = getattr(meter, "steps", 0) + 1
            estimate = meter.start + (state.budget.made - meter.start) * meter.total // meter.steps
            if estimate > MAX_GRAPH_NODES:
                raise budget_error("unroll_budget", f"the comprehension `{meter.name}` ({meter.total} items) "
                                   f"would make about {estimate} graph nodes: more than the compile budget "
                                   f"of {MAX_GRAPH_NODES}", meter.span)


def budgeted_call(state, code, name: str, span, run):
    """Inline a call (`run()` lowers its body) within the inlining depth and node limits."""
    key = ("call", span, name)
    if key in state.budget.over:
        raise budget_error("inline_budget", state.budget.over[key], span)
    if state.depth >= MAX_INLINE_DEPTH:
        target = state.budget.outermost_call(code) or state.budget.outermost_call()
        reason = (f"inlining `{name}` goes deeper than {MAX_INLINE_DEPTH} nested calls (the inlining depth "
                  "limit; recursion without a compile-time base case?)")
        if target is None:
            raise budget_error("inline_budget", reason, span)
        raise OverBudget(target, reason)
    state.budget.made += 1  # a call costs work even when it makes no node (a recursion's base case)
    meter = Meter("call", code, state.budget.made, name=name)
    meter.span, meter.key = span, key
    state.budget.meters.append(meter)
    marks = (len(state.diagnostics), len(state.pending_warnings), state.fallbacks)
    try:
        check_inlined_nodes(state, name)
        result = run()
        check_inlined_nodes(state, name)
        return result
    except OverBudget as e:
        if e.meter is not meter:
            raise
        del state.diagnostics[marks[0]:], state.pending_warnings[marks[1]:]
        state.fallbacks = marks[2]
        state.budget.made = meter.start
        state.budget.found[key] = state.budget.over[key] = e.reason
        raise budget_error("inline_budget", e.reason, span) from None
    finally:
        state.budget.meters.remove(meter)


def check_inlined_nodes(state, name: str) -> None:
    outermost = state.budget.outermost_call()
    if outermost is not None and state.budget.made - outermost.start > MAX_INLINED_NODES:
        raise OverBudget(outermost, f"inlining `{outermost.name}` makes more than {MAX_INLINED_NODES} graph "
                                    "nodes (the inlining budget)")


def save_lowering_state(state, frame) -> tuple:
    return (state.mark(), dict(frame.env), snapshot(containers_in(frame.env)), len(state.diagnostics),
            len(state.pending_warnings), state.fallbacks, state.return_span)


def restore_lowering_state(state, saved: tuple, frame) -> None:
    mark, env, containers, n_diagnostics, n_warnings, fallbacks, return_span = saved
    state.rollback(mark)
    frame.env.clear()
    frame.env.update(env)
    restore(containers)
    del state.diagnostics[n_diagnostics:], state.pending_warnings[n_warnings:]
    state.fallbacks = fallbacks
    state.return_span = return_span
