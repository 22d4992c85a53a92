"""Lowering statements: assignment, `if`, `for`, `while`, `return`, nested `def`.

Branches on compile-time values are decided and loops over compile-time sequences unrolled
here; on run-time values they become region nodes (`if`, `for_range`, `while`) whose merged
and loop-carried values are the names the statement assigns (the SSA phis).
"""

from __future__ import annotations

import operator
from typing import Any, Callable, Optional

import libcst as cst
import numpy as np

from ..graph import ops as _ops
from ..graph.diagnostics import GraphjitError, LoweringError, UnsupportedSyntaxError
from ..graph.ir import Graph, Node
from ..graph.literals import Index
from ..graph.shape_rules import after_metadata_write
from ..graph.types import ArrayType, TupleType, join
from .budget import MAX_UNROLL_ITERATIONS, ItemTable
from .calls import NeedsStatic
from .scope import RegionGroup, Scope
from .rules import LAX, STATEMENT_RULES, rule
from .cst_queries import target_names
from .values import UNBOUND, MaybeUnbound, RangeVal, Seq, SourceFunc, Static, Undefined, is_static, static_value

UNROLL_LIMIT = MAX_UNROLL_ITERATIONS  # a loop unrolls up to this many times (transpiler/budget.py)

AUG = {cst.AddAssign: "add", cst.SubtractAssign: "sub", cst.MultiplyAssign: "mul",
       cst.DivideAssign: "truediv", cst.FloorDivideAssign: "floordiv", cst.ModuloAssign: "mod",
       cst.PowerAssign: "pow", cst.MatrixMultiplyAssign: "matmul", cst.LeftShiftAssign: "lshift",
       cst.RightShiftAssign: "rshift", cst.BitAndAssign: "bitand", cst.BitOrAssign: "bitor",
       cst.BitXorAssign: "bitxor"}


class _Return(Exception):
    """Internal: a `return` reached on every path of the block being lowered."""

    def __init__(self, value, span=None):
        self.value = value
        self.span = span


