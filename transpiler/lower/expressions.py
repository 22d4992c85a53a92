"""Lowering expressions: constants, displays, operators, boolean and conditional expressions, comprehensions, f-strings, lambdas."""

from __future__ import annotations

import libcst as cst
import numpy as np

from ...graph.diagnostics import LoweringError, UnsupportedSyntaxError
from ...graph.guards import is_value
from ...graph.ir import Node
from ...graph.literals import Index
from ...graph.types import OBJECT, ArrayType, TupleType
from ..rules import rule
from ..literal_data import size_of
from ..static_pure import binary_refusal, budget_of, not_computed, wide_format
from ..values import Seq, SourceFunc, Static, describe_value, is_static, static_value
from .access import subscript
from .branches import ternary
from .budget import comprehension_meter, count_comprehension
from .callables import may_fold
from .operators import BINARY, COMPARE, OPERATOR_OPS, STATIC_ONLY_COMPARE, UNARY


def lower_literal(state, node, frame):
    """Numbers and strings: their value, now."""
    return Static(node.evaluated_value)


def lower_ellipsis(state, node, frame):
    return Static(Ellipsis)


def lower_tuple(state, node: cst.Tuple, frame):
    return Seq(elements(state, node.elements, frame), "tuple")


def lower_list(state, node: cst.List, frame):
    return Seq(elements(state, node.elements, frame), "list")


def elements(state, elements, frame) -> list:
    items = []
    for el in elements:
        if isinstance(el, cst.StarredElement):
            items.extend(iterate(state, state.lower_expr(el.value, frame), state.span(el, frame)))
        else:
            items.append(state.lower_expr(el.value, frame))
    return items


def lower_dict(state, node: cst.Dict, frame):
    out = {}
    for el in node.elements:
        if not isinstance(el, cst.DictElement):
            raise UnsupportedSyntaxError("`**` in a dict display is not supported yet", state.span(el, frame))
        key = state.lower_expr(el.key, frame)
        if not is_static(key):
            raise LoweringError("dict keys must be compile-time values", state.span(el.key, frame))
        out[static_value(key)] = state.lower_expr(el.value, frame)
    if all(is_static(v) for v in out.values()):
        return Static({k: static_value(v) for k, v in out.items()})
    return Static(out)  # a compile-time dict of values; items may be nodes


def lower_binary_operation(state, node: cst.BinaryOperation, frame):
    op, fn = BINARY[type(node.operator)]
    return binary(state, op, fn, state.lower_expr(node.left, frame), state.lower_expr(node.right, frame),
                       state.span(node, frame))


def binary(state, op: str, fn, left, right, span):
    refused = state.sealed and is_static(left) and is_static(right) and \
        binary_refusal(fn, static_value(left), static_value(right), budget_of(state.root_globals))
    if refused and getattr(state, "static_only", False):   # the file's module code: say why it is unknown
        raise not_computed("this value", refused, span)
    if is_static(left) and is_static(right) and not refused and may_fold(left) and may_fold(right):
        try:
            return Static(fn(static_value(left), static_value(right)))
        except Exception:
            pass  # raise it at run time, where eager Python raises it
    if op == "add" and _sequence_kind(left) is not None and _sequence_kind(left) == _sequence_kind(right):
        # `found + sub.items()`: compile-time structure stays compile-time (a loop over it unrolls)
        return Seq(_sequence_items(state, left, span) + _sequence_items(state, right, span), _sequence_kind(left))
    if isinstance(left, Seq) and op == "mul" and is_static(right):
        refused = state.sealed and binary_refusal(fn, tuple(left.items), static_value(right),
                                                  budget_of(state.root_globals))
        if refused:
            raise not_computed("this sequence", refused, span)
        return Seq(left.items * static_value(right), left.kind)
    if _object_operand(left) or _object_operand(right):   # `csr * x`: the object's own operator, at call time
        return state.emit(op, [left, right], span=span, type=OBJECT)
    return state.emit(op, [left, right], span=span)


