"""Apply algebraic identities that keep every result's value, dtype and shape exactly."""

from __future__ import annotations

from typing import Optional

from ..alias import Aliases, holds_memory
from ..ir import Graph, Node
from ..ops import infer_type
from ..types import ArrayType, ScalarType, Type, type_of_value

_ONE_OPS = {"mul": "both", "truediv": "right", "pow": "right"}
_NONE = object()


def run(graph: Graph) -> bool:
    """Rewrite pure nodes by identities; True if anything changed.

    Before:
      graph f(%x: f32[4,3]) -> f32[3,4]
        %0 = mul(%x, 1) : f32[4,3]
        %1 = pow(%0, 2) : f32[4,3]
        %2 = neg(%1) : f32[4,3]
        %3 = neg(%2) : f32[4,3]
        %4 = T(%3) : f32[3,4]
        %5 = T(%4) : f32[4,3]
        %6 = where(True, %5, 0.0) : f32[4,3]
        %7 = T(%6) : f32[3,4]
        return %7
    After (nodes left without users go to DCE):
      graph f(%x: f32[4,3]) -> f32[3,4]
        %0 = mul(%x, 1) : f32[4,3]
        %1 = mul(%x, %x) : f32[4,3]
        %2 = pow(%x, 2) : f32[4,3]
        %3 = neg(%1) : f32[4,3]
        %4 = neg(%3) : f32[4,3]
        %5 = T(%1) : f32[3,4]
        %6 = T(%5) : f32[4,3]
        %7 = where(True, %1, 0.0) : f32[4,3]
        %8 = T(%1) : f32[3,4]
        return %8

    The rules: x*1, 1*x, x/1, x**1, x-0 -> x; x+0, 0+x -> x for integers and booleans only
    (-0.0 + 0 is +0.0); x**2 -> x*x; x**0.5 -> sqrt(x) on arrays (what NumPy computes anyway);
    -(-x) -> x; x.T.T -> x; transpose of transpose -> one transpose (or x); reshape of reshape
    -> one reshape; reshape to x's own static shape -> x; x.astype(x.dtype) -> x;
    where(True, a, b) -> a, where(False, a, b) -> b, where(c, a, a) -> a; and `a op= b` on a Python
    number `a` -> `a op b` (numbers have no in-place form: Python rebinds the name to `a op b`),
    which is pure, so the emitter spells it inline (`crc = crc >> 1`, not a copy of `crc` and then
    `>>=` on the copy, one more store and load per iteration of a Python loop).

    A rule fires only when the result type equals the replacement's type, with static shapes
    wherever broadcasting could change the shape (`x * 1.0` on an int array is a float array;
    `x + 0` with a larger zero array broadcasts). Replacing a node by its operand `x` makes two
    values share one buffer, so for arrays it also needs: nothing ever writes the memory of
    either (`y = x * 1; y += 1` must not write `x`), and the result does not reach the caller.
    """
    changed = False
    for node in graph.nodes:
        for region in node.regions:
            changed |= run(region)
    aliases: Optional[Aliases] = None
    for node in list(graph.nodes):
        if node.op == "inplace" and _number_update(graph, node):
            changed = True
            continue
        if not node.is_pure or node.op == "const":
            continue
        aliases = aliases or Aliases(graph)
        if _rewrite(graph, aliases, node):
            aliases = None
            changed = True
    return changed


def _square_is_product(t: Type) -> bool:
    """Is `x ** 2` exactly `x * x`? For arrays and NumPy scalars (np.square) and Python ints; a Python
    float's `**` raises OverflowError where `*` gives inf."""
    if isinstance(t, ArrayType):
        return True
    return isinstance(t, ScalarType) and t.kind in ("int", "bool")


