"""Lowering expressions: constants, displays, operators, boolean and conditional expressions, comprehensions, f-strings, lambdas."""

from __future__ import annotations

from typing import Any

import libcst as cst
import numpy as np

from ...graph.diagnostics import LoweringError, UnsupportedSyntaxError
from ...graph.guards import is_value
from ...graph.ir import Node
from ...graph.literals import Index
from ...graph.types import ArrayType, TupleType
from ..rules import BY_KEY, EXPRESSION_RULES, rule
from ..values import Seq, SourceFunc, Static, describe_value, is_static, static_value
from .operators import BINARY, COMPARE, STATIC_ONLY_COMPARE, UNARY


class ExpressionLowering:
    """Expressions other than names, attributes, subscripts and calls."""

    def expr(self, node: cst.BaseExpression, frame) -> Any:
        lower = self.expression_lowering.get(type(node))
        if lower is None:
            key = EXPRESSION_RULES.get(type(node).__name__)
            r = BY_KEY.get(key) if key else None
            raise UnsupportedSyntaxError(r.message if r else f"{_construct_name(node)} is not supported in a graph",
                                         frame.parsed.span(node), rule=r)
        value = lower(self, node, frame)
        return self.latest_version(value) if isinstance(value, Node) and self.refreshed else value

    def span(self, node, frame):
        return frame.parsed.span(node)
    def lower_literal(self, node, frame):
        """Numbers and strings: their value, now."""
        return Static(node.evaluated_value)

    def lower_ellipsis(self, node, frame):
        return Static(Ellipsis)

    def lower_tuple(self, node: cst.Tuple, frame):
        return Seq(self.elements(node.elements, frame), "tuple")

    def lower_list(self, node: cst.List, frame):
        return Seq(self.elements(node.elements, frame), "list")

    def elements(self, elements, frame) -> list:
        items = []
        for el in elements:
            if isinstance(el, cst.StarredElement):
                items.extend(self.iterate(self.expr(el.value, frame), self.span(el, frame)))
            else:
                items.append(self.expr(el.value, frame))
        return items

    def lower_dict(self, node: cst.Dict, frame):
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
    def lower_binary_operation(self, node: cst.BinaryOperation, frame):
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

    def lower_unary_operation(self, node: cst.UnaryOperation, frame):
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

    def lower_comparison(self, node: cst.Comparison, frame):
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

    def lower_boolean_operation(self, node: cst.BooleanOperation, frame):
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

    def lower_conditional_expression(self, node: cst.IfExp, frame):
        test = self.expr(node.test, frame)
        if is_static(test) or isinstance(test, Seq):
            truth = bool(static_value(test)) if is_static(test) else bool(test.items)
            return self.expr(node.body if truth else node.orelse, frame)
        return self.ternary(test, lambda f: self.expr(node.body, f), lambda f: self.expr(node.orelse, f),
                            frame, self.span(node, frame))
    # --- displays and comprehensions --------------------------------------------------------
    def lower_dict_comprehension(self, node, frame):
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

    def lower_list_comprehension(self, node, frame):
        return Seq(self.comprehension(node, frame), "list")

    def lower_generator_expression(self, node, frame):
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

    def lower_fstring(self, node, frame):
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
                                             self.span(part, frame), rule=rule("fstring_runtime"))
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

    def lower_lambda(self, node: cst.Lambda, frame):
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


def _construct_name(node) -> str:
    names = {"NamedExpr": "assignment expression `:=`", "Await": "`await`", "Yield": "`yield`",
             "SetComp": "set comprehension", "Set": "set display", "DictComp": "dict comprehension",
             "StarredElement": "starred expression"}
    return names.get(type(node).__name__, f"`{type(node).__name__}` expression")
