"""Statements the graph cannot express: diagnostics (STRICT, COMPATIBLE) or fallback blocks (LAX).

When a statement fails to lower, the nodes it added are dropped and then:
- at STRICT/COMPATIBLE it becomes a diagnostic and the names it assigns are poisoned (later
  uses are silent), so one compile reports every problem;
- at LAX it becomes a *fallback block*: the original statement, compiled as a small function
  run by the interpreter inside the generated code, called with the values it reads and
  returning the values it writes; its order among effects is kept. Each one is reported once
  as a warning naming the construct, its span and why.

What a block needs to run as the function would have run it:
- the nested defs and lambdas it calls are part of its code (with their free names as inputs);
- a statement that cannot stand alone widens the block: `break`/`continue` of an outer loop and
  `return` inside a loop make the loop the block; `nonlocal` and `yield` inside a nested def make
  the statement calling that def the block;
- names the function declares `global` are declared in the block too;
- a name unbound on some paths arrives as its value or `UNBOUND` and is deleted before the block
  runs, and a name the block may leave unbound leaves as `UNBOUND`: reading it raises
  UnboundLocalError exactly where Python would;
- containers of the module the block names may change: the function is lowered again with
  reads of them made at call time (see `lower_function`).
"""

from __future__ import annotations

import textwrap
import types

import libcst as cst

from ... import log
from ...graph.diagnostics import Diagnostic, GraphjitError, GraphjitFallbackWarning, UnsupportedSyntaxError
from ..cst_queries import (Finder, assigned_names, bound_only_names, deleted_names, deleted_or_bound_names, first_yield,
                           has_outer_loop_control, has_own, names_used, nonlocal_names, surely_binds,
                           uses_dynamic_scope)
from ..rules import LAX, rule
from ..values import MaybeUnbound, MethodVal, RangeVal, Seq, SourceFunc, Static, UNBOUND, Undefined
from .branches import branch
from .control import NeedsStatic, Poisoned, Return


def recover(state, stmt, error: GraphjitError, rest: list, frame, mark) -> bool:
    """Handle a statement that failed to lower; True when the rest of the block was consumed."""
    state.rollback(mark)
    if isinstance(error, NeedsStatic) and state.unrollable:
        raise error  # the enclosing range loop unrolls instead
    if isinstance(error, NeedsStatic) and error.instead is not None:
        error = error.instead  # no loop to unroll: the construct itself is the problem
    if isinstance(error, Poisoned):
        poison(state, stmt, frame, error)
        return False
    for obj in _containers_named(stmt, frame):  # it may change them when it runs: read them at call time
        state.note_container_write(obj)
    if state.level == LAX:
        return lower_fallback(state, stmt, error, rest, frame)
    state.diagnostics.append(Diagnostic.from_error(error, frame.qualname, state.level))
    poison(state, stmt, frame, error)
    return False


def poison(state, stmt, frame, error: GraphjitError) -> None:
    for name in assigned_names([stmt]) + deleted_or_bound_names(stmt):
        frame.env[name] = Undefined(name, f"its assignment failed: {error.message}", poisoned=True)


