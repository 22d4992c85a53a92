"""Lowering expressions: names, constants, operators, attributes, subscripts, displays.

Each expression lowers to a compile-time value (computed now, as Python would) when all its
inputs are compile-time, and to graph nodes otherwise.
"""

from __future__ import annotations

import builtins
import operator
from typing import Any

import libcst as cst
import numpy as np

from ..graph.diagnostics import LoweringError, UndefinedNameError, UnsupportedSyntaxError
from ..graph.guards import is_value
from ..graph.ir import Node
from ..graph.literals import Index, OperandRef
from ..graph.paths import Path
from ..graph.types import ArrayType, ScalarType, TupleType
from .values import (MaybeUnbound, MethodVal, RangeVal, Seq, SourceFunc, Static, Undefined, describe_value,
                     is_static, static_value)

BINARY = {
    cst.Add: ("add", operator.add), cst.Subtract: ("sub", operator.sub), cst.Multiply: ("mul", operator.mul),
    cst.Divide: ("truediv", operator.truediv), cst.FloorDivide: ("floordiv", operator.floordiv),
    cst.Modulo: ("mod", operator.mod), cst.Power: ("pow", operator.pow),
    cst.MatrixMultiply: ("matmul", operator.matmul), cst.LeftShift: ("lshift", operator.lshift),
    cst.RightShift: ("rshift", operator.rshift), cst.BitAnd: ("bitand", operator.and_),
    cst.BitOr: ("bitor", operator.or_), cst.BitXor: ("bitxor", operator.xor),
}
COMPARE = {
    cst.Equal: ("eq", operator.eq), cst.NotEqual: ("ne", operator.ne), cst.LessThan: ("lt", operator.lt),
    cst.LessThanEqual: ("le", operator.le), cst.GreaterThan: ("gt", operator.gt),
    cst.GreaterThanEqual: ("ge", operator.ge),
}
STATIC_ONLY_COMPARE = {
    cst.Is: operator.is_, cst.IsNot: operator.is_not,
    cst.In: lambda a, b: a in b, cst.NotIn: lambda a, b: a not in b,
}
UNARY = {cst.Minus: ("neg", operator.neg), cst.Plus: ("pos", operator.pos), cst.BitInvert: ("invert", operator.invert)}
ARRAY_ATTRS_OPS = {"T": "T"}


