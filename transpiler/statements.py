"""Lowering statements: assignment, `if`, `for`, `while`, `return`, nested `def`.

Branches on compile-time values are decided and loops over compile-time sequences unrolled
here; on run-time values they become region nodes (`if`, `for_range`, `while`) whose merged
and loop-carried values are the names the statement assigns (the SSA phis).
"""

from __future__ import annotations

from typing import Any, Callable, Optional

import libcst as cst

from ..graph.diagnostics import LoweringError, UnsupportedSyntaxError
from ..graph.ir import Graph, Node
from ..graph.literals import Index
from ..graph.types import TupleType, join
from .scope import RegionGroup, Scope
from .values import RangeVal, Seq, SourceFunc, Static, Undefined, is_static, static_value

UNROLL_LIMIT = 1024  # a range loop needing its index at compile time unrolls up to this many times

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
        for k, stmt in enumerate(stmts):
            if isinstance(stmt, cst.If) and _contains_return(stmt):
                test = self.expr(stmt.test, frame)
                if not (is_static(test) or isinstance(test, Seq)):
                    # A run-time branch that returns: the rest of the function runs inside both
                    # branches, so every path ends in a return and the `if` yields the result.
                    self.returning_if(stmt, test, stmts[k + 1:], frame)
                    return
                self.decided_if(stmt, test, frame)
                continue
            self.statement(stmt, frame)

    def statement(self, stmt, frame) -> None:
        if isinstance(stmt, cst.SimpleStatementLine):
            for small in stmt.body:
                self.small_statement(small, frame)
            return
        method = getattr(self, "stmt_" + type(stmt).__name__, None)
        if method is None:
            raise UnsupportedSyntaxError(f"{_stmt_name(stmt)} is not supported in a graph yet",
                                         self.span(stmt, frame))
        method(stmt, frame)

    def small_statement(self, stmt, frame) -> None:
        method = getattr(self, "stmt_" + type(stmt).__name__, None)
        if method is None:
            raise UnsupportedSyntaxError(f"{_stmt_name(stmt)} is not supported in a graph yet",
                                         self.span(stmt, frame))
        method(stmt, frame)

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
        raise _Return(value, self.span(stmt, frame))

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
        else:
            raise UnsupportedSyntaxError("augmented assignment to an attribute is not supported in a graph yet",
                                         span, hint="assign to a local variable instead")

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
            raise UnsupportedSyntaxError("assigning to an attribute is not supported in a graph yet", span,
                                         hint="keep state in local variables, or run in PYNATIVE mode")
        else:
            raise UnsupportedSyntaxError(f"assignment to {type(target).__name__} is not supported", span)

    def assign_name(self, name: str, value, frame) -> None:
        if isinstance(value, Node) and not value.name and value.op not in ("const", "arg", "param"):
            value.name = name
        frame.env[name] = value

    def unpack(self, target, value, frame, span) -> None:
        elements = list(target.elements)
        if isinstance(value, Node) and isinstance(value.type, TupleType):
            items = [self.emit("tuple_get", [value], {"index": k}, span) for k in range(len(value.type.items))]
        else:
            items = self.iterate(value, span)
        stars = [k for k, el in enumerate(elements) if isinstance(el, cst.StarredElement)]
        if stars:
            s = stars[0]
            n_after = len(elements) - s - 1
            if len(items) < len(elements) - 1:
                raise LoweringError(f"not enough values to unpack (expected at least {len(elements) - 1}, "
                                    f"got {len(items)})", span)
            middle = items[s:len(items) - n_after]
            items = items[:s] + [Seq(middle, "list")] + items[len(items) - n_after:]
        elif len(items) != len(elements):
            raise LoweringError(f"cannot unpack {len(items)} values into {len(elements)} targets", span)
        for el, item in zip(elements, items):
            self.assign_target(el.value, item, frame)

    def subscript_key(self, target: cst.Subscript, frame):
        items = [self.subscript_item(el.slice, frame) for el in target.slice]
        return items[0] if len(items) == 1 else Seq(items, "tuple")

    def store_item(self, base, key, value, span) -> None:
        """`x[key] = value`: an ordered in-place write, exactly as eager Python does it."""
        if not isinstance(base, (Node, Static)) or (isinstance(base, Static) and not hasattr(base.value, "shape")):
            raise UnsupportedSyntaxError("item assignment is supported on arrays only in a graph", span)
        index, operands = self.index_of(key, span)
        self.emit("setitem", [base, value] + operands, {"index": Index(_shift(index))}, span)

    # --- nested functions ------------------------------------------------------------------
    def stmt_FunctionDef(self, stmt: cst.FunctionDef, frame) -> None:
        if stmt.decorators:
            raise UnsupportedSyntaxError("decorated nested functions are not supported in a graph yet",
                                         self.span(stmt, frame))
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
                    frame, span)

    def decided_if(self, stmt: cst.If, test, frame) -> None:
        truth = bool(static_value(test)) if is_static(test) else bool(test.items)
        self.statements(_body(stmt) if truth else _else_body(stmt), frame)

    def branch(self, test, then_fn: Callable, else_fn: Callable, frame, span,
               result_fns: Optional[tuple] = None) -> list:
        """Lower a run-time `if`: both branches in regions, names they assign merged.

        `result_fns` (for ternaries and returning branches) give one extra value per branch,
        yielded first; the list of those results (one) is returned.
        """
        outer = self.scope
        cond = self.operand(test, span)
        graphs = [Graph(f"{outer.graph.name}.then", label="then"), Graph(f"{outer.graph.name}.else", label="else")]
        group = RegionGroup(graphs, outer)
        envs, results = [], []
        for k, fn in enumerate((then_fn, else_fn)):
            self.scope = Scope(graphs[k], group, k)
            branch_frame = _fork(frame)
            try:
                value = fn(branch_frame)
            finally:
                self.scope = outer
            envs.append(branch_frame.env)
            results.append(value)
        names = _changed_names(frame.env, envs)
        merged: list[tuple[str, list]] = []
        for name in names:
            values = [env.get(name, frame.env.get(name)) for env in envs]
            if any(v is None or isinstance(v, Undefined) for v in values):
                frame.env[name] = Undefined(name, f"it is assigned in only one branch of the `if` at {span}")
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
                g.set_outputs([self.operand(v, span) for v in yields[k]])
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
        for (name, _), value in zip(merged, outs[offset:]):
            self.assign_name(name, value, frame)
        return outs[:offset]

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
            raise UnsupportedSyntaxError("`for ... else` is not supported in a graph yet", span)
        if _contains(stmt.body, (cst.Break, cst.Continue, cst.Return)):
            raise UnsupportedSyntaxError("`break`, `continue` and `return` inside a loop are not supported "
                                         "in a graph yet", span, hint="compute a mask or a result after the loop")
        iterable = self.expr(stmt.iter, frame)
        body = list(stmt.body.body)
        if isinstance(iterable, Static) and isinstance(iterable.value, range):
            r = iterable.value
            try:
                return self.range_loop(stmt, RangeVal(Static(r.start), Static(r.stop), Static(r.step)), frame)
            except _NeedsUnroll:
                if len(r) > UNROLL_LIMIT:
                    raise LoweringError(f"this loop needs its index at compile time and runs {len(r)} times "
                                        f"(more than {UNROLL_LIMIT} to unroll)", span) from None
        if isinstance(iterable, RangeVal):
            try:
                return self.range_loop(stmt, iterable, frame)
            except _NeedsUnroll as e:
                raise LoweringError(f"this loop's index is used where a compile-time value is needed ({e}), "
                                    "but its bounds are known only at run time", span) from None
        if isinstance(iterable, Node) and not _small_static_rows(iterable):
            return self.rows_loop(stmt, iterable, frame)
        for item in self.iterate(iterable, span):
            self.assign_target(stmt.target, item, frame)
            self.statements(body, frame)

    def rows_loop(self, stmt: cst.For, array: Node, frame) -> None:
        """`for row in x` over an array of unknown length: a range loop over `len(x)`."""
        span = self.span(stmt, frame)
        length = self.emit("dim", [array], {"axis": 0}, span)
        self.range_loop(stmt, RangeVal(Static(0), length, Static(1)), frame, rows_of=array)

    def range_loop(self, stmt: cst.For, rng: RangeVal, frame, rows_of: Optional[Node] = None) -> None:
        span = self.span(stmt, frame)
        body = list(stmt.body.body)
        carried = [n for n in _assigned_names(body) if n in frame.env and not isinstance(frame.env[n], Undefined)]
        loop_var_names = _target_names(stmt.target)
        carried = [n for n in carried if n not in loop_var_names]
        init = [frame.env[n] for n in carried]
        bounds = [rng.start, rng.stop, rng.step]
        types = [self.operand(v, span).type if not isinstance(v, Node) else v.type for v in init]
        for attempt in range(3):
            outer = self.scope
            g = Graph(f"{outer.graph.name}.body", label="body")
            group = RegionGroup([g], outer)
            index = g.add_arg(_target_names(stmt.target)[0] if rows_of is None and isinstance(stmt.target, cst.Name)
                              else "i", _index_type(), span)
            args = [g.add_arg(n, t, span) for n, t in zip(carried, types)]
            body_frame = _fork(frame)
            self.scope = Scope(g, group, 0)
            try:
                for n, a in zip(carried, args):
                    body_frame.env[n] = a
                if rows_of is None:
                    self.assign_target(stmt.target, index, body_frame)
                else:
                    row = self.emit("getitem", [rows_of, index], {"index": Index([_ref(1)])}, span)
                    self.assign_target(stmt.target, row, body_frame)
                try:
                    self.statements(body, body_frame)
                except LoweringError as e:
                    if _is_needs_static(e):
                        raise _NeedsUnroll(e.message) from None
                    raise
                outs = [self.operand(body_frame.env[n], span) for n in carried]
                g.set_outputs(outs)
            finally:
                self.scope = outer
            new_types = [join(t, o.type) for t, o in zip(types, outs)]
            if new_types == types:
                break
            types = new_types
        bound_nodes = [self.operand(b, span) for b in bounds]
        init_nodes = [self.operand(v, span) for v in init]
        node = self.scope.graph.add("for_range", bound_nodes + init_nodes + [outer.local(v) for v in group.outer],
                                    {"carried": len(carried)}, TupleType(tuple(types)), span, regions=[g])
        for k, (n, t) in enumerate(zip(carried, types)):
            self.assign_name(n, self.scope.graph.add("tuple_get", [node], {"index": k}, t, span), frame)
        for n in loop_var_names:
            frame.env[n] = Undefined(n, f"it is the variable of the run-time loop at {span}")
        for n in _assigned_names(body):
            if n not in carried and n not in loop_var_names and n not in frame.env:
                frame.env[n] = Undefined(n, f"it is assigned only inside the run-time loop at {span}")

    # --- while -----------------------------------------------------------------------------
    def stmt_While(self, stmt: cst.While, frame) -> None:
        span = self.span(stmt, frame)
        if stmt.orelse is not None:
            raise UnsupportedSyntaxError("`while ... else` is not supported in a graph yet", span)
        if _contains(stmt.body, (cst.Break, cst.Continue, cst.Return)):
            raise UnsupportedSyntaxError("`break`, `continue` and `return` inside a loop are not supported "
                                         "in a graph yet", span)
        body = list(stmt.body.body)
        carried = [n for n in _assigned_names(body) if n in frame.env and not isinstance(frame.env[n], Undefined)]
        init = [frame.env[n] for n in carried]
        types = [self.operand(v, span).type for v in init]
        for attempt in range(3):
            outer = self.scope
            cond_g = Graph(f"{outer.graph.name}.cond", label="cond")
            body_g = Graph(f"{outer.graph.name}.body", label="body")
            group = RegionGroup([cond_g, body_g], outer)
            outs = None
            # carried values first in both graphs, before the condition captures anything: a capture
            # adds an argument to every graph of the group
            carried_args = [[g.add_arg(n, t, span) for n, t in zip(carried, types)] for g in (cond_g, body_g)]
            for k, g in enumerate((cond_g, body_g)):
                args = carried_args[k]
                f = _fork(frame)
                for n, a in zip(carried, args):
                    f.env[n] = a
                self.scope = Scope(g, group, k)
                try:
                    if k == 0:
                        test = self.expr(stmt.test, f)
                        if is_static(test) and not static_value(test):
                            self.scope = outer
                            return  # `while False:` never runs
                        g.set_outputs([self.operand(test, span)])
                    else:
                        self.statements(body, f)
                        outs = [self.operand(f.env[n], span) for n in carried]
                        g.set_outputs(outs)
                finally:
                    self.scope = outer
            new_types = [join(t, o.type) for t, o in zip(types, outs)]
            if new_types == types:
                break
            types = new_types
        init_nodes = [self.operand(v, span) for v in init]
        node = self.scope.graph.add("while", init_nodes + [outer.local(v) for v in group.outer],
                                    {"carried": len(carried)}, TupleType(tuple(types)), span,
                                    regions=[cond_g, body_g])
        for k, (n, t) in enumerate(zip(carried, types)):
            self.assign_name(n, self.scope.graph.add("tuple_get", [node], {"index": k}, t, span), frame)
        for n in _assigned_names(body):
            if n not in carried and n not in frame.env:
                frame.env[n] = Undefined(n, f"it is assigned only inside the `while` loop at {span}")


