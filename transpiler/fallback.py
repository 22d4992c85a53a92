"""Statements the graph cannot express: diagnostics (STRICT, COMPATIBLE) or fallback blocks (LAX).

When a statement fails to lower, the nodes it added are dropped and then:
- at STRICT/COMPATIBLE it becomes a diagnostic and the names it assigns are poisoned (later
  uses are silent), so one compile reports every problem;
- at LAX it becomes a *fallback block*: the original statement, compiled as a small function
  run by the interpreter inside the generated code, called with the values it reads and
  returning the values it writes; its order among effects is kept. Each one is reported once
  as a warning naming the construct, its span and why.
"""

from __future__ import annotations

import textwrap
import warnings
from typing import Optional

import libcst as cst

from ..graph.diagnostics import Diagnostic, GraphjitError, LoweringError, UnsupportedSyntaxError
from ..graph.ir import Node
from .rules import COMPATIBLE, LAX, STRICT, rule
from .values import MethodVal, RangeVal, Seq, SourceFunc, Static, Undefined, is_static


class GraphjitFallbackWarning(UserWarning):
    """A statement runs in the Python interpreter (LAX fallback) rather than in the graph."""


class Poisoned(LoweringError):
    """A name whose defining statement already failed: reported once, not again at each use."""


class Escalate(Exception):
    """The failing statement cannot stand alone (e.g. `break` of an outer loop): widen the block."""

    def __init__(self, error: GraphjitError):
        self.error = error


class FallbackLowering:
    def recover(self, stmt, error: GraphjitError, rest: list, frame, mark) -> bool:
        """Handle a statement that failed to lower; True when the rest of the block was consumed."""
        from .calls import NeedsStatic
        self.rollback(mark)
        if isinstance(error, NeedsStatic) and self.unrollable:
            raise error  # the enclosing range loop unrolls instead
        if isinstance(error, Poisoned):
            self.poison(stmt, frame, error)
            return False
        if self.level == LAX:
            return self.lower_fallback(stmt, error, rest, frame)
        self.diagnostics.append(Diagnostic.from_error(error, frame.qualname, self.level))
        self.poison(stmt, frame, error)
        return False

    def poison(self, stmt, frame, error: GraphjitError) -> None:
        from .statements import _assigned_names
        for name in _assigned_names([stmt]):
            frame.env[name] = Undefined(name, f"its assignment failed: {error.message}", poisoned=True)

    # --- fallback blocks ---------------------------------------------------------------------
    def lower_fallback(self, stmt, error: GraphjitError, rest: list, frame) -> bool:
        from .statements import _Return, _assigned_names, _Finder
        span = self.span(stmt, frame)
        if _has_outer_loop_control(stmt):
            raise error  # the enclosing loop becomes the fallback block instead
        module = frame.parsed.module
        used = _names_used(stmt)
        reads = [n for n in used if n in frame.env and not isinstance(frame.env[n], Undefined)
                 and not isinstance(frame.env[n], (SourceFunc, RangeVal, MethodVal))]
        closure_reads = [n for n in used if n not in frame.env and n in frame.closure]
        writes = [n for n in _assigned_names([stmt]) + _deleted_or_bound_names(stmt) if not n.startswith("$")]
        for n in reads:  # containers built by the compiled code may be mutated in place
            if isinstance(frame.env[n], Seq) and frame.env[n].kind == "list" and n not in writes:
                writes.append(n)
        writes = list(dict.fromkeys(writes))
        finder = _Finder((cst.Return,), stop_at_loops=False)
        stmt.visit(finder)
        returns = finder.found
        if returns and frame.loops:
            raise error  # a `return` out of a loop: the loop becomes the fallback block
        body = module.code_for_node(stmt.visit(_ReturnMarker()) if returns else stmt)
        params = reads + closure_reads
        line = span.line if span else 1
        results = ", ".join(n if n in params else f"locals().get({n!r})" for n in writes)
        tail = f"return (False, None, ({results}{',' if len(writes) == 1 else ''}))" if returns \
            else f"return ({results}{',' if len(writes) == 1 else ''})"
        code = (f"def __graphjit_fallback__({', '.join(params)}):\n" + textwrap.indent(body.rstrip("\n"), "    ")
                + "\n    " + tail + "\n")
        scope = "globals" if frame.globals is self.root_globals else self.const_object(frame.globals).path.root
        operands = [frame.env[n] for n in reads] + [self.lookup(n, frame, span) for n in closure_reads]
        attrs = {"code": code, "file": span.file if span else "<unknown>", "line": max(line - 1, 1),
                 "reads": tuple(params), "writes": tuple(writes), "returns": returns, "scope": scope}
        node = self.emit("fallback", [self.operand(v, span) for v in operands], attrs, span)
        self.fallbacks += 1
        self.warn_fallback(error, span, frame)
        offset = 2 if returns else 0
        for k, name in enumerate(writes):
            frame.env[name] = self.emit("tuple_get", [node], {"index": k + offset}, span, name=name)
        if not returns:
            return False
        flag = self.emit("tuple_get", [node], {"index": 0}, span)
        value = self.emit("tuple_get", [node], {"index": 1}, span)

        def else_fn(f):
            result = self.block(list(rest), f)
            return Static(None) if result is None else result

        result = self.branch(flag, lambda f: value, else_fn, frame, span, result_fns=(None, None))[0]
        raise _Return(result, span)

    def warn_fallback(self, error: GraphjitError, span, frame) -> None:
        code = getattr(error, "code", "GJ001")
        text = (f"[{code}] {error.message}; it runs in the Python interpreter as a fallback block "
                f"(jit_syntax_level=LAX) in `{frame.qualname}`")
        self.diagnostics.append(Diagnostic(code, "warning", error.message + " (runs as a fallback block)", span,
                                           frame.qualname, error.hint, self.level))
        if not self.quiet:
            warnings.warn_explicit(text, GraphjitFallbackWarning, span.file if span else "<unknown>",
                                   span.line if span else 0)

    def whole_function_problem(self, node, parsed):
        """A generator or coroutine cannot be compiled piecewise: all of it is the problem."""
        span = parsed.span(node)
        if node.asynchronous is not None:
            error = UnsupportedSyntaxError("asynchronous functions cannot be compiled", span, rule=rule("async"))
        elif _is_generator(node):
            error = UnsupportedSyntaxError("a generator function cannot be compiled into a graph", span,
                                           rule=rule("yield"))
        else:
            return None
        severity = "warning" if self.level == LAX else "error"
        message = error.message + (" (the function runs eagerly)" if severity == "warning" else "")
        return Diagnostic(error.code, severity, message, span, node.name.value, error.hint,
                          self.level)

    def require(self, key: str, span, message: Optional[str] = None) -> None:
        """Raise the rule's diagnostic unless the chosen level accepts the construct."""
        r = rule(key)
        if not r.accepted_at(self.level):
            raise UnsupportedSyntaxError(message or r.message, span, rule=r)