class ExpressionLowering:
    def expr(self, node: cst.BaseExpression, frame) -> Any:
        method = getattr(self, "expr_" + type(node).__name__, None)
        if method is None:
            from .rules import BY_KEY, EXPRESSION_RULES
            key = EXPRESSION_RULES.get(type(node).__name__)
            r = BY_KEY.get(key) if key else None
            raise UnsupportedSyntaxError(r.message if r else f"{_construct_name(node)} is not supported in a graph",
                                         frame.parsed.span(node), rule=r)
        value = method(node, frame)
        return self.latest_version(value) if isinstance(value, Node) and self.refreshed else value

    def latest_version(self, value: Node) -> Node:
        """`value`, or the `refresh` of it a metadata write made (`a.shape = s` in an inlined helper,
        `d["a"].shape = s`), when that node is visible from the graph being built."""
        while value.id in self.refreshed and _visible(self.refreshed[value.id], self.scope.graph):
            value = self.refreshed[value.id]
        return value

    def span(self, node, frame):
        return frame.parsed.span(node)

    # --- atoms -----------------------------------------------------------------------------
    def expr_Name(self, node: cst.Name, frame) -> Any:
        return self.lookup(node.value, frame, self.span(node, frame))

    def lookup(self, name: str, frame, span) -> Any:
        if name in frame.declared_globals or (name not in frame.env and name not in frame.closure
                                              and (id(frame.globals), name) in self.runtime_globals):
            # declared `global` here, or written by a helper's `global`: read at call time
            return self.emit("load_global", [], {"name": name, "scope": self.globals_scope(frame)}, span, name=name)
        if name in frame.env:
            value = frame.env[name]
            if isinstance(value, Undefined):
                if value.poisoned:
                    from .fallback import Poisoned
                    raise Poisoned(f"`{name}` is not available: {value.reason}", span)
                raise LoweringError(f"`{name}` may be unbound here: {value.reason}", span)
            if isinstance(value, MaybeUnbound):
                return self.read_maybe_unbound(name, value, frame, span)
            return value
        if name in frame.closure:
            try:
                value = frame.closure[name].cell_contents
            except ValueError:
                raise LoweringError(f"free variable `{name}` is unbound", span) from None
            if isinstance(value, SourceFunc):
                return value
            is_root = frame.closure is self.root_closure
            path = Path("closure", name) if is_root else self.foreign_closure(frame, name)
            self.guards.read(path, value)
            return self.reached(self.runtime_container(Static(value, path)), span)
        if name in frame.globals:
            if getattr(type(frame.globals[name]), "__graphjit_unresolved__", False):
                raise frame.globals[name].error(span)
            is_root = frame.globals is self.root_globals
            value = frame.globals[name]
            if is_root:
                self.guards.read(Path("globals", name), value)
                return self.reached(self.runtime_container(Static(value, Path("globals", name))), span)
            module = self.module_of(frame)
            if module is not None:
                self.guards.read(Path("module", module.__name__).attr(name), value, module)
            return self.reached(self.runtime_container(Static(value, self.foreign_global(frame, name))), span)
        if name in ("True", "False", "None"):
            return Static({"True": True, "False": False, "None": None}[name])
        if hasattr(builtins, name):
            return Static(getattr(builtins, name))
        raise UndefinedNameError(f"name `{name}` is not defined", span)

    def module_of(self, frame):
        """The module whose globals an inlined helper reads (None if it is not a module's)."""
        import sys
        module = sys.modules.get(frame.globals.get("__name__"))
        return module if module is not None and getattr(module, "__dict__", None) is frame.globals else None

    def foreign_global(self, frame, name: str):
        """A global of another module (an inlined helper's): reached through that module object."""
        import sys
        import types
        value = frame.globals[name]
        if isinstance(value, (types.ModuleType, types.FunctionType, types.BuiltinFunctionType, type, int, float,
                              str, bool, type(None))) or callable(value) and not hasattr(value, "__dict__"):
            return None  # nothing run-time can be reached through it
        module_name = frame.globals.get("__name__")
        module = sys.modules.get(module_name)
        if module is None or getattr(module, "__dict__", None) is not frame.globals:
            return None
        static = self.const_object(module)
        return static.path.attr(name)

    def foreign_closure(self, frame, name: str):
        """A closure variable of an inlined helper: reached through its cell, kept as a compile-time object."""
        return self.const_object(frame.closure[name]).path.attr("cell_contents")

    def expr_Integer(self, node, frame):
        return Static(node.evaluated_value)

    expr_Float = expr_Imaginary = expr_Integer

    def expr_SimpleString(self, node, frame):
        return Static(node.evaluated_value)

    def expr_ConcatenatedString(self, node, frame):
        return Static(node.evaluated_value)

    def expr_Ellipsis(self, node, frame):
        return Static(Ellipsis)

    def expr_Tuple(self, node: cst.Tuple, frame):
        return Seq(self.elements(node.elements, frame), "tuple")

    def expr_List(self, node: cst.List, frame):
        return Seq(self.elements(node.elements, frame), "list")

    def elements(self, elements, frame) -> list:
        items = []
        for el in elements:
            if isinstance(el, cst.StarredElement):
                items.extend(self.iterate(self.expr(el.value, frame), self.span(el, frame)))
            else:
                items.append(self.expr(el.value, frame))
        return items

    def expr_Dict(self, node: cst.Dict, frame):
        out = {}
        for el in node.elements:
            if not isinstance(el, cst.DictElement):
                raise UnsupportedSyntaxError("`**` in a dict display is not supported yet", self.span(el, frame))
            key = self.expr(el.key, frame)
            if not is_static(key):
                raise LoweringError("dict keys must be compile-time values", self.span(el.key, frame))
            out[static_value(key)] = self.expr(el.value, frame)
        if all(is_static(v) for v in out.values()):
            return Static({k: static_value(v) for k, v in out.items()})
        return Static(out)  # a compile-time dict of values; items may be nodes

    # --- operators -------------------------------------------------------------------------
    def expr_BinaryOperation(self, node: cst.BinaryOperation, frame):
        op, fn = BINARY[type(node.operator)]
        return self.binary(op, fn, self.expr(node.left, frame), self.expr(node.right, frame),
                           self.span(node, frame))

    def binary(self, op: str, fn, left, right, span):
        if is_static(left) and is_static(right):
            try:
                return Static(fn(static_value(left), static_value(right)))
            except Exception:
                pass  # raise it at run time, where eager Python raises it
        if isinstance(left, Seq) and isinstance(right, Seq) and op == "add":
            return Seq(left.items + right.items, left.kind)
        if isinstance(left, Seq) and op == "mul" and is_static(right):
            return Seq(left.items * static_value(right), left.kind)
        return self.emit(op, [left, right], span=span)

    def expr_UnaryOperation(self, node: cst.UnaryOperation, frame):
        value = self.expr(node.expression, frame)
        span = self.span(node, frame)
        if isinstance(node.operator, cst.Not):
            if is_static(value):
                return Static(not static_value(value))
            if isinstance(value, Seq):
                return Static(not value.items)
            return self.emit("not", [value], span=span)
        op, fn = UNARY[type(node.operator)]
        if is_static(value):
            try:
                return Static(fn(static_value(value)))
            except Exception:
                pass
        return self.emit(op, [value], span=span)

    def expr_Comparison(self, node: cst.Comparison, frame):
        span = self.span(node, frame)
        left = self.expr(node.left, frame)
        result = None
        for target in node.comparisons:
            right = self.expr(target.comparator, frame)
            if result is not None and not is_static(result):
                # `a < b < c` is `a < b and b < c`, with `b` evaluated once, as Python does
                previous, op_node = result, target.operator
                lhs, rhs = left, right
                return self.ternary(previous, lambda f: self.compare(op_node, lhs, rhs, span),
                                    lambda f: previous, frame, span)
            value = self.compare(target.operator, left, right, span)
            if result is None:
                result = value
            else:
                result = Static(static_value(result) and static_value(value)) if is_static(value) else value
            if is_static(result) and not static_value(result):
                return result  # short-circuit as Python does
            left = right
        return result

    def compare(self, cst_op, left, right, span):
        if type(cst_op) in STATIC_ONLY_COMPARE:
            fn = STATIC_ONLY_COMPARE[type(cst_op)]
            if is_static(left) and is_static(right):
                return Static(fn(static_value(left), static_value(right)))
            if isinstance(cst_op, (cst.Is, cst.IsNot)):
                # A run-time array is never identical to a compile-time object such as None.
                other = right if isinstance(left, Node) else left
                if is_static(other):
                    return Static(isinstance(cst_op, cst.IsNot))
                return self.emit("call", [left, right], {"fn": "operator.is_" if isinstance(cst_op, cst.Is)
                                                         else "operator.is_not"}, span)
            if isinstance(right, Seq) and all(is_static(i) for i in right.items) is False:
                pass
            self.require("in_runtime", span)
            contains = self.emit("call", [right, left], {"fn": "operator.contains"}, span)
            return contains if isinstance(cst_op, cst.In) else self.emit("not", [contains], span=span)
        op, fn = COMPARE[type(cst_op)]
        return self.binary(op, fn, left, right, span)

    def expr_BooleanOperation(self, node: cst.BooleanOperation, frame):
        left = self.expr(node.left, frame)
        is_and = isinstance(node.operator, cst.And)
        if is_static(left) or isinstance(left, Seq):
            truth = bool(static_value(left)) if is_static(left) else bool(left.items)
            if truth != is_and:
                return left
            return self.expr(node.right, frame)
        span = self.span(node, frame)
        # `a and b` is `b if a else a`; `a or b` is `a if a else b` (one evaluation of a).
        then_fn = (lambda f: self.expr(node.right, f)) if is_and else (lambda f: left)
        else_fn = (lambda f: left) if is_and else (lambda f: self.expr(node.right, f))
        return self.ternary(left, then_fn, else_fn, frame, span)

    def expr_IfExp(self, node: cst.IfExp, frame):
        test = self.expr(node.test, frame)
        if is_static(test) or isinstance(test, Seq):
            truth = bool(static_value(test)) if is_static(test) else bool(test.items)
            return self.expr(node.body if truth else node.orelse, frame)
        return self.ternary(test, lambda f: self.expr(node.body, f), lambda f: self.expr(node.orelse, f),
                            frame, self.span(node, frame))

    # --- attributes and subscripts ----------------------------------------------------------
    def expr_Attribute(self, node: cst.Attribute, frame):
        return self.attribute(self.expr(node.value, frame), node.attr.value, self.span(node, frame))

    def attribute(self, value, name: str, span):
        if isinstance(value, Static) and isinstance(value.value, np.ndarray):
            value = self.latest_version(self.array_value(value, span))  # a weight: read at run time, then `.T`
        if isinstance(value, Static):
            if name in self.mutated_attrs and not isinstance(getattr(type(value.value), name, None), property):
                # this compile writes `<obj>.name`: a compile-time read would go stale
                return self.emit("getattr", [self.object_operand(value, span)], {"name": name}, span, name=name)
            try:
                result = getattr(value.value, name)
            except AttributeError as e:
                raise LoweringError(str(e), span) from None
            path = value.path.attr(name) if value.path else None
            self.guards.read(path, result, value.value)
            return self.reached(self.runtime_container(Static(result, path)), span)
        if isinstance(value, Seq) and name in SEQ_METHODS:
            return SeqMethod(value, name)
        if isinstance(value, Node):
            return self.array_attribute(value, name, span)
        raise LoweringError(f"{describe_value(value)} has no attribute `{name}`", span)

    def array_attribute(self, value: Node, name: str, span):
        t = value.type
        if name == "shape":
            if isinstance(t, ArrayType) and t.shape is not None:
                return Seq([Static(d) if d is not None else self.emit("dim", [value], {"axis": k}, span)
                            for k, d in enumerate(t.shape)], "tuple")
            return self.emit("shape", [value], span=span)
        if name == "ndim":
            if isinstance(t, ArrayType) and t.shape is not None:
                return Static(len(t.shape))
            return self.emit("ndim", [value], span=span)
        if name == "size":
            if isinstance(t, ArrayType) and t.is_static:
                return Static(int(np.prod(t.shape)))
            return self.emit("size", [value], span=span)
        if name == "dtype":
            if isinstance(t, ArrayType) and t.dtype is not None:
                return Static(np.dtype(t.dtype))
            raise LoweringError("the dtype of this value is not known at compile time", span)
        if name == "T":
            return self.emit("T", [value], span=span)
        if isinstance(t, ArrayType) and hasattr(np.ndarray, name) and not callable(getattr(np.ndarray, name)):
            if name in ("itemsize", "nbytes") and t.is_static:
                return Static(getattr(np.empty(t.shape, t.dtype), name))
            return self.emit("getattr", [value], {"name": name}, span, name=name)  # x.real, x.strides...
        return MethodVal(value, name)

    def expr_Subscript(self, node: cst.Subscript, frame):
        base = self.expr(node.value, frame)
        span = self.span(node, frame)
        items = [self.subscript_item(el.slice, frame) for el in node.slice]
        key = items[0] if len(items) == 1 else Seq(items, "tuple")
        return self.subscript(base, key, span)

    def subscript_item(self, item, frame):
        if isinstance(item, cst.Index):
            return self.expr(item.value, frame)
        parts = [None if p is None else self.expr(p, frame) for p in (item.lower, item.upper, item.step)]
        if all(p is None or is_static(p) for p in parts):
            return Static(slice(*(None if p is None else static_value(p) for p in parts)))
        return ("slice", parts)

    def subscript(self, base, key, span):
        if isinstance(base, Static) and isinstance(base.value, dict) and is_static(key):
            try:
                value = base.value[static_value(key)]
            except KeyError as e:
                raise LoweringError(f"KeyError: {e}", span) from None
            if isinstance(value, (Node, Seq)):
                return value
            if isinstance(value, Static):
                return self.reached(value, span)
            path = base.path.item(static_value(key)) if base.path and _pathable(static_value(key)) else None
            self.guards.read(path, value, base.value)
            return self.reached(Static(value, path), span)
        if isinstance(base, Static) and _static_key(key):
            k = _key_value(key)
            try:
                item = base.value[k]
            except Exception as e:
                raise LoweringError(f"{type(e).__name__}: {e}", span) from None
            path = base.path.item(k) if base.path and _pathable(k) else None
            if path is None and base.path is not None and isinstance(k, slice):
                self.guards.length(base.path, base.value)  # a slice depends on the length
            self.guards.read(path, item, base.value)
            return self.reached(Static(item, path), span)
        if isinstance(base, Seq):
            if not _static_key(key):
                raise LoweringError("a tuple or list of compile-time structure needs a compile-time index",
                                    span, hint="index an array instead (np.stack the items first)")
            k = _key_value(key)
            if isinstance(k, slice):
                return Seq(base.items[k], base.kind)
            try:
                return base.items[k]
            except (IndexError, TypeError) as e:
                raise LoweringError(f"{type(e).__name__}: {e}", span) from None
        if isinstance(base, Node) and isinstance(base.type, TupleType) and _static_key(key):
            k = _key_value(key)
            if isinstance(k, int):
                return self.emit("tuple_get", [base], {"index": k % len(base.type.items)}, span)
        if isinstance(base, Static) and not hasattr(base.value, "shape"):
            from .calls import NeedsStatic
            raise NeedsStatic(f"indexing a compile-time {type(base.value).__name__} needs a compile-time index",
                              span)
        if isinstance(base, (Node, Static)):
            index, operands = self.index_of(key, span)
            operands = [self.emit("list", o.items, span=span) if isinstance(o, _ListIndex) else o for o in operands]
            return self.emit("getitem", [base] + operands, {"index": index}, span)
        raise LoweringError(f"cannot index {describe_value(base)}", span)

    def index_of(self, key, span) -> tuple:
        """An `Index` attribute with `$k` for run-time parts, and the operands they refer to."""
        items = key.items if isinstance(key, Seq) and key.kind == "tuple" else [key]
        operands: list = []
        out = []

        def ref(value):
            operands.append(value)
            return OperandRef(len(operands))  # operand 0 is the indexed value

        for item in items:
            if isinstance(item, tuple) and item and item[0] == "slice":
                out.append(slice(*(None if p is None else (static_value(p) if is_static(p) else ref(p))
                                   for p in item[1])))
            elif isinstance(item, Static) and (item.value is None or item.value is Ellipsis
                                               or isinstance(item.value, (int, slice, np.integer))):
                v = item.value
                out.append(int(v) if isinstance(v, np.integer) else v)
            elif isinstance(item, Static) and isinstance(item.value, bool):
                out.append(item.value)
            elif isinstance(item, Seq) and item.kind == "list" or isinstance(item, Static) and isinstance(
                    item.value, list):
                # a list index selects along one axis (a tuple would index several axes)
                items = item.items if isinstance(item, Seq) else [Static(v) for v in item.value]
                out.append(ref(_ListIndex(items)))
            else:
                out.append(ref(item))
        return Index(out), operands

    # --- displays and comprehensions --------------------------------------------------------
    def expr_DictComp(self, node, frame):
        keys = []
        values = []
        node_as_pairs = node.with_changes()
        results = self.comprehension(node_as_pairs, frame, element=lambda f: (self.expr(node.key, f),
                                                                               self.expr(node.value, f)))
        out = {}
        for key, value in results:
            if not is_static(key):
                raise LoweringError("dict keys must be compile-time values", self.span(node.key, frame))
            out[static_value(key)] = value
        del keys, values
        if all(is_static(v) for v in out.values()):
            return Static({k: static_value(v) for k, v in out.items()})
        return Static(out)

    def expr_ListComp(self, node, frame):
        return Seq(self.comprehension(node, frame), "list")

    def expr_GeneratorExp(self, node, frame):
        return Seq(self.comprehension(node, frame), "tuple")

    def comprehension(self, node, frame, element=None) -> list:
        """Unrolled at compile time over compile-time sequences, as a loop over them would be."""
        results: list = []
        inner = frame.fork()
        meter = self.comprehension_meter(node, frame)  # transpiler/budget.py

        def run(clause):
            if clause is None:
                results.append(element(inner) if element else self.expr(node.elt, inner))
                return
            iterable = self.expr(clause.iter, inner)
            items = self.iterate(iterable, self.span(clause.iter, inner))
            for item in self.count_comprehension(meter, clause, items):
                self.assign_target(clause.target, item, inner)
                ok = True
                for cond in clause.ifs:
                    test = self.expr(cond.test, inner)
                    if not is_static(test):
                        raise UnsupportedSyntaxError("a comprehension filter on run-time values is not "
                                                     "supported", self.span(cond, inner))
                    ok = ok and bool(static_value(test))
                if ok:
                    run(clause.inner_for_in)

        run(node.for_in)
        return results

    def expr_FormattedString(self, node, frame):
        """Compile-time f-strings are computed now; with run-time values, `template.format(...)`."""
        pieces, values = [], []
        for part in node.parts:
            if isinstance(part, cst.FormattedStringText):
                pieces.append(("text", part.value))
                continue
            value = self.expr(part.expression, frame)
            spec = part.format_spec
            if spec and any(not isinstance(p, cst.FormattedStringText) for p in spec):
                raise UnsupportedSyntaxError("nested replacement fields in a format spec are not supported",
                                             self.span(part, frame), rule=rule_for("fstring_runtime"))
            fmt = "".join(p.value for p in spec if isinstance(p, cst.FormattedStringText)) if spec else ""
            conversion = part.conversion
            if part.equal is not None:  # f"{n=}": the expression's text, `=`, then its repr by default
                eq = part.equal
                pieces.append(("text", part.whitespace_before_expression.value
                               + frame.parsed.module.code_for_node(part.expression)
                               + part.whitespace_after_expression.value + eq.whitespace_before.value + "="
                               + eq.whitespace_after.value))
                if conversion is None and not fmt:
                    conversion = "r"
            pieces.append(("value", value, conversion, fmt))
            values.append(value)
        if all(is_static(v) for v in values):
            out = []
            for piece in pieces:
                if piece[0] == "text":
                    out.append(piece[1])
                else:
                    v = static_value(piece[1])
                    v = repr(v) if piece[2] == "r" else str(v) if piece[2] == "s" else ascii(v) if piece[2] == "a" \
                        else v
                    out.append(format(v, piece[3]))
            return Static("".join(out))
        self.require_or_unroll("fstring_runtime", self.span(node, frame))
        template = "".join(p[1].replace("{", "{{").replace("}", "}}") if p[0] == "text" else
                           "{" + (f"!{p[2]}" if p[2] else "") + (f":{p[3]}" if p[3] else "") + "}" for p in pieces)
        return self.emit("format", values, {"template": template}, self.span(node, frame))

    def expr_Lambda(self, node: cst.Lambda, frame):
        return SourceFunc(node, frame, "<lambda>", self.param_defaults(node.params, frame))

    # --- iteration (compile-time) ------------------------------------------------------------
    def iterate(self, value, span) -> list:
        """The items of a compile-time iterable, each with its access path."""
        if isinstance(value, Seq):
            return list(value.items)
        if isinstance(value, Static):
            obj = value.value
            if isinstance(obj, dict):
                self.guards.length(value.path, obj)   # keys added or removed recompile
                return [Static(k) for k in obj]
            if isinstance(obj, (list, tuple)) or hasattr(obj, "__getitem__") and hasattr(obj, "__len__") \
                    and not isinstance(obj, (str, bytes, np.ndarray)):
                items = [Static(obj[k], value.path.item(k) if value.path else None) for k in range(len(obj))]
                if not is_value(obj):  # a literal list is guarded whole, where it was read
                    self.guards.length(value.path, obj)
                    for item in items:
                        self.guards.read(item.path, item.value, obj)
                return [self.reached(item, span) for item in items]
            try:
                return [Static(v) for v in obj]
            except TypeError:
                raise LoweringError(f"{type(obj).__name__} is not iterable", span) from None
        if isinstance(value, Node) and isinstance(value.type, ArrayType) and value.type.shape and \
                value.type.shape[0] is not None:
            return [self.emit("getitem", [value], {"index": Index([k])}, span) for k in range(value.type.shape[0])]
        if isinstance(value, Node) and isinstance(value.type, TupleType):
            return [self.emit("tuple_get", [value], {"index": k}, span) for k in range(len(value.type.items))]
        if isinstance(value, Node) and value.op == "shape" and value.operands:
            raise LoweringError(f"the rank of `{value.operands[0].name or 'the array'}.shape` is not known at "
                                "compile time, so it cannot be unpacked or iterated over", span,
                                hint="index it instead (`x.shape[0]`), or call with an array of known rank")
        raise LoweringError(f"cannot iterate over {describe_value(value)}" +
                            ("" if isinstance(value, Node) else " at compile time"), span)