def _rewrite(graph: Graph, aliases: Aliases, node: Node) -> bool:
    op, ops = node.op, node.operands
    if node.attrs.get("kw"):
        return False
    # x * 1, 1 * x, x / 1, x ** 1 -> x;  x - 0 -> x;  x + 0 -> x (integers)
    if op in _ONE_OPS and len(ops) == 2:
        sides = [(0, 1), (1, 0)] if _ONE_OPS[op] == "both" else [(0, 1)]
        for keep, const in sides:
            if _const_equals(ops[const], 1) and _replace_by(graph, aliases, node, ops[keep], scalar_other=True):
                return True
    if op in ("add", "sub") and len(ops) == 2:
        sides = [(0, 1), (1, 0)] if op == "add" else [(0, 1)]
        for keep, const in sides:
            if _const_equals(ops[const], 0) and (op == "sub" or _integral(node.type)) \
                    and _replace_by(graph, aliases, node, ops[keep], scalar_other=True):
                return True
    # x ** 2 -> x * x (not on Python floats: `1e200 ** 2` raises OverflowError, `1e200 * 1e200` is inf);
    # x ** 0.5 -> sqrt(x)
    if op == "pow" and len(ops) == 2:
        if _const_equals(ops[1], 2) and _square_is_product(ops[0].type):
            return _replace_with_new(graph, node, "mul", [ops[0], ops[0]])
        if _const_equals(ops[1], 0.5) and _floating_array(ops[0].type):  # NumPy's own fast path
            return _replace_with_new(graph, node, "sqrt", [ops[0]])
    # -(-x) -> x
    if op in ("neg", "negative") and len(ops) == 1 and ops[0].op == op and len(ops[0].operands) == 1 \
            and not ops[0].attrs:
        return _replace_by(graph, aliases, node, ops[0].operands[0])
    # x.T.T -> x;  transpose(transpose(x, p), q) -> transpose(x, p∘q)
    if op in ("T", "transpose") and ops[0].op in ("T", "transpose"):
        inner = ops[0]
        rank = _rank(inner.operands[0].type)
        outer_axes = _axes(node, rank)
        inner_axes = _axes(inner, rank)
        if rank is None or outer_axes is None or inner_axes is None:
            return False
        combined = tuple(inner_axes[a] for a in outer_axes)
        # transposes are always views: the result is x's buffer either way, so no buffer rules
        if combined == tuple(range(rank)):
            return _replace_by(graph, aliases, node, inner.operands[0], view_of_it=True)
        return _replace_with_new(graph, node, "transpose", [inner.operands[0]], const_operand=combined)
    # reshape(reshape(x, s1), s2) -> reshape(x, s2);  reshape(x, x.shape) -> x
    if op == "reshape" and len(ops) == 2 and ops[1].op == "const":
        base = ops[0]
        if base.op == "reshape" and len(base.operands) == 2:
            return _replace_with_new(graph, node, "reshape", [base.operands[0]], const_operand=ops[1].value,
                                     same_memory_as=base.operands[0], aliases=aliases)
        if _static(base.type) and node.type == base.type:
            return _replace_by(graph, aliases, node, base)
    # x.astype(x.dtype) -> x
    if op == "astype" and len(ops) == 1 and node.type == ops[0].type and _static(node.type):
        return _replace_by(graph, aliases, node, ops[0])
    # where(True, a, b) -> a;  where(False, a, b) -> b;  where(c, a, a) -> a
    if op == "where" and len(ops) == 3:
        cond, a, b = ops
        if cond.op == "const" and isinstance(cond.value, (bool, int)) or _np_bool(cond):
            chosen = a if bool(cond.value) else b
            return _static(node.type) and _replace_by(graph, aliases, node, chosen)
        if a is b and _static(node.type):
            return _replace_by(graph, aliases, node, a)
    return False


def _number_update(graph: Graph, node: Node) -> bool:
    """`inplace(a, b) {op=X}` on a Python number `a` (int, float, bool, complex) -> `X(a, b)`."""
    target = node.operands[0]
    if set(node.attrs) != {"op"} or not (isinstance(target.type, ScalarType)
                                         and target.type.kind in ("int", "float", "bool", "complex")):
        return False
    if not _replace_with_new(graph, node, node.attrs["op"], list(node.operands)):
        return False
    graph.erase(node)
    return True


# --- helpers ---------------------------------------------------------------------------------
def _const_equals(node: Node, number) -> bool:
    if node.op != "const":
        return False
    v = node.value
    if isinstance(v, bool) or not isinstance(v, (int, float)) and not _np_number(v):
        return False
    return v == number


def _np_number(v) -> bool:
    import numpy as np
    return isinstance(v, np.generic) and v.dtype.kind in "iuf"


