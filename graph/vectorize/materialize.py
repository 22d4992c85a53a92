"""Body operands as vectorized values: the loop's arguments, constants and affine integers as
scratch nodes, and the eager stand-ins (probes) that give each value's type."""

from __future__ import annotations

import itertools
from typing import Any

import numpy as np

from ..analysis.affine import Affine
from ..analysis.dependence import K
from ..ir import Node
from ..literals import OperandRef
from ..ops import OPS
from ..types import ArrayType, members
from . import probes as P
from .integers import interval, outer_affine
from .legality import check_fresh
from .state import LoopState
from .values import MATH_FUNCS, VI, Bail, DimKey, ValueKind, is_int_type, is_int_value, op_callable, op_text, static_attrs


def bind_args(st: LoopState) -> None:
    args = st.body.args
    index = args[0]
    aff = st.start + Affine.of(K) * st.step
    st.env[index.id] = VI(ValueKind.AFFINE, aff=aff, probes=(1,), ival=interval(st, aff), text=index.name or "i")
    for j in range(st.n_carried):
        init = st.loop.operands[3 + j]
        st.env[args[1 + j].id] = VI(ValueKind.CARRIED, j=j, probes=probes_of_outer(init), text=args[1 + j].name)
    for arg, outer in zip(args[1 + st.n_carried:], st.loop.operands[3 + st.n_carried:]):
        st.env[arg.id] = outer_value(st, outer, arg.name)


def probes_of_outer(g: Node) -> tuple:
    try:
        if g.op == "const":
            return (P.probe_of_value(g.value),)
        return tuple(P.eager_probe(t) for t in members(g.type))   # `f32[]|float`: one of each
    except P.ProbeError:
        pass
    try:
        return (probe_of_outer(g, 8),)   # a type not known when the function was typed
    except P.ProbeError:
        return ()


def probe_of_outer(g: Node, depth: int) -> Any:
    """The stand-in of a value from outside the loop. A value whose type was not known when the
    function was typed (`mean = s / m` after a loop that summed into `s`, now vectorized into a
    reduction of a known type) is computed from its operands' stand-ins, as the body's values are."""
    if g.op == "const":
        return P.probe_of_value(g.value)
    try:
        return P.eager_probe(g.type)
    except P.ProbeError:
        module, _, name = str(g.attrs.get("fn", "")).rpartition(".")
        if g.op == "call" and module == "math" and name in MATH_FUNCS and "kw" not in g.attrs:
            return 0.75   # a Python float, as the `math` functions return (calls.visit_call)
        rebinds = g.op == "inplace"   # `s /= m` on a number rebinds s to `s / m`
        op = OPS.get(g.attrs["op"] if rebinds else g.op)
        if depth <= 0 or op is None or g.regions or not (g.is_pure or rebinds) or \
                op.fn is None and op.emit not in ("method", "attr"):
            raise
    args = [probe_of_outer(o, depth - 1) for o in g.operands]
    if rebinds:
        if isinstance(args[0], np.ndarray):
            raise P.ProbeError("an array updated in place")
        return P.evaluate(op.fn if op.emit not in ("method", "attr") else op, *args)
    return P.evaluate(op_callable(g), *args, **static_attrs(g.attrs))


def outer_value(st: LoopState, g: Node, text: str = "") -> VI:
    if is_int_type(g.type) or (g.op == "const" and is_int_value(g.value)):
        aff = outer_affine(st, g)
        return VI(ValueKind.AFFINE, aff=aff, probes=probes_of_outer(g), ival=interval(st, aff), text=text or g.name)
    if g.op == "const":
        return VI(ValueKind.UNIFORM, node=st.scratch.const(g.value), probes=probes_of_outer(g), text=repr(g.value),
                  const=g.value, has_const=True)
    ident = g if isinstance(g.type, ArrayType) and g.type.shape != () else None
    return VI(ValueKind.UNIFORM, node=st.scratch.ext(g), probes=probes_of_outer(g), ident=ident, text=text or g.name)


def lookup(st: LoopState, node: Node) -> VI:
    vi = st.env.get(node.id)
    if vi is not None:
        return vi
    if node.op == "const":
        return const_vi(st, node.value)
    raise Bail(f"internal: `{node.name or node.op}` has no translation")