def _is_generator(node) -> bool:
    class Finder(cst.CSTVisitor):
        found = False

        def visit_Yield(self, n) -> None:
            Finder.found = True

        def visit_FunctionDef(self, n) -> bool:
            return n is node

        def visit_Lambda(self, n) -> bool:
            return False

    node.visit(Finder())
    return Finder.found


class _ReturnMarker(cst.CSTTransformer):
    """`return v` -> `return (True, v, ())` inside a fallback block (not in nested defs)."""

    def visit_FunctionDef(self, node) -> bool:
        return False

    def visit_Lambda(self, node) -> bool:
        return False

    def visit_ClassDef(self, node) -> bool:
        return False

    def leave_Return(self, original, updated):
        value = updated.value if updated.value is not None else cst.Name("None")
        return updated.with_changes(value=cst.Tuple([cst.Element(cst.Name("True")), cst.Element(value),
                                                     cst.Element(cst.Tuple([]))]))


class _Names(cst.CSTVisitor):
    def __init__(self):
        self.names: list = []

    def visit_Name(self, node) -> None:
        if node.value not in self.names:
            self.names.append(node.value)

    def visit_Attribute(self, node) -> bool:
        node.value.visit(self)
        return False

    def visit_Arg(self, node) -> bool:
        node.value.visit(self)
        return False


def _names_used(stmt) -> list:
    visitor = _Names()
    stmt.visit(visitor)
    return visitor.names


class _Bound(cst.CSTVisitor):
    """Names a statement binds that are not plain assignment targets (with/except/import/del...)."""

    def __init__(self):
        self.names: list = []

    def _add(self, target) -> None:
        from .statements import _target_names
        self.names.extend(n for n in _target_names(target) if n not in self.names)

    def visit_AsName(self, node) -> None:
        self._add(node.name)

    def visit_ImportAlias(self, node) -> None:
        if node.asname is None:
            name = node.name
            while isinstance(name, cst.Attribute):
                name = name.value
            self._add(name)

    def visit_NamedExpr(self, node) -> None:
        self._add(node.target)

    def visit_ClassDef(self, node) -> bool:
        self._add(node.name)
        return False

    def visit_Del(self, node) -> None:
        self._add(node.target)


def _deleted_or_bound_names(stmt) -> list:
    visitor = _Bound()
    stmt.visit(visitor)
    return visitor.names


class _LoopControl(cst.CSTVisitor):
    def __init__(self):
        self.depth = 0
        self.outer = False

    def on_visit(self, node) -> bool:
        if isinstance(node, (cst.FunctionDef, cst.Lambda, cst.ClassDef)):
            return False
        if isinstance(node, (cst.For, cst.While)):
            self.depth += 1
        if isinstance(node, (cst.Break, cst.Continue)) and self.depth == 0:
            self.outer = True
        return True

    def on_leave(self, node) -> None:
        if isinstance(node, (cst.For, cst.While)):
            self.depth -= 1


def _has_outer_loop_control(stmt) -> bool:
    visitor = _LoopControl()
    stmt.visit(visitor)
    return visitor.outer


__all__ = ["FallbackLowering", "GraphjitFallbackWarning", "Poisoned", "STRICT", "COMPATIBLE", "Node", "is_static"]