def _object_operand(value) -> bool:
    """A compile-time object whose operators run at call time (a CSRTensor passed in, a user's class), or
    what an operator on one gave: what their operators give is up to them."""
    if isinstance(value, Node):
        return value.type == OBJECT and value.op in OPERATOR_OPS
    return is_static(value) and not isinstance(static_value(value), np.ndarray) and not may_fold(value)


def _sequence_kind(value):
    """"list"/"tuple" for a compile-time sequence (a `Seq`, or a compile-time list or tuple), else None."""
    if isinstance(value, Seq):
        return value.kind
    if isinstance(value, Static) and type(value.value) in (list, tuple):
        return type(value.value).__name__
    return None


def _sequence_items(state, value, span) -> list:
    return list(value.items) if isinstance(value, Seq) else iterate(state, value, span)


def lower_unary_operation(state, node: cst.UnaryOperation, frame):
    value = state.lower_expr(node.expression, frame)
    span = state.span(node, frame)
    if isinstance(node.operator, cst.Not):
        if is_static(value):
            return Static(not static_value(value))
        if isinstance(value, Seq):
            return Static(not value.items)
        return state.emit("not", [value], span=span)
    op, fn = UNARY[type(node.operator)]
    if is_static(value) and may_fold(value):   # `-csr`: its arrays are read at call time
        try:
            return Static(fn(static_value(value)))
        except Exception:
            pass
    return state.emit(op, [value], span=span, type=OBJECT if _object_operand(value) else None)


def lower_comparison(state, node: cst.Comparison, frame):
    span = state.span(node, frame)
    left = state.lower_expr(node.left, frame)
    result = None
    for target in node.comparisons:
        right = state.lower_expr(target.comparator, frame)
        if result is not None and not is_static(result):
            # `a < b < c` is `a < b and b < c`, with `b` evaluated once, as Python does
            previous, op_node = result, target.operator
            lhs, rhs = left, right
            return ternary(state, previous, lambda f: compare(state, op_node, lhs, rhs, span),
                                lambda f: previous, frame, span)
        value = compare(state, target.operator, left, right, span)
        if result is None:
            result = value
        else:
            result = Static(static_value(result) and static_value(value)) if is_static(value) else value
        if is_static(result) and not static_value(result):
            return result  # short-circuit as Python does
        left = right
    return result


def compare(state, cst_op, left, right, span):
    if type(cst_op) in STATIC_ONLY_COMPARE:
        fn = STATIC_ONLY_COMPARE[type(cst_op)]
        if isinstance(cst_op, (cst.In, cst.NotIn)):
            right = contents_read(state, right, span)   # `k in d` reads d's keys
        if is_static(left) and is_static(right):
            return Static(fn(static_value(left), static_value(right)))
        if isinstance(cst_op, (cst.Is, cst.IsNot)):
            # A run-time array is never identical to a compile-time object such as None (another
            # run-time value, an opaque call's result, may be).
            other, value = (right, left) if isinstance(left, Node) else (left, right)
            if is_static(other) and isinstance(getattr(value, "type", None), ArrayType):
                return Static(isinstance(cst_op, cst.IsNot))
            return state.emit("call", [left, right], {"fn": "operator.is_" if isinstance(cst_op, cst.Is)
                                                     else "operator.is_not"}, span)
        if isinstance(right, Seq) and all(is_static(i) for i in right.items) is False:
            pass
        state.require("in_runtime", span)
        contains = state.emit("call", [right, left], {"fn": "operator.contains"}, span)
        return contains if isinstance(cst_op, cst.In) else state.emit("not", [contains], span=span)
    op, fn = COMPARE[type(cst_op)]
    return binary(state, op, fn, left, right, span)