def lower_fallback(state, stmt, error: GraphjitError, rest: list, frame) -> bool:
    span = state.span(stmt, frame)
    if has_outer_loop_control(stmt):
        raise error  # the enclosing loop becomes the fallback block instead
    if state.depth > 1 and (has_own(stmt, cst.Nonlocal) or has_own(stmt, cst.Yield)):
        # `nonlocal` and `yield` need their function: the statement calling it becomes the fallback block
        raise error
    module = frame.parsed.module
    used = names_used(stmt)
    defs = fallback_defs(state, used, frame)     # nested defs and lambdas the statement calls
    if state.depth > 1 and any(nonlocal_names(node) for _, node, _ in defs):
        raise error  # their `nonlocal` names may live further out: let the caller's statement run them
    for _, node, _ in defs:
        used += [n for n in names_used(node) if n not in used]
    if uses_dynamic_scope(stmt):              # eval/exec/locals/vars see every local name
        used += [n for n in frame.env if n not in used and not n.startswith("$")]
    reads = [n for n in used if n in frame.env and (not isinstance(frame.env[n], Undefined)
                                                    or frame.env[n].maybe is not None)
             and not isinstance(frame.env[n], (SourceFunc, RangeVal, MethodVal))]
    # value, or UNBOUND: deleted first
    maybe = [n for n in reads if isinstance(frame.env[n], (Undefined, MaybeUnbound))]
    unbound = [n for n in used if isinstance(frame.env.get(n), Undefined) and frame.env[n].unbound]
    closure_reads = [n for n in used if n not in frame.env and n in frame.closure]
    deleted = [n for n in deleted_names(stmt) if not n.startswith("$")]
    writes = [n for n in assigned_names([stmt]) + deleted_or_bound_names(stmt) if not n.startswith("$")]
    writes += [n for _, node, _ in defs for n in nonlocal_names(node) if n in reads]
    for n in reads:  # containers built by the compiled code may be mutated in place
        v = frame.env[n]
        if (isinstance(v, Seq) and v.kind == "list" or isinstance(v, Static) and v.path is None
                and isinstance(v.value, (list, dict))) and n not in writes:
            writes.append(n)
    # a name deleted and not bound again is unbound after the block: not a result
    rebound = set(assigned_names([stmt])) | set(bound_only_names(stmt))
    writes = [n for n in dict.fromkeys(writes) if n not in deleted or n in rebound]
    # names declared `global` in the function: the block reads and writes the module's
    declared = [n for n in used if n in frame.declared_globals]
    writes = [n for n in writes if n not in declared]
    for n in declared:
        state.written_globals.add((id(frame.globals), n))
    finder = Finder((cst.Return,), stop_at_loops=False)
    stmt.visit(finder)
    returns = finder.found
    if returns and frame.loops:
        raise error  # a `return` out of a loop: the loop becomes the fallback block
    params = reads + closure_reads
    # names that may be unbound after the block (not bound before it, not bound on every path of it)
    sure = surely_binds([stmt])
    unsure = [n for n in writes if (n not in params or n in maybe) and n not in sure]
    code, first_line = fallback_code(state, stmt, defs, params, unbound, writes, deleted, returns, module, span,
                                          maybe, unsure, declared)
    scope = "globals" if frame.globals is state.root_globals else state.const_object(frame.globals).path.root
    operands = [frame.env[n].value if isinstance(frame.env[n], MaybeUnbound)  # value, or UNBOUND
                else frame.env[n].maybe if n in maybe else frame.env[n] for n in reads] + \
        [state.lookup(n, frame, span) for n in closure_reads]
    attrs = {"code": code, "file": span.file if span else "<unknown>", "line": first_line,
             "reads": tuple(params), "writes": tuple(writes), "returns": returns, "scope": scope}
    node = state.emit("fallback", [state.operand(v, span) for v in operands], attrs, span)
    state.fallbacks += 1
    warn_fallback(state, error, span, frame)
    offset = 2 if returns else 0
    for k, name in enumerate(writes):
        value = state.emit("tuple_get", [node], {"index": k + offset}, span, name=name)
        frame.env[name] = Undefined(name, f"the fallback block at {span} may leave it unbound", maybe=value) \
            if name in unsure else value
    for name in deleted:
        if name not in writes:
            frame.env[name] = Undefined(name, f"it was deleted at {span}", unbound=True)
    if not returns:
        return False
    flag = state.emit("tuple_get", [node], {"index": 0}, span)
    value = state.emit("tuple_get", [node], {"index": 1}, span)

    def else_fn(f):
        result = state.block(list(rest), f)
        return Static(None) if result is None else result

    result = branch(state, flag, lambda f: value, else_fn, frame, span, result_fns=(None, None))[0]
    raise Return(result, span)


def fallback_defs(state, used: list, frame) -> list:
    """(name, node, frame) of the nested defs and lambdas a fallback block calls, transitively."""
    out, seen, todo = [], set(), list(used)
    while todo:
        name = todo.pop(0)
        value = frame.env.get(name)
        if name in seen or not isinstance(value, SourceFunc):
            continue
        seen.add(name)
        out.append((name, value.node, value.frame))
        todo += names_used(value.node)
    return out


def fallback_code(state, stmt, defs, params, unbound, writes, deleted, returns, module, span, maybe=(),
                  unsure=(), declared=()):
    """The fallback function's source, laid out so each piece keeps its line in the user's file."""
    results = ", ".join(f"locals().get({n!r}, {UNBOUND!r})" if n in unsure else
                        f"locals().get({n!r})" if n in deleted or n not in params else n for n in writes)
    comma = "," if len(writes) == 1 else ""
    if returns:
        stmt = stmt.visit(_ReturnMarker(len(writes)))
        tail = f"return (False, None{', ' if writes else ''}{results})"
    else:
        tail = f"return ({results}{comma})"
    pieces = []
    for name, node, def_frame in defs:
        text = def_frame.parsed.module.code_for_node(node.visit(_NoComments()))
        where = def_frame.parsed.span(node)
        if isinstance(node, cst.Lambda):
            text = f"{name} = {text}"
        elif name != node.name.value:
            text += f"\n{name} = {node.name.value}"
        pieces.append((where.line if where else 0, text))
    pieces.append((span.line if span else 1, module.code_for_node(stmt.visit(_NoComments()))))
    pieces.sort(key=lambda p: p[0])
    first = max(pieces[0][0] - 1 - (1 if unbound else 0) - len(maybe) - (1 if declared else 0), 1)
    lines = [f"def __graphjit_fallback__({', '.join(params)}):"]
    if declared:
        lines.append(f"    global {', '.join(declared)}")
    if unbound:  # names unbound here: reading one raises UnboundLocalError, as in the function
        lines.append(f"    if False: {', '.join(unbound)} = {', '.join('None' for _ in unbound)}")
    for n in maybe:  # names unbound on some paths: the graph passes UNBOUND for them there
        lines.append(f"    if type({n}) is str and {n} == {UNBOUND!r}: del {n}")
    for line, text in pieces:
        while first + len(lines) < line:
            lines.append("")
        lines.extend(textwrap.indent(text.rstrip("\n"), "    ").split("\n"))
    lines.append("    " + tail)
    return "\n".join(lines) + "\n", first