def const_vi(st: LoopState, value) -> VI:
    if is_int_value(value):
        return VI(ValueKind.AFFINE, aff=Affine.constant(int(value)), probes=(value,), ival=(int(value), int(value)),
                  text=repr(value), const=value, has_const=True)
    try:
        probes = (P.probe_of_value(value),)
    except P.ProbeError:
        probes = ()
    return VI(ValueKind.UNIFORM, node=st.scratch.const(value), probes=probes, text=repr(value), const=value,
              has_const=True)


def value_node(st: LoopState, vi: VI) -> Node:
    if vi.kind in (ValueKind.UNIFORM, ValueKind.VARYING):
        if vi.read_at is not None:
            check_fresh(st, vi)
        return vi.node
    if vi.kind == ValueKind.AFFINE:
        node = materialize(st, vi.aff)
        if st.compress is not None and vi.varying:
            node = compressed(st, node)
        return node
    raise Bail(f"the loop-carried value `{vi.text}` is used other than to accumulate into it")


def compressed(st: LoopState, node: Node) -> Node:
    """`v[m]`: the elements of a per-iteration value for the iterations a masked branch runs."""
    key = (node.id, st.compress.id)
    cached = st.compress_cache.get(key)
    if cached is None:
        cached = st.compress_cache[key] = st.scratch.getitem(node, [OperandRef(1)], [st.compress], cse=False)
    return cached


def materialize(st: LoopState, aff: Affine) -> Node:
    cached = st.affine_nodes.get(aff)
    if cached is not None:
        return cached
    c = aff.coef(K)
    if c:
        first = aff.without(K)
        stop = first + st.trip_aff * c
        length = st.trip_aff.const if st.trip_aff.is_const else None
        if first.is_const or not st.trip_aff.is_const:
            bounds = [materialize(st, first), materialize(st, stop)]
            node = st.scratch.op("arange", bounds + ([st.scratch.const(c)] if c != 1 else []),
                                 type=ArrayType("int64", (length,)))
        else:  # arange(c*T) + offset: a constant range stays loop-invariant in enclosing loops
            bounds = [st.scratch.const(0), st.scratch.const(st.trip_aff.const * c)]
            base = st.scratch.op("arange", bounds + ([st.scratch.const(c)] if c != 1 else []),
                                 type=ArrayType("int64", (length,)))
            node = st.scratch.op("add", [base, materialize(st, first)])
    elif aff.is_const:
        node = st.scratch.const(aff.const)
    else:
        node = None
        for key, coef in aff.terms:
            term = symbol_node(st, key)
            if coef == -1:
                term = st.scratch.op("neg", [term])
            elif coef != 1:
                term = st.scratch.op("mul", [term, st.scratch.const(coef)])
            node = term if node is None else st.scratch.op("add", [node, term])
        if aff.const:
            node = st.scratch.op("add" if aff.const > 0 else "sub", [node, st.scratch.const(abs(aff.const))])
    st.affine_nodes[aff] = node
    return node


def symbol_node(st: LoopState, key) -> Node:
    if isinstance(key, DimKey):
        if key.node is not None:
            return st.scratch.ext(key.node)
        return st.scratch.op("dim", [st.scratch.ext(key.array)], {"axis": key.axis})
    if isinstance(key, Node):
        return key if key.graph is st.scratch.g else st.scratch.ext(key)
    raise Bail("internal: unknown affine symbol")


def index_value(st: LoopState, aff: Affine):
    """A slice bound or index: an int literal, or (OperandRef placeholder, operand)."""
    if aff.is_const:
        return aff.const
    return materialize(st, aff)


def eager_probes(node: Node, vis: list, fn=None, attrs=None) -> tuple:
    """Eager per-iteration stand-ins of `node`'s result, one per combination of operand types."""
    fn = fn or op_callable(node)
    attrs = static_attrs(node.attrs if attrs is None else attrs)
    combos = list(itertools.islice(itertools.product(*[v.probes or (None,) for v in vis]), 16))
    out = []
    for combo in combos:
        if any(c is None for c in combo):
            raise Bail(f"the type of an operand of `{op_text(node)}` is not known")
        try:
            out.append(P.evaluate(fn, *combo, **attrs))
        except P.ProbeError as e:
            raise Bail(str(e)) from None
    return tuple(P.unique_probes(out))


def checked(fn, args, kwargs) -> Any:
    try:
        return P.evaluate(fn, *args, **kwargs)
    except P.ProbeError as e:
        raise Bail(str(e)) from None