class StatementLowering:
    # --- blocks ----------------------------------------------------------------------------
    def block(self, stmts: list, frame) -> Optional[Any]:
        """Lower statements in order; the returned value if the block returns, else None."""
        try:
            self.statements(stmts, frame)
        except _Return as r:
            self.return_span = r.span
            return r.value
        return None

    def statements(self, stmts: list, frame) -> None:
        """Lower a block; stops early at `break`/`continue`/`return`/`raise` (see NOTE [loop control])."""
        for k, stmt in enumerate(stmts):
            if _flag_set(frame) and self.control_pending(stmts[k:], frame):  # (no slice per statement)
                return
            mark = self.mark()
            saved = _save(_containers(frame.env))
            try:
                if not frame.loops and isinstance(stmt, cst.If) and frame.parsed.mentions(stmt, "return", "raise") \
                        and _contains_return(stmt):
                    test = self.expr(stmt.test, frame)
                    if not (is_static(test) or isinstance(test, Seq)):
                        # A run-time branch that returns: the rest of the function runs inside both
                        # branches, so every path ends in a return and the `if` yields the result.
                        self.returning_if(stmt, test, stmts[k + 1:], frame)
                        return
                    self.decided_if(stmt, test, frame)
                else:
                    self.statement(stmt, frame)
            except _Stop:
                return
            except GraphjitError as error:
                _restore(saved)  # a failed statement leaves compile-time lists and dicts as they were
                if self.recover(stmt, error, stmts[k + 1:], frame, mark):
                    return
        if not frame.loops:
            self.control_pending([], frame)

    # NOTE [loop control]: inside loops, `break`, `continue` and `return` set flags in the frame
    # (`$brk<depth>`, `$cont<depth>`, `$ret` with `$rv`) and stop the current block; the rest of
    # an enclosing block runs under `if not (flags)`, loops test the flags, and after the
    # outermost loop a set `$ret` returns `$rv`. Flags known at compile time cost nothing; run-time
    # flags are ordinary carried values of the loop regions.
    def control_pending(self, rest: list, frame) -> bool:
        """Handle flags set by earlier statements; True when the rest of the block was consumed."""
        env = frame.env
        if frame.loops:
            depth = len(frame.loops)
            flags = [env.get(f"$brk{depth}"), env.get(f"$cont{depth}"), env.get("$ret")]
            flags = [f for f in flags if f is not None and not (is_static(f) and not static_value(f))]
            if not flags:
                return False
            if any(is_static(f) for f in flags):
                return True  # a flag surely set: the rest of this block is dead
            if not rest:
                return True
            span = frame.loops[-1]
            go_on = self.emit("not", [self.any_of(flags, span)], span=span)

            def then_fn(f):
                self.clear_flags(f, depth)  # on this path no flag is set
                self.statements(rest, f)

            self.branch(go_on, then_fn, lambda f: None, frame, span)
            return True
        ret = env.get("$ret")
        if ret is None or (is_static(ret) and not static_value(ret)):
            return False
        value = env.get("$rv", Static(None))
        if is_static(ret):
            raise _Return(value)
        span = frame.ret_span

        def then_fn(f):
            return f.env.get("$rv", Static(None))

        def else_fn(f):
            f.env["$ret"] = Static(False)
            result = self.block(list(rest), f)
            return Static(None) if result is None else result

        result = self.branch(ret, then_fn, else_fn, frame, span, result_fns=(None, None))[0]
        raise _Return(result)

    @staticmethod
    def clear_flags(frame, depth: int) -> None:
        for name in (f"$brk{depth}", f"$cont{depth}", "$ret"):
            if name in frame.env:
                frame.env[name] = Static(False)

    def any_of(self, flags: list, span):
        acc = flags[0]
        for f in flags[1:]:
            acc = self.emit("bitor", [acc, f], span=span)
        return acc

    def mark(self) -> tuple:
        return (self.scope, len(self.scope.graph.nodes))

    def rollback(self, mark: tuple) -> None:
        """Drop the nodes a failed statement added (its region graphs were never attached)."""
        scope, count = mark
        self.scope = scope
        graph = scope.graph
        for node in reversed(graph.nodes[count:]):
            graph.nodes.remove(node)
            graph._edges.remove_node(node)

    def statement(self, stmt, frame) -> None:
        if isinstance(stmt, cst.SimpleStatementLine):
            for small in stmt.body:
                self.statement(small, frame)
            return
        method = getattr(self, "stmt_" + type(stmt).__name__, None)
        if method is None:
            self.unsupported_node(stmt, frame, STATEMENT_RULES)
        method(stmt, frame)

    def unsupported_node(self, node, frame, table: dict):
        from .rules import BY_KEY
        key = table.get(type(node).__name__)
        r = BY_KEY.get(key) if key else None
        message = r.message if r else f"{_stmt_name(node)} is not supported in a graph"
        raise UnsupportedSyntaxError(message, self.span(node, frame), rule=r)

    def stmt_Global(self, stmt: cst.Global, frame) -> None:
        """`global n`: reads and writes of `n` go to the module at call time (COMPATIBLE)."""
        self.require("global", self.span(stmt, frame))
        for item in stmt.names:
            frame.declared_globals.add(item.name.value)

    # --- simple statements -----------------------------------------------------------------
    def stmt_Pass(self, stmt, frame) -> None:
        pass

    def stmt_Expr(self, stmt: cst.Expr, frame) -> None:
        if isinstance(stmt.value, (cst.SimpleString, cst.ConcatenatedString)):
            return  # a docstring
        value = self.expr(stmt.value, frame)
        del value  # pure values are dropped by DCE; effects stay in the graph

    def stmt_Return(self, stmt: cst.Return, frame) -> None:
        value = Static(None) if stmt.value is None else self.expr(stmt.value, frame)
        if frame.loops:
            frame.env["$ret"] = Static(True)
            frame.env["$rv"] = value
            frame.ret_span = self.span(stmt, frame)
            raise _Stop
        raise _Return(value, self.span(stmt, frame))

    def stmt_Break(self, stmt, frame) -> None:
        frame.env[f"$brk{len(frame.loops)}"] = Static(True)
        raise _Stop

    def stmt_Continue(self, stmt, frame) -> None:
        frame.env[f"$cont{len(frame.loops)}"] = Static(True)
        raise _Stop

    def stmt_Raise(self, stmt: cst.Raise, frame) -> None:
        """`raise E(args)`: an ordered effect that ends this path (as `return` does)."""
        span = self.span(stmt, frame)
        if stmt.exc is None:
            raise UnsupportedSyntaxError("a bare `raise` (re-raise) needs an `except` block", span,
                                         rule=rule("try"))
        if stmt.cause is not None:
            raise UnsupportedSyntaxError("`raise ... from ...` is not supported in a graph", span, rule=rule("try"))
        exc = stmt.exc
        if isinstance(exc, cst.Call):
            callee = self.expr(exc.func, frame)
            args = [self.expr(a.value, frame) for a in exc.args if a.keyword is None and not a.star]
            if any(a.keyword is not None or a.star for a in exc.args):
                raise UnsupportedSyntaxError("keyword arguments of an exception are not supported", span,
                                             rule=rule("try"))
        else:
            callee, args = self.expr(exc, frame), []
        if not (isinstance(callee, Static) and isinstance(callee.value, type)
                and issubclass(callee.value, BaseException)):
            raise LoweringError("`raise` needs an exception class known at compile time", span)
        self.emit("raise", [self.exception_class(callee)] + list(args), span=span)
        if frame.loops:
            raise _Stop
        raise _Return(Static(None), span)

    def exception_class(self, callee: Static):
        """Builtin exceptions by name; user exception classes as compile-time objects."""
        import builtins
        cls = callee.value
        if getattr(builtins, cls.__name__, None) is cls:
            return Static(f"builtins.{cls.__name__}")
        return callee

    def stmt_Assert(self, stmt: cst.Assert, frame) -> None:
        span = self.span(stmt, frame)
        test = self.expr(stmt.test, frame)
        msg = None if stmt.msg is None else self.expr(stmt.msg, frame)
        if is_static(test) and msg is None or is_static(test) and bool(static_value(test)):
            if not static_value(test):
                self.emit("raise", [Static("builtins.AssertionError")], span=span)
            return
        if msg is not None and not (is_static(msg) or isinstance(msg, Node)):
            msg = self.operand(msg, span)
        self.emit("assert", [test] + ([msg] if msg is not None else []), span=span)

    def stmt_Assign(self, stmt: cst.Assign, frame) -> None:
        value = self.expr(stmt.value, frame)
        for target in stmt.targets:
            self.assign_target(target.target, value, frame)

    def stmt_AnnAssign(self, stmt: cst.AnnAssign, frame) -> None:
        if stmt.value is not None:
            self.assign_target(stmt.target, self.expr(stmt.value, frame), frame)

    def stmt_AugAssign(self, stmt: cst.AugAssign, frame) -> None:
        op = AUG[type(stmt.operator)]
        span = self.span(stmt, frame)
        target = stmt.target
        if isinstance(target, cst.Name):
            current = self.lookup(target.value, frame, span)
            self.assign_name(target.value, self.augmented(op, current, self.expr(stmt.value, frame), span), frame)
        elif isinstance(target, cst.Subscript):
            base = self.expr(target.value, frame)
            key = self.subscript_key(target, frame)
            current = self.subscript(base, key, span)
            updated = self.augmented(op, current, self.expr(stmt.value, frame), span)
            self.store_item(base, key, updated, span)
        elif isinstance(target, cst.Attribute):
            self.require("setattr", span)
            obj = self.expr(target.value, frame)
            current = self.attribute(obj, target.attr.value, span)
            updated = self.augmented(op, current, self.expr(stmt.value, frame), span)
            self.emit("setattr", [self.object_operand(obj, span), updated], {"name": target.attr.value}, span)
        else:
            raise UnsupportedSyntaxError("this augmented assignment target is not supported", span)

    def augmented(self, op: str, current, value, span):
        """`x op= v`: in place on arrays (as Python does: aliases see it), a new value otherwise."""
        from .expressions import BINARY
        fn = next(f for (name, f) in BINARY.values() if name == op)
        if is_static(current) and is_static(value):
            return self.binary(op, fn, current, value, span)
        if isinstance(current, Seq):
            return self.binary(op, fn, current, value, span)
        return self.emit("inplace", [current, value], {"op": op}, span)

    # --- assignment targets ----------------------------------------------------------------
    def assign_target(self, target, value, frame) -> None:
        span = self.span(target, frame)
        if isinstance(target, cst.Name):
            self.assign_name(target.value, value, frame)
        elif isinstance(target, (cst.Tuple, cst.List)):
            self.unpack(target, value, frame, span)
        elif isinstance(target, cst.Subscript):
            base = self.expr(target.value, frame)
            self.store_item(base, self.subscript_key(target, frame), value, span)
        elif isinstance(target, cst.Attribute):
            self.require("setattr", span)
            obj = self.expr(target.value, frame)
            self.emit("setattr", [self.object_operand(obj, span), value], {"name": target.attr.value}, span)
            self.refresh_array(obj, target.attr.value, value, frame, span)
        else:
            raise UnsupportedSyntaxError(f"assignment to {type(target).__name__} is not supported", span)

    def refresh_array(self, obj, name: str, value, frame, span) -> None:
        """After `a.shape = s` (`dtype`, `strides`, `a.resize(s)`), names bound to `a` see its new type.

        The write changes the array object itself, so every name bound to it is rebound to a
        `refresh` of it: reads after the write (`a.shape`, `np.zeros(a.shape)`) are never folded
        from the type it had before.
        """
        if isinstance(obj, Static) and isinstance(obj.value, np.ndarray) and name in _ops.RETYPING:
            obj = self.latest_version(self.array_value(obj, span))  # `d["a"].shape = s`: read at call time
        if not isinstance(obj, Node) or name not in _ops.RETYPING or not isinstance(obj.type, ArrayType):
            return
        path = self.path_of.get(obj.id)
        if path is not None and self.scope.graph is not self.graph:
            # reads of this path outside this region cannot see the refresh made here: lower again
            self.retyped_paths.setdefault(path, set()).add(name)
        known = static_value(value) if value is not None and is_static(value) else None
        if isinstance(known, list):
            known = tuple(known)
        new_type = after_metadata_write(obj.type, name, known)
        refreshed = self.emit("refresh", [obj], span=span, name=obj.name, type=new_type)
        if path is not None:
            self.path_of[refreshed.id] = path
        self.refreshed[obj.id] = refreshed  # other paths to it (a caller's name, a container item)
        for key, bound in list(frame.env.items()):
            if bound is obj:
                frame.env[key] = refreshed

    def assign_name(self, name: str, value, frame) -> None:
        if name in frame.declared_globals:
            self.written_globals.add((id(frame.globals), name))
            self.emit("store_global", [value], {"name": name, "scope": self.globals_scope(frame)})
            return
        if isinstance(value, Node) and not value.name and value.op not in ("const", "arg", "param"):
            value.name = name
        frame.env[name] = value

    def globals_scope(self, frame):
        """How generated code reaches this frame's module globals: `_g`, or a compile-time object."""
        if frame.globals is self.root_globals:
            return "globals"
        return self.const_object(frame.globals).path.root

    def unpack(self, target, value, frame, span) -> None:
        elements = list(target.elements)
        if isinstance(value, Node) and isinstance(value.type, TupleType):
            items = [self.emit("tuple_get", [value], {"index": k}, span) for k in range(len(value.type.items))]
        else:
            items = self.iterate(value, span)
        stars = [k for k, el in enumerate(elements) if isinstance(el, cst.StarredElement)]
        if len(items) < len(elements) - len(stars) or not stars and len(items) != len(elements):
            # Python raises ValueError when the statement runs: so does the compiled code
            self.raise_later(_unpack_error(len(items), len(elements), bool(stars)), span)
            if frame.loops:  # the rest of this path is dead, as after `raise`
                raise _Stop
            raise _Return(Static(None), span)
        if stars:
            s = stars[0]
            n_after = len(elements) - s - 1
            middle = items[s:len(items) - n_after]
            items = items[:s] + [Seq(middle, "list")] + items[len(items) - n_after:]
        for el, item in zip(elements, items):
            self.assign_target(el.value, item, frame)

    def subscript_key(self, target: cst.Subscript, frame):
        items = [self.subscript_item(el.slice, frame) for el in target.slice]
        return items[0] if len(items) == 1 else Seq(items, "tuple")

    def store_item(self, base, key, value, span) -> None:
        """`x[key] = value`: an ordered in-place write, exactly as eager Python does it.

        Lists and dicts built by the compiled code change at compile time; containers held outside
        the function (globals, attributes) are written at each call (COMPATIBLE).
        """
        if isinstance(base, Seq) or isinstance(base, Static) and base.path is None \
                and isinstance(base.value, (list, dict)):
            self.store_static_item(base, key, value, span)
            return
        if isinstance(base, Node) and base.id in self.param_objects and not isinstance(base.type, ArrayType):
            self.note_container_write(self.param_objects.get(base.id))
            self.require("mutate_object", span, "assigning an item of a container held outside the function")
        if isinstance(base, Static) and not hasattr(base.value, "shape"):
            self.note_container_write(base.value)
            if not hasattr(type(base.value), "__setitem__"):
                self.raise_later(TypeError(f"'{type(base.value).__name__}' object does not support item "
                                           "assignment"), span)
                return
            self.require("mutate_object", span, "assigning an item of a container held outside the function")
            base = self.object_operand(base, span)
        elif not isinstance(base, (Node, Static)):
            raise UnsupportedSyntaxError("item assignment is supported on arrays, lists and dicts only", span)
        from .expressions import _ListIndex
        index, operands = self.index_of(key, span)
        operands = [self.emit("list", o.items, span=span) if isinstance(o, _ListIndex) else o for o in operands]
        self.emit("setitem", [base, value] + operands, {"index": Index(_shift(index))}, span)

    def store_static_item(self, base, key, value, span) -> None:
        """`xs[k] = v` on a list (dict) of compile-time structure: the structure changes now."""
        if not is_static(key) or isinstance(key, tuple):
            raise NeedsStatic("assigning an item of a list or dict built here needs a compile-time key", span)
        k = static_value(key)
        if isinstance(base, Seq):
            if base.kind == "tuple":
                self.raise_later(TypeError("'tuple' object does not support item assignment"), span)
                return
            try:
                if isinstance(k, slice):
                    base.items[k] = self.iterate(value, span)
                else:
                    base.items[k] = value
            except (IndexError, TypeError, ValueError) as e:
                self.raise_later(e, span)
            return
        if isinstance(base.value, list) and not is_static(value):
            raise LoweringError("this list holds compile-time values only; build it with [...] to store "
                                "run-time values in it", span)
        base.value[k] = static_value(value) if isinstance(base.value, list) else value

    # --- nested functions ------------------------------------------------------------------
    def stmt_FunctionDef(self, stmt: cst.FunctionDef, frame) -> None:
        if stmt.asynchronous is not None:
            raise UnsupportedSyntaxError(rule("async").message, self.span(stmt, frame), rule=rule("async"))
        if stmt.decorators:
            first, last = self.span(stmt.decorators[0], frame), self.span(stmt, frame)
            span = type(first)(first.file, first.line, first.col, last.end_line, last.end_col) if first and last \
                else last
            raise UnsupportedSyntaxError(rule("decorated_def").message, span, rule=rule("decorated_def"))
        frame.env[stmt.name.value] = SourceFunc(stmt, frame, stmt.name.value, self.param_defaults(stmt.params, frame))

    # --- if --------------------------------------------------------------------------------
    def stmt_If(self, stmt: cst.If, frame) -> None:
        test = self.expr(stmt.test, frame)
        if is_static(test) or isinstance(test, Seq):
            self.decided_if(stmt, test, frame)
            return
        span = self.span(stmt, frame)
        orelse = _else_body(stmt)
        self.branch(test, lambda f: self.statements(_body(stmt), f), lambda f: self.statements(orelse, f),
                    frame, span, stmt=stmt)

    def decided_if(self, stmt: cst.If, test, frame) -> None:
        truth = bool(static_value(test)) if is_static(test) else bool(test.items)
        self.statements(_body(stmt) if truth else _else_body(stmt), frame)

    def branch(self, test, then_fn: Callable, else_fn: Callable, frame, span,
               result_fns: Optional[tuple] = None, stmt=None) -> list:
        """Lower a run-time `if`: both branches in regions, names they assign merged.

        `result_fns` (for ternaries and returning branches) give one extra value per branch,
        yielded first; the list of those results (one) is returned.
        """
        outer = self.scope
        cond = self.operand(test, span)
        graphs = [Graph(f"{outer.graph.name}.then", label="then"), Graph(f"{outer.graph.name}.else", label="else")]
        group = RegionGroup(graphs, outer)
        envs, results = [], []
        # lists and dicts built at compile time: each branch starts from their state before the `if`
        containers = _containers(frame.env)
        before = _save(containers)
        states, result_spans = [], []
        for k, fn in enumerate((then_fn, else_fn)):
            self.scope = Scope(graphs[k], group, k)
            branch_frame = _fork(frame)
            self.return_span = None
            try:
                value = fn(branch_frame)
                result_spans.append(self.return_span)  # where a returned value comes from
                results.append(_copy_structure(value))
                states.append(_save(containers))
            finally:
                self.scope = outer
                _restore(before)
            envs.append(branch_frame.env)
        names = _changed_names(frame.env, envs)
        merged: list[tuple[Any, list]] = self.merge_containers(containers, before, states, frame, span)
        maybe_names = set()
        # LAX: a name one branch of the `if` statement binds, mentioned after it, flows as value-or-UNBOUND
        lax_names = set(_used_outside(stmt, frame, names)) if self.level == LAX and stmt is not None else set()
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
            if all(is_static(v) for v in values) and _same_static(values):
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
            self.scope = Scope(g, group, k)
            try:
                g.set_outputs([self.maybe_operand(v, span) if maybe_names and (v is None or isinstance(v, Undefined))
                               else self.operand(v, (result_spans[k] or span) if j == 0 and with_result else span)
                               for j, v in enumerate(yields[k])])
            except LoweringError as e:
                raise e.add_context("while merging the branches of an `if`")
            finally:
                self.scope = outer
        for a, b in zip(graphs[0].outputs, graphs[1].outputs):
            out_types.append(join(a.type, b.type))
        node = self.scope.graph.add("if", [cond] + [outer.local(v) for v in group.outer], {},
                                    TupleType(tuple(out_types)), span, regions=graphs)
        outs = [self.scope.graph.add("tuple_get", [node], {"index": k}, t, span)
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
                self.assign_name(name, value, frame)
        return outs[:offset]

    def merge_containers(self, containers: list, before: list, states: list, frame, span) -> list:
        """Lists/dicts both branches left with the same shape: their differing items become phis.

        A list (dict) whose length (keys) depends on the run-time branch cannot be followed by the
        graph: that is a lowering error (at LAX the `if` runs as a fallback block).
        """
        merged = []
        for obj, old, then_state, else_state in zip(containers, before, states[0], states[1]):
            old_items, new = old[1], (then_state[1], else_state[1])
            if all(_same_items(old_items, n) for n in new):
                continue
            name = _name_of(obj, frame.env)
            if isinstance(obj, Seq):
                if len(new[0]) != len(new[1]):
                    raise LoweringError(f"the list `{name}` has a different length after each branch of this "
                                        "run-time `if`", span, hint="make both branches add the same number of "
                                        "items, or collect the values in an array")
                obj.items[:] = list(new[0])
                for k, (a, b) in enumerate(zip(*new)):
                    if not _same_value(a, b):
                        merged.append((_item_setter(obj.items, k), [a, b]))
            else:
                if list(new[0]) != list(new[1]):
                    raise LoweringError(f"the dict `{name}` has different keys after each branch of this "
                                        "run-time `if`", span, hint="set the same keys in both branches")
                obj.value.clear()
                obj.value.update(new[0])
                for key in new[0]:
                    a, b = (v if isinstance(v, (Node, Static, Seq)) else Static(v) for v in (new[0][key], new[1][key]))
                    if not _same_value(a, b):
                        merged.append((_item_setter(obj.value, key), [a, b]))
        return merged

    def check_loop_containers(self, saved: list, frame, span) -> None:
        """A compile-time list or dict may not change inside a run-time loop (the body runs once here)."""
        for obj, old in saved:
            if not _same_items(old, _items(obj)):
                kind = "list" if isinstance(obj, Seq) else "dict"
                raise _container_changed(f"the {kind} `{_name_of(obj, frame.env)}` changes inside this run-time "
                                         "loop", span)

    def ternary(self, test, then_fn, else_fn, frame, span):
        return self.branch(test, then_fn, else_fn, frame, span, result_fns=(then_fn, else_fn))[0]

    def returning_if(self, stmt: cst.If, test, rest: list, frame) -> None:
        span = self.span(stmt, frame)
        orelse = _else_body(stmt)

        def run(body):
            def fn(f):
                value = self.block(list(body) + list(rest), f)
                return Static(None) if value is None else value
            return fn

        result = self.branch(test, run(_body(stmt)), run(orelse), frame, span, result_fns=(None, None))[0]
        raise _Return(result)

    # --- for -------------------------------------------------------------------------------
    def stmt_For(self, stmt: cst.For, frame) -> None:
        span = self.span(stmt, frame)
        if stmt.orelse is not None:
            raise UnsupportedSyntaxError("`for ... else` is not supported in a graph", span, rule=rule("for_else"))
        iterable = self.expr(stmt.iter, frame)
        tried_runtime = False  # a run-time loop was tried and needs its items at compile time
        if isinstance(iterable, Static) and isinstance(iterable.value, range):
            r = iterable.value
            try:
                return self.range_loop(stmt, RangeVal(Static(r.start), Static(r.stop), Static(r.step)), frame)
            except _NeedsUnroll:
                tried_runtime = True
        if isinstance(iterable, RangeVal):
            try:
                return self.range_loop(stmt, iterable, frame)
            except _NeedsUnroll as e:
                raise _cannot_unroll(e.args[0], span) from None
        if isinstance(iterable, Node) and not _small_static_rows(iterable):
            try:
                return self.rows_loop(stmt, iterable, frame)
            except _NeedsUnroll as e:
                if not _static_rows(iterable):
                    raise _cannot_unroll(e.args[0], span) from None
                tried_runtime = True
        items, count = self.loop_items(iterable, span, runtime=not tried_runtime)
        self.budgeted_loop(stmt, items, count, frame, span, runtime=not tried_runtime)  # transpiler/budget.py

    def unrolled_loop(self, stmt: cst.For, items: list, frame) -> None:
        span = self.span(stmt, frame)
        body = list(stmt.body.body)
        control = _has_loop_control(body)
        self.enter_loop(frame, span, control, body)
        try:
            self.unroll_items(stmt, items, frame, control)
        finally:
            self.exit_loop(frame)

    def unroll_items(self, stmt, items: list, frame, control: bool) -> None:
        depth = len(frame.loops)
        for k, item in enumerate(items):
            if control:
                flags = [frame.env.get(f"$brk{depth}"), frame.env.get("$ret")]
                flags = [f for f in flags if f is not None and not (is_static(f) and not static_value(f))]
                if any(is_static(f) for f in flags):
                    return
                if flags:  # run the remaining iterations only while no flag is set
                    span = frame.loops[-1]
                    go_on = self.emit("not", [self.any_of(flags, span)], span=span)
                    rest = items[k:]

                    def then_fn(f):
                        self.clear_flags(f, depth)
                        self.unroll_items(stmt, rest, f, control)

                    self.branch(go_on, then_fn, lambda f: None, frame, span)
                    return
                frame.env[f"$cont{depth}"] = Static(False)
            self.assign_target(stmt.target, item, frame)
            self.statements(list(stmt.body.body), frame)
            self.count_iteration(stmt)  # stops unrolling past the compile budget (transpiler/budget.py)

    def enter_loop(self, frame, span, control: bool, body: list = ()) -> None:
        frame.loops.append(span)
        if control:
            depth = len(frame.loops)
            frame.env[f"$brk{depth}"] = Static(False)
            frame.env[f"$cont{depth}"] = Static(False)
            if _contains(body, (cst.Return,)):
                frame.env.setdefault("$ret", Static(False))
                frame.env.setdefault("$rv", Static(None))

    def exit_loop(self, frame) -> None:
        depth = len(frame.loops)
        frame.env.pop(f"$brk{depth}", None)
        frame.env.pop(f"$cont{depth}", None)
        frame.loops.pop()

    def rows_loop(self, stmt: cst.For, array: Node, frame) -> None:
        """`for row in x` over an array of unknown length: a range loop over `len(x)`."""
        span = self.span(stmt, frame)
        if not isinstance(array.type, ArrayType):
            raise LoweringError(f"iterating over a run-time Python object ({array.type}) needs the Python "
                                "interpreter", span, hint="iterate over an array, or a tuple or list built here")
        length = self.emit("dim", [array], {"axis": 0}, span)
        self.range_loop(stmt, RangeVal(Static(0), length, Static(1)), frame, rows_of=array)

    def range_loop(self, stmt: cst.For, rng: RangeVal, frame, rows_of: Optional[Node] = None) -> None:
        span = self.span(stmt, frame)
        body = list(stmt.body.body)
        control = _has_loop_control(body)
        loop_vars = target_names(stmt.target)
        before = {n: frame.env.get(n) for n in loop_vars}
        bound_before = all(v is not None and not isinstance(v, Undefined) for v in before.values())
        trips = _static_trips(rng)
        if trips is None and rows_of is not None and _static_rows(rows_of):
            trips = rows_of.type.shape[0]
        runs = trips is not None and trips > 0
        # After the loop its variables hold their last values, as in Python: surely bound when the
        # loop runs at least once or they were bound before it. How (only for names used after it):
        # - a loop without break whose body does not rebind them, known to run: the last item, now;
        # - otherwise they are carried by the loop (from their value before it, or a placeholder).
        keep_vars = (bound_before or runs) and bool(_used_outside(stmt, frame, loop_vars))
        rebinds = bool(set(loop_vars) & set(_assigned_names(body)))
        last_item = keep_vars and not control and runs and not rebinds
        carry = keep_vars and not last_item
        self.enter_loop(frame, span, control, body)
        self.unrollable += 1
        try:
            lax_targets = not keep_vars and self.level == LAX
            if control:
                self.flag_range_loop(stmt, rng, frame, rows_of, carry_target=carry, lax_targets=lax_targets)
            else:
                self.plain_range_loop(stmt, rng, frame, rows_of, runs=runs, lax_targets=lax_targets,
                                      carry_target=carry)
        finally:
            self.unrollable -= 1
            self.exit_loop(frame)
        if last_item:
            self.bind_last_item(stmt, rng, trips, rows_of, frame, span)
        elif not keep_vars:
            for n in loop_vars:
                old = frame.env.get(n)
                frame.env[n] = Undefined(n, f"it is the variable of the run-time loop at {span}, which may run "
                                            "zero times", maybe=old.maybe if isinstance(old, Undefined) else None)
        self.undefine_loop_locals(body, frame, span)

    def bind_last_item(self, stmt, rng: RangeVal, trips, rows_of, frame, span) -> None:
        """The loop variables after a loop that surely ran, without break: its last item."""
        last = Static(static_value(rng.start) + (trips - 1) * static_value(rng.step))
        self.bind_loop_target(stmt, last, rows_of, frame, span)

    def bind_loop_target(self, stmt, index, rows_of, frame, span) -> None:
        if rows_of is None:
            self.assign_target(stmt.target, index, frame)
        elif isinstance(rows_of, ItemTable):  # a compile-time sequence past the unrolling budget
            self.assign_target(stmt.target, rows_of.item(self, index, span), frame)
        else:
            row = self.emit("getitem", [rows_of, index], {"index": Index([_ref(1)])}, span)
            self.assign_target(stmt.target, row, frame)

    def plain_range_loop(self, stmt, rng: RangeVal, frame, rows_of, runs: bool = False,
                         lax_targets: bool = False, carry_target: bool = False) -> None:
        """`runs`: the loop surely runs: names first assigned in its body are bound after it (carried).
        `carry_target`: the loop variables are carried too (their last values after the loop)."""
        span = self.span(stmt, frame)
        body = list(stmt.body.body)
        targets = target_names(stmt.target)
        placeholders = [n for n in _assigned_names(body) if n not in targets and not n.startswith("$")
                        and (n not in frame.env or isinstance(frame.env[n], Undefined))] if runs else []
        placeholders = _used_outside(stmt, frame, placeholders) if placeholders else []
        if carry_target:
            placeholders += [n for n in targets if n not in frame.env or isinstance(frame.env[n], Undefined)]
        for n in placeholders:  # UNBOUND until the body assigns it: reading it before raises UnboundLocalError
            frame.env[n] = MaybeUnbound(Static(UNBOUND))
        carried = self.carried_names(body, frame, exclude=() if carry_target else targets, stmt=stmt,
                                     maybe_extra=targets if lax_targets else (),
                                     extra=targets if carry_target else ())
        index_name = stmt.target.value if rows_of is None and isinstance(stmt.target, cst.Name) else "i"

        def body_fn(f, index):
            self.bind_loop_target(stmt, index, rows_of, f, span)
            self.statements(body, f)

        try:
            outs, types, group, g, unsure = self.loop_region(frame, span, carried, body_fn, index_name,
                                                             exclude=() if carry_target else targets,
                                                             placeholders=placeholders)
        finally:
            for n in placeholders:
                if n not in carried:
                    frame.env.pop(n, None)
        bounds = [self.operand(b, span) for b in (rng.start, rng.stop, rng.step)]
        init_nodes = [self.maybe_operand(frame.env[n], span) for n in carried]
        node = self.scope.graph.add("for_range", bounds + init_nodes + [self.scope.local(v) for v in group.outer],
                                    {"carried": len(carried)}, TupleType(tuple(types)), span, regions=[g])
        self.bind_results(node, carried, types, frame, span, unsure)

    def flag_range_loop(self, stmt, rng: RangeVal, frame, rows_of, carry_target: bool = False,
                        lax_targets: bool = False) -> None:
        """A range loop that may `break`/`return`: a `while` over the index that tests the flags.

        With `carry_target` the loop variables are carried too (their values after a `break`).
        """
        span = self.span(stmt, frame)
        depth = len(frame.loops)
        body = list(stmt.body.body)
        index_var = f"$i{depth}"
        frame.env[index_var] = rng.start
        targets = target_names(stmt.target) if carry_target else []
        for n in targets:
            if frame.env.get(n) is None or isinstance(frame.env[n], Undefined):
                frame.env[n] = Static(None)  # bound on the first iteration, which surely runs
        step = rng.step

        def cond_fn(f):
            i = f.env[index_var]
            if is_static(step):
                in_range = self.binary("lt" if static_value(step) > 0 else "gt",
                                       operator.lt if static_value(step) > 0 else operator.gt, i, rng.stop, span)
            else:
                up = self.emit("bitand", [self.emit("gt", [step, Static(0)], span=span),
                                          self.emit("lt", [i, rng.stop], span=span)], span=span)
                down = self.emit("bitand", [self.emit("lt", [step, Static(0)], span=span),
                                            self.emit("gt", [i, rng.stop], span=span)], span=span)
                in_range = self.emit("bitor", [up, down], span=span)
            flags = [f.env[n] for n in (f"$brk{depth}", "$ret") if n in f.env]
            return self.emit("bitand", [self.emit("not", [self.any_of(flags, span)], span=span), in_range],
                             span=span)

        def body_fn(f):
            self.clear_flags(f, depth)  # the loop test guarantees no flag is set here
            i = f.env[index_var]
            self.bind_loop_target(stmt, i, rows_of, f, span)
            self.statements(body, f)
            f.env[index_var] = self.binary("add", operator.add, i, step, span)

        try:
            self.while_region(frame, span, body, cond_fn, body_fn, extra=[index_var] + targets,
                              exclude=target_names(stmt.target), stmt=stmt,
                              maybe_extra=target_names(stmt.target) if lax_targets else ())
        except NeedsStatic as e:
            raise _NeedsUnroll(e) from None  # a compile-time range unrolls instead
        frame.env.pop(index_var, None)

    def carried_names(self, body: list, frame, exclude=(), extra=(), stmt=None, maybe_extra=()) -> list:
        """Names a loop carries: those its body assigns that are bound before it, flags, `extra`.

        At LAX (given the loop `stmt`) also the names the loop may or may not bind (first assigned in
        it, and `maybe_extra`) that the function mentions outside it: carried as value-or-UNBOUND, so
        a fallback block after the loop reads them as Python would.
        """
        names = [n for n in _assigned_names(body) if n in frame.env and not isinstance(frame.env[n], Undefined)]
        names += [n for n in extra if n not in names]
        for flag in sorted(k for k in frame.env if k.startswith("$") and not k.startswith("$i")):
            if flag not in names and _flag_of_this_loop(flag, len(frame.loops)):
                names.append(flag)
        names = [n for n in names if n not in exclude]
        if self.level == LAX and stmt is not None:
            unbound = [n for n in [m for m in _assigned_names(body) if m not in exclude] + list(maybe_extra)
                       if not n.startswith("$") and n not in names
                       and (n not in frame.env or isinstance(frame.env[n], Undefined) and not frame.env[n].poisoned)]
            for n in _used_outside(stmt, frame, list(dict.fromkeys(unbound))) if unbound else []:
                old = frame.env.get(n)
                frame.env[n] = Undefined(n, "it is assigned only inside a run-time loop",
                                         maybe=old.maybe if isinstance(old, Undefined) else None)
                names.append(n)
        return names

    def loop_region(self, frame, span, carried: list, body_fn, index_name: str, exclude=(), placeholders=()):
        """The body region of a `for_range`; carried values' types widen until they are stable.

        `placeholders`: carried names unbound before the loop (their type is the body's); one the body
        does not surely bind is dropped.
        """
        placeholders = list(placeholders)
        init = [frame.env[n] for n in carried]
        maybe = {n for n in carried if isinstance(frame.env[n], Undefined)}
        types = [self.maybe_operand(v, span).type for v in init]
        # placeholders and names maybe unbound before the loop whose type is not known yet
        fresh = set(placeholders) | _untyped_unbound(frame, carried)
        ends_unbound: set = set()
        for _attempt in range(4):
            outer = self.scope
            g = Graph(f"{outer.graph.name}.body", label="body")
            group = RegionGroup([g], outer)
            index = g.add_arg(index_name, _index_type(), span)
            args = [g.add_arg(n.lstrip("$"), t, span) for n, t in zip(carried, types)]
            body_frame = _fork(frame)
            self.scope = Scope(g, group, 0)
            saved = _save(_containers(frame.env))
            try:
                for n, a in zip(carried, args):
                    body_frame.env[n] = Undefined(n, frame.env[n].reason, maybe=a) if n in maybe else \
                        _carried_value(frame.env[n], a, n in fresh)
                try:
                    body_fn(body_frame, index)
                    self.check_loop_containers(saved, frame, span)
                except LoweringError as e:
                    if _is_needs_static(e):
                        raise _NeedsUnroll(e) from None
                    raise
                extra = _rebound(frame.env, body_frame.env, carried, exclude)
                unsure = [n for n in placeholders if n in carried and isinstance(body_frame.env.get(n), Undefined)]
                if not extra and not unsure:
                    outs = [self.maybe_operand(body_frame.env[n], span) if n in maybe else
                            self.operand(body_frame.env[n], span) for n in carried]
                    g.set_outputs(outs)
                    ends_unbound = {n for n in carried if isinstance(body_frame.env.get(n), MaybeUnbound)}
                    ends = [body_frame.env.get(n) for n in carried]
            finally:
                self.scope = outer
                _restore(saved)
            if extra:  # written by a fallback block (a nested def's `nonlocal`, a list): carry it too
                carried.extend(extra)
                types.extend(self.operand(frame.env[n], span).type for n in extra)
                continue
            if unsure:  # not bound on every path of the body: not bound after the loop either
                for n in unsure:
                    k = carried.index(n)
                    del carried[k], types[k]
                    frame.env[n] = Undefined(n, f"it is not assigned on every path of the loop at {span}")
                continue
            new_types = [_output_type(e, o) if n in fresh else join(t, o.type)
                         for n, t, o, e in zip(carried, types, outs, ends)]
            fresh.clear()
            if new_types == types:
                break
            types = new_types
        # after the loop, maybe unbound: names the body may leave so, and those that were before a
        # loop that may not run (placeholders are made only for loops that surely run)
        unsure_after = ends_unbound | {n for n in carried if isinstance(frame.env[n], MaybeUnbound)
                                       and n not in placeholders}
        return outs, types, group, g, unsure_after

    def bind_results(self, node, carried: list, types: list, frame, span, unsure=()) -> None:
        """Bind the loop's results to their names; those in `unsure` may be unbound (`MaybeUnbound`)."""
        for k, (n, t) in enumerate(zip(carried, types)):
            value = self.scope.graph.add("tuple_get", [node], {"index": k}, t, span)
            if n in unsure:
                value.name = value.name or n
                frame.env[n] = MaybeUnbound(value, t)
            elif isinstance(frame.env.get(n), Undefined):
                frame.env[n] = Undefined(n, frame.env[n].reason, maybe=value)  # LAX: value or UNBOUND
            elif n.startswith("$"):
                frame.env[n] = value
            else:
                self.assign_name(n, value, frame)

    def read_maybe_unbound(self, name: str, value: MaybeUnbound, frame, span) -> Node:
        """Read a name a loop may have left unbound: UnboundLocalError there, as in Python.

            if isinstance(j, str):              # `and j == UNBOUND` unless `j` is never a string
                raise UnboundLocalError("cannot access local variable 'j' where it is not associated ...")
        """
        node = self.operand(value, span)
        error, message = ("NameError", f"cannot access free variable '{name}' where it is not associated with a "
                          "value in enclosing scope") if value.free else \
            ("UnboundLocalError", f"cannot access local variable '{name}' where it is not associated with a value")

        def fail(f):
            self.emit("raise", [Static(f"builtins.{error}"), Static(message)], span=span)

        def test_value(f):
            self.branch(self.emit("eq", [node, Static(UNBOUND)], span=span), fail, lambda g: None, f, span)

        is_str = self.emit("isinstance", [node], {"classes": ("builtins.str",)}, span)
        never_str = value.vtype is not None and _never_str(value.vtype)
        self.branch(is_str, fail if never_str else test_value, lambda f: None, frame, span)
        frame.env[name] = node  # tested: bound from here on
        return node

    def undefine_loop_locals(self, body: list, frame, span) -> None:
        for n in _assigned_names(body):
            if n not in frame.env:
                frame.env[n] = Undefined(n, f"it is assigned only inside the run-time loop at {span}")

    # --- while -----------------------------------------------------------------------------
    def stmt_While(self, stmt: cst.While, frame) -> None:
        span = self.span(stmt, frame)
        if stmt.orelse is not None:
            raise UnsupportedSyntaxError("`while ... else` is not supported in a graph", span,
                                         rule=rule("while_else"))
        body = list(stmt.body.body)
        control = _has_loop_control(body)
        self.enter_loop(frame, span, control, body)
        depth = len(frame.loops)
        try:
            def cond_fn(f):
                if not control:
                    return self.expr(stmt.test, f)
                flags = [f.env[n] for n in (f"$brk{depth}", "$ret") if n in f.env]
                # short-circuit: the test is not evaluated again once a flag is set
                return self.ternary(self.any_of(flags, span), lambda g: Static(False),
                                    lambda g: self.expr(stmt.test, g), f, span)

            def body_fn(f):
                if control:
                    self.clear_flags(f, depth)  # the loop test guarantees no flag is set here
                self.statements(body, f)

            self.while_region(frame, span, body, cond_fn, body_fn, stmt=stmt)
        finally:
            self.exit_loop(frame)
        self.undefine_loop_locals(body, frame, span)

    def while_region(self, frame, span, body: list, cond_fn, body_fn, extra=(), exclude=(), stmt=None,
                     maybe_extra=()) -> None:
        carried = self.carried_names(body, frame, extra=extra, stmt=stmt, maybe_extra=maybe_extra)
        init = [frame.env[n] for n in carried]
        maybe = {n for n in carried if isinstance(frame.env[n], Undefined)}
        types = [self.maybe_operand(v, span).type for v in init]
        fresh = _untyped_unbound(frame, carried)  # maybe unbound, type not known yet: the body's
        ends_unbound: set = set()
        for _attempt in range(4):
            outer = self.scope
            cond_g = Graph(f"{outer.graph.name}.cond", label="cond")
            body_g = Graph(f"{outer.graph.name}.body", label="body")
            group = RegionGroup([cond_g, body_g], outer)
            outs, more = None, []
            # carried values first in both graphs, before the condition captures outer values
            all_args = [[g.add_arg(n.lstrip("$"), t, span) for n, t in zip(carried, types)]
                        for g in (cond_g, body_g)]
            for k, g in enumerate((cond_g, body_g)):
                args = all_args[k]
                f = _fork(frame)
                for n, a in zip(carried, args):
                    f.env[n] = Undefined(n, frame.env[n].reason, maybe=a) if n in maybe else \
                        _carried_value(frame.env.get(n), a, n in fresh)
                self.scope = Scope(g, group, k)
                saved = _save(_containers(frame.env))
                try:
                    if k == 0:
                        test = cond_fn(f)
                        self.check_loop_containers(saved, frame, span)
                        if is_static(test) and not static_value(test):
                            self.scope = outer
                            return  # `while False:` never runs
                        g.set_outputs([self.operand(test, span)])
                    else:
                        body_fn(f)
                        self.check_loop_containers(saved, frame, span)
                        more = _rebound(frame.env, f.env, carried, exclude)
                        if not more:
                            outs = [self.maybe_operand(f.env[n], span) if n in maybe else
                                    self.operand(f.env[n], span) for n in carried]
                            g.set_outputs(outs)
                            ends_unbound = {n for n in carried if isinstance(f.env.get(n), MaybeUnbound)}
                            ends = [f.env.get(n) for n in carried]
                finally:
                    self.scope = outer
                    _restore(saved)
            if more:  # written by a fallback block: carry it too
                carried.extend(more)
                init.extend(frame.env[n] for n in more)
                maybe.update(n for n in more if isinstance(frame.env[n], Undefined))
                types.extend(self.operand(frame.env[n], span).type for n in more)
                continue
            new_types = [_output_type(e, o) if n in fresh else join(t, o.type)
                         for n, t, o, e in zip(carried, types, outs, ends)]
            fresh = set()
            if new_types == types:
                break
            types = new_types
        init_nodes = [self.maybe_operand(v, span) for v in init]
        unsure = ends_unbound | {n for n, v in zip(carried, init) if isinstance(v, MaybeUnbound)}
        node = self.scope.graph.add("while", init_nodes + [self.scope.local(v) for v in group.outer],
                                    {"carried": len(carried)}, TupleType(tuple(types)), span,
                                    regions=[cond_g, body_g])
        self.bind_results(node, carried, types, frame, span, unsure)


def _flag_set(frame) -> bool:
    """Whether a `break`/`continue`/`return` flag exists in the frame (what `control_pending` looks at)."""
    env = frame.env
    if "$ret" in env:
        return True
    depth = len(frame.loops)
    return bool(depth) and (f"$brk{depth}" in env or f"$cont{depth}" in env)


_OUTSIDE_CACHE: dict = {}

def _never_str(t) -> bool:
    """A value of type `t` is never a string (so never the UNBOUND sentinel)."""
    from ..graph.types import ScalarType
    return isinstance(t, (ArrayType, TupleType)) or isinstance(t, ScalarType) and t.kind != "str"


def _bound_type(values: list, nodes: list):
    """The type of a merged value where it is bound: maybe-unbound values count by their bound type."""
    out = None
    for v, node in zip(values, nodes):
        t = v.vtype if isinstance(v, MaybeUnbound) else node.type
        if t is not None:
            out = t if out is None else join(out, t)
    return out


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



def _used_outside(stmt, frame, names: list) -> list:
    """Those of `names` that the function holding `stmt` mentions outside it (read after a loop, say)."""
    key = (id(frame.parsed), id(stmt))
    cached = _OUTSIDE_CACHE.get(key)
    if cached is None or cached[0] is not stmt:
        where = frame.parsed.positions.get(stmt)
        best, best_size = None, None
        for fn_node, _ in frame.parsed.functions():
            pos = frame.parsed.positions.get(fn_node)
            if pos is None or where is None:
                continue
            if (pos.start.line, pos.start.column) <= (where.start.line, where.start.column) and \
                    (pos.end.line, pos.end.column) >= (where.end.line, where.end.column):
                size = pos.end.line - pos.start.line
                if best is None or size < best_size:
                    best, best_size = fn_node, size
        mentioned: set = set()
        if best is None:
            mentioned = None  # not found: assume every name is used
        else:
            class Names(cst.CSTVisitor):
                def on_visit(self, node) -> bool:
                    if node is stmt:
                        return False
                    if isinstance(node, cst.Name):
                        mentioned.add(node.value)
                    return True

            best.body.visit(Names())
        cached = (stmt, mentioned)
        _OUTSIDE_CACHE[key] = cached
    mentioned = cached[1]
    return list(names) if mentioned is None else [n for n in names if n in mentioned]


def _unpack_error(n_items: int, n_targets: int, starred: bool) -> ValueError:
    """The ValueError this Python raises unpacking `n_items` values into `n_targets` targets."""
    names = [f"_{k}" for k in range(n_targets)]
    if starred:
        names[-1] = "*" + names[-1]
    scope: dict = {}
    exec(f"def f(t):\n    {', '.join(names)}, = t\n", scope)  # noqa: S102 - a fixed two-line function
    try:
        scope["f"]((None,) * n_items)
    except ValueError as e:
        return e
    return ValueError(f"cannot unpack {n_items} values into {n_targets} targets")


def _static_trips(rng: RangeVal):
    """How many times a range loop runs, when its bounds are compile-time."""
    if all(is_static(b) for b in (rng.start, rng.stop, rng.step)):
        try:
            return len(range(static_value(rng.start), static_value(rng.stop), static_value(rng.step)))
        except (TypeError, ValueError):
            return None
    return None


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


class ContainerChanged(NeedsStatic):
    """A compile-time list or dict changes in a loop body: the loop must unroll, or cannot compile."""


def _container_changed(message, span):
    return ContainerChanged(message, span, hint="build the values in an array (preallocate it and assign items), "
                            "or loop over a compile-time range")


def _cannot_unroll(error, span) -> LoweringError:
    """The loop needs unrolling (its index used at compile time, a list growing) but its length is run-time."""
    if isinstance(error, ContainerChanged):
        return error
    if getattr(error, "instead", None) is not None:
        return error.instead
    return LoweringError(f"this loop's index is used where a compile-time value is needed ({error.message}), "
                         "but its bounds are known only at run time", span)


def _static_rows(node) -> bool:
    from ..graph.types import ArrayType
    t = node.type
    return isinstance(t, ArrayType) and bool(t.shape) and t.shape[0] is not None and t.shape[0] <= UNROLL_LIMIT


class _NeedsUnroll(Exception):
    pass


class _Stop(Exception):
    """Internal: the rest of the current block is dead (after break/continue/return/raise in a loop)."""


def _flag_of_this_loop(flag: str, depth: int) -> bool:
    return flag in (f"$brk{depth}", "$ret", "$rv")


def _has_loop_control(body: list) -> bool:
    return _contains(body, (cst.Break, cst.Continue, cst.Return))


def _is_needs_static(error) -> bool:
    from .calls import NeedsStatic
    return isinstance(error, NeedsStatic)


def _index_type():
    from ..graph.types import INT
    return INT


def _ref(k):
    from ..graph.literals import OperandRef
    return OperandRef(k)


def _shift(index):
    """setitem's operands are (array, value, *index parts): index refs move up by one."""
    from ..graph.literals import OperandRef
    out = []
    for item in index:
        if isinstance(item, OperandRef):
            out.append(OperandRef(item.index + 1))
        elif isinstance(item, slice):
            out.append(slice(*(OperandRef(p.index + 1) if isinstance(p, OperandRef) else p
                               for p in (item.start, item.stop, item.step))))
        else:
            out.append(item)
    return out


def _small_static_rows(node: Node) -> bool:
    from ..graph.types import ArrayType
    t = node.type
    return isinstance(t, ArrayType) and bool(t.shape) and t.shape[0] is not None and t.shape[0] <= 0


def _fork(frame):
    return frame.fork()


# --- compile-time lists and dicts across run-time control flow ----------------------------------
# A list display or a dict built in the function is a compile-time structure (`Seq`, a `Static`
# dict) whose items may be graph values; its methods change it while lowering. Where control flow
# is decided at run time, lowering must not let one branch's (or one loop body's) changes leak.

def _containers(env: dict) -> list:
    """The compile-time lists and dicts reachable from the names in `env` (each once)."""
    out, seen = [], set()

    def walk(value):
        if id(value) in seen:
            return
        if isinstance(value, Seq):
            seen.add(id(value))
            if value.kind == "list":
                out.append(value)
            for item in value.items:
                walk(item)
        elif isinstance(value, Static) and value.path is None and isinstance(value.value, dict):
            seen.add(id(value))
            out.append(value)
            for item in value.value.values():
                walk(item)

    for v in env.values():
        walk(v)
    return out


def _items(obj):
    return list(obj.items) if isinstance(obj, Seq) else dict(obj.value)


def _save(containers: list) -> list:
    return [(obj, _items(obj)) for obj in containers]


def _restore(saved: list) -> None:
    for obj, items in saved:
        if isinstance(obj, Seq):
            obj.items[:] = items
        else:
            obj.value.clear()
            obj.value.update(items)


def _same_items(a, b) -> bool:
    if isinstance(a, dict):
        return list(a) == list(b) and all(a[k] is b[k] for k in a)
    return len(a) == len(b) and all(x is y for x, y in zip(a, b))


def _same_value(a, b) -> bool:
    if a is b:
        return True
    return is_static(a) and is_static(b) and _same_static([a, b])


def _item_setter(items, key):
    def store(value):
        items[key] = value
    return store


def _name_of(obj, env: dict) -> str:
    for name, value in env.items():
        if value is obj and not name.startswith("$"):
            return name
    return "..."


def _copy_structure(value):
    """A branch's result, detached from lists and dicts the other branch will change."""
    if isinstance(value, Seq):
        return Seq([_copy_structure(v) for v in value.items], value.kind)
    if isinstance(value, Static) and value.path is None and isinstance(value.value, dict):
        return Static({k: _copy_structure(v) for k, v in value.value.items()})
    return value


def _changed_names(before: dict, envs: list) -> list:
    names = []
    for env in envs:
        for name, value in env.items():
            if (name not in before or before[name] is not value) and name not in names:
                names.append(name)
    return names


def _same_static(values) -> bool:
    first = static_value(values[0])
    try:
        return all(type(static_value(v)) is type(first) and static_value(v) == first for v in values[1:]) \
            and not hasattr(first, "shape")
    except Exception:
        return False


def _body(stmt: cst.If) -> list:
    return list(stmt.body.body)


def _else_body(stmt: cst.If) -> list:
    if stmt.orelse is None:
        return []
    if isinstance(stmt.orelse, cst.If):  # elif
        return [stmt.orelse]
    return list(stmt.orelse.body.body)


class _Finder(cst.CSTVisitor):
    def __init__(self, kinds, stop_at_loops: bool):
        self.kinds = kinds
        self.found = False
        self.stop_at_loops = stop_at_loops

    def on_visit(self, node) -> bool:
        if isinstance(node, self.kinds):
            self.found = True
        if isinstance(node, (cst.FunctionDef, cst.Lambda, cst.ClassDef)):
            return False
        if self.stop_at_loops and isinstance(node, (cst.For, cst.While)):
            return False
        return not self.found


def _contains(body, kinds) -> bool:
    """Does a loop body hold `break`/`continue` of this loop, or a `return` anywhere?"""
    stmts = body.body if hasattr(body, "body") else body
    own = _Finder(tuple(k for k in kinds if k is not cst.Return), stop_at_loops=True)
    ret = _Finder((cst.Return,), stop_at_loops=False)
    for stmt in stmts:
        if own.kinds:
            stmt.visit(own)
        if cst.Return in kinds:
            stmt.visit(ret)
    return own.found or ret.found


_RETURNS: dict = {}


def _contains_return(stmt) -> bool:
    """Does the statement end some path (`return`, or `raise`, which ends it too)?"""
    cached = _RETURNS.get(id(stmt))
    if cached is not None and cached[0] is stmt:  # asked again each time its function is inlined
        return cached[1]
    finder = _Finder((cst.Return, cst.Raise), stop_at_loops=False)
    stmt.visit(finder)
    _RETURNS[id(stmt)] = (stmt, finder.found)
    return finder.found


class _Assigned(cst.CSTVisitor):
    def __init__(self):
        self.names: list[str] = []

    def _add(self, target) -> None:
        for n in target_names(target):
            if n not in self.names:
                self.names.append(n)

    def visit_AssignTarget(self, node) -> None:
        self._add(node.target)

    def visit_AnnAssign(self, node) -> None:
        self._add(node.target)

    def visit_AugAssign(self, node) -> None:
        self._add(node.target)

    def visit_For(self, node) -> None:
        self._add(node.target)

    def visit_FunctionDef(self, node) -> bool:
        self._add(node.name)
        return False

    def visit_Lambda(self, node) -> bool:
        return False


def _assigned_names(body: list) -> list:
    visitor = _Assigned()
    for stmt in body:
        stmt.visit(visitor)
    return visitor.names


def _stmt_name(stmt) -> str:
    names = {"Try": "`try`", "TryStar": "`try`", "With": "`with`", "Del": "`del`", "Global": "`global`",
             "Nonlocal": "`nonlocal`", "ClassDef": "a class definition", "Import": "`import`",
             "ImportFrom": "`import`", "Raise": "`raise`", "Assert": "`assert`", "Match": "`match`",
             "Break": "`break`", "Continue": "`continue`"}
    return names.get(type(stmt).__name__, f"`{type(stmt).__name__}` statement")


__all__ = ["StatementLowering", "Any", "SourceFunc"]