def warn_fallback(state, error: GraphjitError, span, frame) -> None:
    code = getattr(error, "code", "GJ001")
    text = (f"[{code}] {error.message}; it runs in the Python interpreter as a fallback block "
            f"(jit_syntax_level=LAX) in `{frame.qualname}`")
    state.diagnostics.append(Diagnostic(code, "warning", error.message + " (runs as a fallback block)", span,
                                       frame.qualname, error.hint, state.level))
    if not state.quiet:
        state.pending_warnings.append((text, GraphjitFallbackWarning, span.file if span else "<unknown>",
                                      span.line if span else 0))
    log.info("fallback", "%s: %s", span, text)


def whole_function_problem(state, node, parsed):
    """A generator or coroutine cannot be compiled piecewise: all of it is the problem.

    At LAX the whole function runs eagerly (a warning says so); the span is the `async`
    keyword, or the first `yield`.
    """
    if node.asynchronous is not None:
        error = UnsupportedSyntaxError("asynchronous functions cannot be compiled", parsed.span(node),
                                       rule=rule("async"))
    else:
        first = first_yield(node) if parsed.mentions(node, "yield") else None
        if first is None:
            return None
        error = UnsupportedSyntaxError("a generator function cannot be compiled into a graph",
                                       parsed.span(first), rule=rule("yield"))
    return whole_function_diagnostic(state, error, node.name.value)


def return_problem(state, error: GraphjitError, qualname: str):
    """The returned value cannot be built in the graph: a diagnostic, or at LAX the whole function eager."""
    if state.level != LAX:
        state.diagnostics.append(Diagnostic.from_error(error, qualname, state.level))
        return None
    return whole_function_diagnostic(state, error, qualname)


def whole_function_diagnostic(state, error: GraphjitError, qualname: str) -> Diagnostic:
    if state.level != LAX:
        return Diagnostic.from_error(error, qualname, state.level)
    code = getattr(error, "code", "GJ001")
    message = error.message + " (the function runs eagerly)"
    if not state.quiet:
        state.pending_warnings.append((f"[{code}] {message} (jit_syntax_level=LAX) in `{qualname}`",
                                      GraphjitFallbackWarning, error.span.file if error.span else "<unknown>",
                                      error.span.line if error.span else 0))
    return Diagnostic(code, "warning", message, error.span, qualname, error.hint, state.level)


class _ReturnMarker(cst.CSTTransformer):
    """`return v` -> `return (True, v, None, ...)` inside a fallback block (not in nested defs).

    The Nones stand for the block's results, so every path returns a tuple of the same length.
    """

    def __init__(self, writes: int = 0):
        super().__init__()
        self.writes = writes

    def visit_FunctionDef(self, node) -> bool:
        return False

    def visit_Lambda(self, node) -> bool:
        return False

    def visit_ClassDef(self, node) -> bool:
        return False

    def leave_Return(self, original, updated):
        value = updated.value if updated.value is not None else cst.Name("None")
        if isinstance(value, cst.Tuple) and not value.lpar:  # `return a, b` returns one tuple
            value = value.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])
        pad = [cst.Element(cst.Name("None")) for _ in range(self.writes)]
        return updated.with_changes(value=cst.Tuple([cst.Element(cst.Name("True")), cst.Element(value)] + pad))


class _NoComments(cst.CSTTransformer):
    """Comments dropped from a fallback block's code (its lines stay where they were)."""

    def leave_TrailingWhitespace(self, original, updated):
        return updated.with_changes(comment=None)

    def leave_EmptyLine(self, original, updated):
        return updated.with_changes(comment=None)


def _containers_named(stmt, frame) -> list:
    """Lists, dicts and sets of the module (or closure) a statement names: `LOG`, `BOX.items`."""
    out = []

    def resolve(node):
        if isinstance(node, cst.Name):
            name = node.value
            if name in frame.env:
                return None
            if name in frame.closure:
                try:
                    return frame.closure[name].cell_contents
                except ValueError:
                    return None
            return frame.globals.get(name)
        if isinstance(node, cst.Attribute):
            owner = resolve(node.value)
            if owner is None or isinstance(owner, (list, dict, set)):
                return None
            if isinstance(owner, types.ModuleType):   # never through a module's `__getattr__` (an import)
                return vars(owner).get(node.attr.value)
            try:
                return getattr(owner, node.attr.value, None)
            except Exception:  # noqa: BLE001 - a property that fails is not a container
                return None
        return None

    class Finder(cst.CSTVisitor):
        def visit_Name(self, node) -> None:
            value = resolve(node)
            if isinstance(value, (list, dict, set)):
                out.append(value)

        def visit_Attribute(self, node) -> None:
            value = resolve(node)
            if isinstance(value, (list, dict, set)):
                out.append(value)

    stmt.visit(Finder())
    return out