def lower_boolean_operation(state, node: cst.BooleanOperation, frame):
    left = state.lower_expr(node.left, frame)
    is_and = isinstance(node.operator, cst.And)
    if is_static(left) or isinstance(left, Seq):
        truth = bool(static_value(left)) if is_static(left) else bool(left.items)
        if truth != is_and:
            return left
        return state.lower_expr(node.right, frame)
    span = state.span(node, frame)
    # `a and b` is `b if a else a`; `a or b` is `a if a else b` (one evaluation of a).
    then_fn = (lambda f: state.lower_expr(node.right, f)) if is_and else (lambda f: left)
    else_fn = (lambda f: left) if is_and else (lambda f: state.lower_expr(node.right, f))
    return ternary(state, left, then_fn, else_fn, frame, span)


def lower_conditional_expression(state, node: cst.IfExp, frame):
    test = state.lower_expr(node.test, frame)
    if is_static(test) or isinstance(test, Seq):
        truth = bool(static_value(test)) if is_static(test) else bool(test.items)
        return state.lower_expr(node.body if truth else node.orelse, frame)
    return ternary(state, test, lambda f: state.lower_expr(node.body, f), lambda f: state.lower_expr(node.orelse, f),
                        frame, state.span(node, frame))


def lower_dict_comprehension(state, node, frame):
    keys = []
    values = []
    node_as_pairs = node.with_changes()
    results = comprehension(state, node_as_pairs, frame, element=lambda f: (state.lower_expr(node.key, f),
                                                                           state.lower_expr(node.value, f)))
    out = {}
    for key, value in results:
        if not is_static(key):
            raise LoweringError("dict keys must be compile-time values", state.span(node.key, frame))
        out[static_value(key)] = value
    del keys, values
    if all(is_static(v) for v in out.values()):
        return Static({k: static_value(v) for k, v in out.items()})
    return Static(out)


def lower_list_comprehension(state, node, frame):
    return Seq(comprehension(state, node, frame), "list")


def lower_generator_expression(state, node, frame):
    return Seq(comprehension(state, node, frame), "tuple")


def comprehension(state, node, frame, element=None) -> list:
    """Unrolled at compile time over compile-time sequences, as a loop over them would be."""
    results: list = []
    inner = frame.fork()
    meter = comprehension_meter(state, node, frame)  # lower/budget.py

    def run(clause):
        if clause is None:
            results.append(element(inner) if element else state.lower_expr(node.elt, inner))
            return
        iterable = state.lower_expr(clause.iter, inner)
        items = iterate(state, iterable, state.span(clause.iter, inner))
        for item in count_comprehension(state, meter, clause, items):
            state.assign_target(clause.target, item, inner)
            ok = True
            for cond in clause.ifs:
                test = state.lower_expr(cond.test, inner)
                if not is_static(test):
                    raise UnsupportedSyntaxError("a comprehension filter on run-time values is not "
                                                 "supported", state.span(cond, inner))
                ok = ok and bool(static_value(test))
            if ok:
                run(clause.inner_for_in)

    run(node.for_in)
    return results


def lower_fstring(state, node, frame):
    """Compile-time f-strings are computed now; with run-time values, `template.format(...)`."""
    pieces, values = [], []
    for part in node.parts:
        if isinstance(part, cst.FormattedStringText):
            pieces.append(("text", part.value))
            continue
        value = state.lower_expr(part.expression, frame)
        spec = part.format_spec
        if spec and any(not isinstance(p, cst.FormattedStringText) for p in spec):
            raise UnsupportedSyntaxError("nested replacement fields in a format spec are not supported",
                                         state.span(part, frame), rule=rule("fstring_runtime"))
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
    if all(is_static(v) for v in values) and not (state.sealed and any(
            p[0] == "value" and wide_format(p[3]) for p in pieces)):   # `f"{x:>1000000000}"`: not built now
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
    state.require_or_unroll("fstring_runtime", state.span(node, frame))
    template = "".join(p[1].replace("{", "{{").replace("}", "}}") if p[0] == "text" else
                       "{" + (f"!{p[2]}" if p[2] else "") + (f":{p[3]}" if p[3] else "") + "}" for p in pieces)
    return state.emit("format", values, {"template": template}, state.span(node, frame))


def lower_lambda(state, node: cst.Lambda, frame):
    return SourceFunc(node, frame, "<lambda>", param_defaults(state, node.params, frame))