def _np_bool(node: Node) -> bool:
    import numpy as np
    return node.op == "const" and isinstance(node.value, np.bool_)


def _integral(t: Type) -> bool:
    if isinstance(t, ScalarType):
        return t.kind in ("int", "bool")
    return isinstance(t, ArrayType) and t.dtype is not None and (t.dtype.startswith(("int", "uint")) or t.dtype == "bool")


def _static(t: Type) -> bool:
    return isinstance(t, ArrayType) and t.is_static or isinstance(t, ScalarType)


def _rank(t: Type) -> Optional[int]:
    return t.rank if isinstance(t, ArrayType) else None


def _floating_array(t: Type) -> bool:
    return isinstance(t, ArrayType) and t.dtype is not None and t.dtype.startswith("float")


def _axes(node: Node, rank: Optional[int]) -> Optional[tuple]:
    """The permutation a `T` / `transpose` node applies (axes attribute or constant operand)."""
    if rank is None or node.attrs.get("kw") or set(node.attrs) - {"axes"}:
        return None
    if node.op == "T" or (len(node.operands) == 1 and "axes" not in node.attrs):
        return tuple(reversed(range(rank))) if len(node.operands) == 1 else None
    if len(node.operands) == 2 and node.operands[1].op == "const":
        axes = node.operands[1].value
    elif len(node.operands) == 1:
        axes = node.attrs["axes"]
    else:
        return None
    if axes is None:
        return tuple(reversed(range(rank)))
    if isinstance(axes, tuple) and all(isinstance(a, int) for a in axes) and len(axes) == rank \
            and sorted(a % rank for a in axes) == list(range(rank)):
        return tuple(a % rank for a in axes)
    return None


def _replace_by(graph: Graph, aliases: Aliases, node: Node, value: Node, scalar_other: bool = False,
                view_of_it: bool = False) -> bool:
    """Use `value` for `node`: same type (static unless the other operand is a scalar), same buffer rules.

    `view_of_it`: `node` is known to be a view of all of `value` (x.T.T), so sharing is no change.
    """
    if node.type != value.type or value.op == "const" and not isinstance(value.type, ScalarType):
        return False
    if not (_static(node.type) or scalar_other and _other_operands_scalar(node, value)):
        return False
    if holds_memory(node.type) and not view_of_it and not _may_share(aliases, node, value):
        return False
    graph.replace_all_uses(node, value)
    return True


def _other_operands_scalar(node: Node, value: Node) -> bool:
    return all(o is value or o.op == "const" and isinstance(o.type, ScalarType) for o in node.operands)


def _may_share(aliases: Aliases, node: Node, value: Node) -> bool:
    """May `node`'s users see `value`'s very buffer instead of a new one?

    Only if nothing ever writes either, and, when `node` reaches the caller, `value` is a buffer
    this graph made that does not reach the caller by another way (the caller must not get its
    own argument back, nor two names for one array).
    """
    memory = aliases.of(node) | aliases.of(value)
    if memory & aliases.all_writes():
        return False
    escaping = aliases.escaping()
    if aliases.of(node) & escaping:
        value_memory = aliases.of(value)
        if any(not isinstance(root, int) for root in value_memory) or value_memory & escaping:
            return False
    return True


def _replace_with_new(graph: Graph, node: Node, op: str, operands: list, const_operand=_NONE,
                      same_memory_as: Optional[Node] = None, aliases: Optional[Aliases] = None) -> bool:
    """Insert `op(operands[, const])` before `node` and use it instead, if its type is exactly node's."""
    if const_operand is not _NONE:
        operands = operands + [Node("const", (), {"value": const_operand}, type_of_value(const_operand))]
    new_type = infer_type(op, operands, {})
    if new_type != node.type or not (_static(new_type) or isinstance(new_type, ScalarType)):
        return False
    if same_memory_as is not None and not _may_share(aliases, node, same_memory_as):
        return False  # a view of x where eager code may have made a copy
    if const_operand is not _NONE:
        operands[-1] = graph.add("const", (), {"value": const_operand}, operands[-1].type, node.span, before=node)
    new = graph.add(op, operands, {}, new_type, node.span, node.name, before=node)
    graph.replace_all_uses(node, new)
    return True