class _NeedsUnroll(Exception):
    pass


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
    return type(frame)(frame.parsed, frame.qualname, dict(frame.env), frame.globals, frame.closure)


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


def _contains_return(stmt) -> bool:
    finder = _Finder((cst.Return,), stop_at_loops=False)
    stmt.visit(finder)
    return finder.found


class _Assigned(cst.CSTVisitor):
    def __init__(self):
        self.names: list[str] = []

    def _add(self, target) -> None:
        for n in _target_names(target):
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


def _target_names(target) -> list:
    if isinstance(target, cst.Name):
        return [target.value]
    if isinstance(target, (cst.Tuple, cst.List)):
        return [n for el in target.elements for n in _target_names(el.value)]
    if isinstance(target, cst.StarredElement):
        return _target_names(target.value)
    return []


def _stmt_name(stmt) -> str:
    names = {"Try": "`try`", "TryStar": "`try`", "With": "`with`", "Del": "`del`", "Global": "`global`",
             "Nonlocal": "`nonlocal`", "ClassDef": "a class definition", "Import": "`import`",
             "ImportFrom": "`import`", "Raise": "`raise`", "Assert": "`assert`", "Match": "`match`",
             "Break": "`break`", "Continue": "`continue`"}
    return names.get(type(stmt).__name__, f"`{type(stmt).__name__}` statement")


__all__ = ["StatementLowering", "Any", "SourceFunc"]