SEQ_METHODS = {"append", "extend", "insert", "pop", "index", "count", "reverse", "copy", "clear", "remove", "sort"}


class SeqMethod:
    """`xs.append` on a compile-time list of values, waiting for its call."""

    def __init__(self, seq, name):
        self.seq = seq
        self.name = name


def rule_for(key):
    from .rules import rule
    return rule(key)


class _ListIndex:
    """A list used as an index: becomes a `list` node."""

    def __init__(self, items):
        self.items = items


def _static_key(key) -> bool:
    return is_static(key) and not (isinstance(key, tuple) and key and key[0] == "slice")


def _key_value(key):
    return static_value(key)


def _pathable(key) -> bool:
    return isinstance(key, (int, str)) and not isinstance(key, bool)


def _op_text(op) -> str:
    return {cst.Is: "is", cst.IsNot: "is not", cst.In: "in", cst.NotIn: "not in"}[type(op)]


def _construct_name(node) -> str:
    names = {"NamedExpr": "assignment expression `:=`", "Await": "`await`", "Yield": "`yield`",
             "SetComp": "set comprehension", "Set": "set display", "DictComp": "dict comprehension",
             "StarredElement": "starred expression"}
    return names.get(type(node).__name__, f"`{type(node).__name__}` expression")


__all__ = ["ExpressionLowering", "RangeVal", "ScalarType"]


def _visible(node: Node, graph) -> bool:
    """Is `node` defined in `graph` or in a graph enclosing it?"""
    while graph is not None:
        if node.graph is graph:
            return True
        graph = graph.parent.graph if graph.parent is not None else None
    return False