def param_defaults(state, params: cst.Parameters, frame) -> dict:
    out = {}
    for p in list(params.posonly_params) + list(params.params) + list(params.kwonly_params):
        if p.default is not None:
            out[p.name.value] = state.lower_expr(p.default, frame)
    return out


def iterate(state, value, span) -> list:
    """The items of a compile-time iterable, each with its access path."""
    if isinstance(value, Seq):
        return list(value.items)
    if isinstance(value, Static):
        obj = value.value
        if state.sealed and isinstance(obj, (range, str, bytes)) and size_of(obj) is None:
            raise not_computed(f"the items of this {type(obj).__name__}", "it has too many to unroll without "
                               "running the file", span)
        if isinstance(obj, (dict, set, frozenset)):
            state.guards.keys(value.path, obj)   # keys added, removed or replaced recompile
            return [Static(k) for k in obj]
        if isinstance(obj, (list, tuple)) or hasattr(obj, "__getitem__") and hasattr(obj, "__len__") \
                and not isinstance(obj, (str, bytes, np.ndarray)):
            items = [Static(obj[k], value.path.item(k) if value.path else None) for k in range(len(obj))]
            if not is_value(obj):  # a literal list is guarded whole, where it was read
                state.guards.length(value.path, obj)
                for item in items:
                    state.guards.read(item.path, item.value, obj)
            return [state.reached(item, span) for item in items]
        if not hasattr(obj, "__iter__"):
            raise LoweringError(f"{type(obj).__name__} is not iterable", span)
        if state.sealed and not isinstance(obj, (enumerate, zip, reversed)):
            raise not_computed(f"the items of this {type(obj).__name__}", "it is not literal data", span)
        if isinstance(obj, (range, str, bytes)) or not value.from_outside:
            # immutable, or made by the function's own compile-time code (`enumerate([...])`)
            return [Static(v) for v in obj]
        # Any other iterable from outside (a custom `__iter__`, an iterator, a generator) may yield other
        # values at the next call, or be used up by iterating it here: never unrolled at compile time.
        raise LoweringError(f"cannot iterate over a `{type(obj).__name__}` at compile time: what it yields may "
                            "change between calls", span, hint="iterate over a list or tuple (read at each "
                                                               "call), or pass the values as arguments")
    if isinstance(value, Node) and isinstance(value.type, ArrayType) and value.type.shape and \
            value.type.shape[0] is not None:
        return [state.emit("getitem", [value], {"index": Index([k])}, span) for k in range(value.type.shape[0])]
    if isinstance(value, Node) and isinstance(value.type, TupleType):
        return [state.emit("tuple_get", [value], {"index": k}, span) for k in range(len(value.type.items))]
    if isinstance(value, Node) and value.op == "shape" and value.operands:
        raise LoweringError(f"the rank of `{value.operands[0].name or 'the array'}.shape` is not known at "
                            "compile time, so it cannot be unpacked or iterated over", span,
                            hint="index it instead (`x.shape[0]`), or call with an array of known rank")
    raise LoweringError(f"cannot iterate over {describe_value(value)}" +
                        ("" if isinstance(value, Node) else " at compile time"), span)


def contents_read(state, value, span, values: bool = False):
    """A compile-time container read whole by a builtin: a list's or tuple's items reached one by one
    (guarded, arrays as run-time values), a dict's or set's keys guarded in order, and with `values`
    (`dict(d)` copies them) a dict's items reached as `d[key]` is. Literal containers are already
    guarded whole where they were read."""
    if not isinstance(value, Static) or value.path is None or is_value(value.value):
        return value
    if isinstance(value.value, (dict, set, frozenset)):
        state.guards.keys(value.path, value.value)
        if values and isinstance(value.value, dict):
            return Static({key: subscript(state, value, Static(key), span) for key in value.value})
    elif type(value.value) in (list, tuple):
        return Seq(iterate(state, value, span), type(value.value).__name__)
    return value

