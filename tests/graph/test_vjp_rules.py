"""Every op of the op table against central finite differences (and autograd, where it knows the op).

The test enumerates graph/ops.py `OPS`: each op has a VJP rule (graph/derivatives.py `RULES`), a
reason it is not differentiable (`WHY_NOT`) or is handled by the transform itself (`BY_TRANSFORM`),
and each op with a rule has cases below. A case is a tiny graph built with the graph API around the
op; the harness appends the backward pass for a random cotangent of the output
(graph/autodiff `differentiate`), runs the graph through the interpreter and through the
emitted NumPy, and compares the gradients with central differences in float64 along a random
direction, and with `autograd.grad` of the same function written with `autograd.numpy`.
"""

from __future__ import annotations

import zlib
from dataclasses import dataclass
from typing import Callable, Optional

import autograd
import autograd.numpy as anp
import numpy as np
import pytest

from graphjit.backends.compile import compile_emitted
from graphjit.backends.emit_numpy import emit_function
from graphjit.backends.interpreter import Interpreter
from graphjit.graph import verify
from graphjit.graph.derivatives import BY_TRANSFORM, RULES, WHY_NOT
from graphjit.graph.ir import Graph, Node
from graphjit.graph.literals import OperandRef
from graphjit.graph.ops import OPS
from graphjit.graph.paths import Roots
from graphjit.graph.autodiff import NotDifferentiableError, differentiate
from graphjit.graph.types import FLOAT, ArrayType, ScalarType, array_type

PY_FLOAT = "f"            # an input that is a Python float rather than a float64 array


@dataclass
class Case:
    """A graph around one op: `build(b, *inputs)` returns its output; `ref(*values)` computes the
    same with autograd.numpy (None where autograd does not differentiate it)."""

    shapes: tuple
    build: Callable
    ref: Optional[Callable] = None
    domain: object = "real"         # one domain for every input, or one per input
    params: int = 0                 # this many leading inputs are weights (`param` nodes)

    def domain_of(self, k: int) -> str:
        return self.domain if isinstance(self.domain, str) else self.domain[k]


class Builder:
    """Adds nodes to the case's graph; plain Python values become constants."""

    def __init__(self, graph: Graph):
        self.graph = graph

    def node(self, value) -> Node:
        if isinstance(value, Node):
            return value
        if isinstance(value, tuple) and any(isinstance(v, Node) for v in value):
            return self.graph.add("tuple", [self.node(v) for v in value])
        return self.graph.const(value)

    def __call__(self, name: str, *operands, **attrs) -> Node:
        return self.graph.add(name, [self.node(o) for o in operands], attrs)


def sample(domain: str, shape, rng):
    size = () if shape == PY_FLOAT else shape
    if domain == "real":
        v = rng.standard_normal(size)
    elif domain == "positive":
        v = rng.uniform(0.5, 2.0, size)
    elif domain == "unit":
        v = rng.uniform(-0.9, 0.9, size)
    elif domain == "above1":
        v = rng.uniform(1.2, 3.0, size)
    elif domain == "nonzero":
        v = rng.uniform(0.5, 2.0, size) * rng.choice([-1.0, 1.0], size)
    elif domain == "with_nan":
        v = rng.standard_normal(size)
        v.flat[1] = np.nan
    else:
        raise AssertionError(domain)
    return float(v) if shape == PY_FLOAT else np.asarray(v, dtype=np.float64)


def input_type(shape):
    return FLOAT if shape == PY_FLOAT else array_type("float64", shape)


def build_graph(case: Case, with_gradient: bool, out_shape=None):
    graph = Graph("f")
    inputs = [graph.add_param(f"globals['p{k}']", input_type(s)) if k < case.params
              else graph.add_arg(f"x{k}", input_type(s)) for k, s in enumerate(case.shapes)]
    out = case.build(Builder(graph), *inputs)
    if not with_gradient:
        graph.set_outputs([out])
        return graph
    t = out.type
    if isinstance(t, ArrayType) and t.dtype == "float64" and out_shape is not None:
        seed = graph.add_arg("seed", array_type("float64", out_shape))   # shapes the graph may not know
    elif t == FLOAT or (isinstance(t, ScalarType) and t.kind == "float"):
        seed = graph.add_arg("seed", FLOAT)
    else:
        raise AssertionError(f"the case's output must be float64, not {t}")
    grads = differentiate(graph, inputs, out, seed=seed)
    graph.set_outputs([graph.add("tuple", [out, *grads])])
    verify(graph)
    return graph


def runners(graph: Graph, case: Case):
    def interpreted(values, seed=()):
        params = {f"p{k}": v for k, v in enumerate(values[:case.params])}
        return Interpreter(graph, Roots(globals_dict=params))(*values[case.params:], *seed)

    emitted = emit_function(graph)
    source = emitted.source

    def compiled(values, seed=()):
        params = {f"p{k}": v for k, v in enumerate(values[:case.params])}
        return compile_emitted(emitted, params, {})(*values[case.params:], *seed)
    return interpreted, compiled, source


def check_case(op: str, number: int, case: Case):
    rng = np.random.default_rng(zlib.crc32(f"{op}/{number}".encode()))
    values = [sample(case.domain_of(k), s, rng) for k, s in enumerate(case.shapes)]
    forward, _, _ = runners(build_graph(case, with_gradient=False), case)
    out = forward(values)
    seed = sample("real", PY_FLOAT if isinstance(out, float) else np.shape(out), rng)
    interpreted, compiled, source = runners(build_graph(case, True, np.shape(out)), case)
    what = f"{op} case {number} {case.shapes}:\n{source}"
    with np.errstate(all="ignore"):
        got = interpreted(values, (seed,))
        emitted = compiled(values, (seed,))
    for a, e in zip(emitted, got):
        np.testing.assert_allclose(a, e, rtol=1e-12, atol=1e-12, err_msg=f"emitted vs interpreted: {what}")
    grads = got[1:]
    for value, grad in zip(values, grads):
        assert np.shape(grad) == np.shape(value), f"gradient shape {np.shape(grad)}: {what}"

    def objective(vals):
        with np.errstate(all="ignore"):
            return float(np.nansum(seed * np.asarray(forward(vals))))
    direction = [sample("real", s, rng) for s in case.shapes]
    eps = 1e-6
    plus = [v + eps * d for v, d in zip(values, direction)]
    minus = [v - eps * d for v, d in zip(values, direction)]
    numeric = (objective(plus) - objective(minus)) / (2 * eps)
    analytic = sum(float(np.nansum(g * d)) for g, d in zip(grads, direction))
    assert abs(numeric - analytic) <= 1e-6 * (1 + abs(numeric)), \
        f"finite differences {numeric} vs gradient {analytic}: {what}"

    if case.ref is not None:
        np.testing.assert_allclose(got[0], case.ref(*values), rtol=1e-12, atol=1e-12, err_msg=f"forward: {what}")

        def loss(*vals):
            return anp.sum(seed * case.ref(*vals))
        for k, grad in enumerate(grads):
            expected = autograd.grad(loss, k)(*values)
            np.testing.assert_allclose(grad, expected, rtol=1e-9, atol=1e-12, err_msg=f"autograd, input {k}: {what}")


# --- cases --------------------------------------------------------------------------------------
SHAPES = [(), (3,), (2, 3), (1, 3)]
PAIRS = [((), ()), ((3,), (3,)), ((2, 3), (2, 3)), ((2, 3), (3,)), ((2, 3), (1, 3)), ((2, 1), (1, 3)), ((), (2, 3))]
CASES: dict = {}


def case(op: str, *cases: Case) -> None:
    CASES.setdefault(op, []).extend(cases)


def unary(op: str, ref, domain="real"):
    case(op, *[Case((s,), lambda b, x: b(op, x), ref, domain) for s in SHAPES])


def binary(op: str, ref, domain=("real", "real")):
    case(op, *[Case(pair, lambda b, x, y: b(op, x, y), ref, domain) for pair in PAIRS])


for _name, _domain in [
        ("abs", "nonzero"), ("absolute", "nonzero"), ("exp", "real"), ("exp2", "real"),
        ("expm1", "real"), ("log", "positive"), ("log2", "positive"), ("log10", "positive"),
        ("log1p", "positive"), ("sqrt", "positive"), ("square", "real"), ("sin", "real"),
        ("cos", "real"), ("tan", "unit"), ("arcsin", "unit"), ("arccos", "unit"), ("arctan", "real"),
        ("sinh", "real"), ("cosh", "real"), ("tanh", "real"), ("arcsinh", "real"), ("arccosh", "above1"),
        ("arctanh", "unit"), ("sign", "nonzero"), ("floor", "real"), ("ceil", "real"), ("trunc", "real"),
        ("rint", "real"), ("negative", "real"), ("reciprocal", "nonzero"), ("deg2rad", "real"),
        ("rad2deg", "real")]:
    unary(_name, getattr(anp, _name), _domain)
unary("cbrt", None, "nonzero")   # autograd has no VJP for these
unary("fabs", anp.fabs, "nonzero")
unary("neg", lambda x: -x)
unary("pos", None)              # autograd's boxes have no unary `+`
unary("py_abs", abs, "nonzero")

for _name, _ref, _domain in [
        ("add", anp.add, None), ("np_add", anp.add, None), ("sub", anp.subtract, None),
        ("subtract", anp.subtract, None), ("mul", anp.multiply, None), ("multiply", anp.multiply, None),
        ("truediv", anp.true_divide, ("real", "nonzero")), ("divide", anp.divide, ("real", "nonzero")),
        ("true_divide", anp.true_divide, ("real", "nonzero")),
        ("pow", anp.power, ("positive", "real")), ("power", anp.power, ("positive", "real")),
        ("float_power", None, ("positive", "real")),
        ("mod", anp.mod, ("real", "nonzero")), ("np_mod", anp.mod, ("real", "nonzero")),
        ("fmod", None, ("real", "nonzero")),
        ("floordiv", None, ("real", "nonzero")), ("floor_divide", anp.floor_divide, ("real", "nonzero")),
        ("maximum", anp.maximum, None), ("minimum", anp.minimum, None), ("fmax", anp.fmax, None),
        ("fmin", anp.fmin, None), ("hypot", anp.hypot, None), ("arctan2", anp.arctan2, ("nonzero", "nonzero")),
        ("copysign", None, ("nonzero", "nonzero")), ("heaviside", None, ("nonzero", "real"))]:
    binary(_name, _ref, _domain or ("real", "real"))


def _where(op):
    def build(b, c, x, y):
        return b(op, b("gt", c, 0.0), x, y)
    return build


for _op in ("where", "select"):   # autograd's np.where does not sum broadcast gradients back
    case(_op, Case(((2, 3), (2, 3), (2, 3)), _where(_op), lambda c, x, y: anp.where(c > 0, x, y)),
         Case(((2, 3), (2, 3), (3,)), _where(_op)), Case(((3,), (), (2, 3)), _where(_op)))

case("clip",
     Case(((2, 3),), lambda b, x: b("clip", x, -0.5, 0.5), lambda x: anp.clip(x, -0.5, 0.5)),
     Case(((2, 3),), lambda b, x: b("clip", x, None, 0.5), lambda x: anp.clip(x, None, 0.5)),
     Case(((2, 3),), lambda b, x: b("clip", x, -0.5, None), lambda x: anp.clip(x, -0.5, None)),
     Case(((2, 3), (3,), ()), lambda b, x, lo, hi: b("clip", x, lo, hi), None, ("real", "real", "positive")))

for _op, _fn in (("py_max", max), ("py_min", min)):
    case(_op,
         Case((PY_FLOAT, PY_FLOAT), lambda b, x, y, _op=_op: b(_op, x, y), _fn),
         Case((PY_FLOAT, PY_FLOAT, PY_FLOAT), lambda b, x, y, z, _op=_op: b(_op, x, y, z), _fn),
         Case(((4,),), lambda b, x, _op=_op: b(_op, x), anp.max if _op == "py_max" else anp.min))
case("py_round", Case((PY_FLOAT,), lambda b, x: b("py_round", x, 2)))
case("float", Case(((),), lambda b, x: b("float", x)))
case("item", *[Case((s,), lambda b, x: b("item", x)) for s in [(), (1,), (1, 1)]])


def reduction(op: str, ref, shapes_axes, domain="real", **extra):
    cases = []
    for shape, axis, keepdims in shapes_axes:
        attrs = dict(extra)
        if axis is not None:
            attrs["axis"] = axis
        if keepdims:
            attrs["keepdims"] = True
        r = None if ref is None else (lambda x, attrs=attrs: ref(x, **attrs))
        cases.append(Case((shape,), lambda b, x, attrs=attrs: b(op, x, **attrs), r, domain))
    case(op, *cases)


AXES = [((), None, False), ((3,), None, False), ((2, 3), None, False), ((2, 3), 0, False), ((2, 3), 1, True),
        ((2, 3), -1, False), ((2, 3), (0, 1), False), ((2, 3, 2), (0, 2), True)]
for _op, _ref in [("sum", anp.sum), ("mean", anp.mean), ("prod", anp.prod), ("max", anp.max), ("min", anp.min),
                  ("amax", anp.max), ("amin", anp.min), ("var", anp.var), ("nanmax", None), ("nanmin", None)]:
    reduction(_op, _ref, AXES, "nonzero" if _op == "prod" else "real")
reduction("std", anp.std, AXES[1:])
reduction("var", anp.var, AXES[2:5], ddof=1)
reduction("std", anp.std, AXES[2:5], ddof=1)
reduction("nansum", None, AXES[2:5], "with_nan")
reduction("nanmean", None, AXES[2:5], "with_nan")
reduction("nansum", anp.sum, AXES[1:3])
reduction("median", None, [((3,), None, False), ((4,), None, False), ((2, 3), 0, False), ((2, 3), 1, True),
                           ((2, 3), None, False)])
for _op, _ref in (("cumsum", anp.cumsum), ("cumprod", None)):
    case(_op, Case(((4,),), lambda b, x, _op=_op: b(_op, x), _ref, "nonzero"),
         Case(((2, 3),), lambda b, x, _op=_op: b(_op, x, axis=1), _ref and (lambda x, _ref=_ref: _ref(x, axis=1)), "nonzero"),
         Case(((2, 3),), lambda b, x, _op=_op: b(_op, x, axis=0), _ref and (lambda x, _ref=_ref: _ref(x, axis=0)), "nonzero"),
         Case(((2, 3),), lambda b, x, _op=_op: b(_op, x), None, "nonzero"))

# --- layout ---
case("reshape", Case(((2, 3),), lambda b, x: b("reshape", x, (3, 2)), lambda x: anp.reshape(x, (3, 2))),
     Case(((2, 3),), lambda b, x: b("reshape", x, -1), lambda x: anp.reshape(x, -1)))
case("ravel", Case(((2, 3),), lambda b, x: b("ravel", x), anp.ravel))
case("copy_flat", Case(((2, 3),), lambda b, x: b("copy_flat", x), anp.ravel))
case("squeeze", Case(((1, 3),), lambda b, x: b("squeeze", x), anp.squeeze),
     Case(((2, 1),), lambda b, x: b("squeeze", x, 1), lambda x: anp.squeeze(x, 1)))
case("expand_dims", Case(((3,),), lambda b, x: b("expand_dims", x, 0), lambda x: anp.expand_dims(x, 0)),
     Case(((2, 3),), lambda b, x: b("expand_dims", x, (0, 3)), lambda x: anp.expand_dims(x, (0, 3))))
case("atleast_1d", Case(((),), lambda b, x: b("atleast_1d", x), anp.atleast_1d))
case("atleast_2d", Case(((3,),), lambda b, x: b("atleast_2d", x), anp.atleast_2d))
case("T", Case(((2, 3),), lambda b, x: b("T", x), lambda x: x.T))
case("transpose", Case(((2, 3, 4),), lambda b, x: b("transpose", x, (1, 2, 0)), lambda x: anp.transpose(x, (1, 2, 0))),
     Case(((2, 3, 4),), lambda b, x: b("transpose", x), anp.transpose),
     Case(((2, 3),), lambda b, x: b("transpose", x), anp.transpose))
case("swapaxes", Case(((2, 3, 4),), lambda b, x: b("swapaxes", x, 0, 2), lambda x: anp.swapaxes(x, 0, 2)))
case("moveaxis", Case(((2, 3, 4),), lambda b, x: b("moveaxis", x, 0, -1), lambda x: anp.moveaxis(x, 0, -1)))
case("broadcast_to", Case(((3,),), lambda b, x: b("broadcast_to", x, (2, 3))),
     Case(((1, 3),), lambda b, x: b("broadcast_to", x, (2, 2, 3))))
case("flip", Case(((2, 3),), lambda b, x: b("flip", x, 1)), Case(((2, 3),), lambda b, x: b("flip", x)))
case("roll", Case(((2, 3),), lambda b, x: b("roll", x, 1, axis=1), lambda x: anp.roll(x, 1, axis=1)),
     Case(((2, 3),), lambda b, x: b("roll", x, 2), lambda x: anp.roll(x, 2)),
     Case(((2, 3),), lambda b, x: b("roll", x, (1, 2), axis=(0, 1))))
case("tile", *[Case((s,), lambda b, x, r=r: b("tile", x, r), lambda x, r=r: anp.tile(x, r))
               for s, r in [((2, 3), (2, 1)), ((3,), 2), ((3,), (2, 2))]],
     Case(((2, 3),), lambda b, x: b("tile", x, 2)))     # autograd: wrong when reps has fewer axes than x
case("repeat", Case(((2, 3),), lambda b, x: b("repeat", x, 2, axis=0), lambda x: anp.repeat(x, 2, axis=0)),
     Case(((2, 3),), lambda b, x: b("repeat", x, 2), lambda x: anp.repeat(x, 2)),
     Case(((2, 3),), lambda b, x: b("repeat", x, (2, 0, 1), axis=1)))   # more in test_vjp_rules_more.py
case("add_reduceat", Case(((2, 5),), lambda b, x: b("add_reduceat", x, (0, 2, 3), axis=1)),
     Case(((5,),), lambda b, x: b("add_reduceat", x, (1, 4))))
case("pad", Case(((2, 3),), lambda b, x: b("pad", x, ((1, 0), (0, 2))), lambda x: anp.pad(x, ((1, 0), (0, 2)), mode="constant")),
     Case(((3,),), lambda b, x: b("pad", x, 2), lambda x: anp.pad(x, 2, mode="constant")),
     *[Case(((2, 3),), lambda b, x, m=m: b("pad", x, ((1, 2), (2, 1)), mode=m))
       for m in ("edge", "reflect", "symmetric", "wrap", "linear_ramp", "mean", "maximum", "minimum")])
case("diag", *[Case((s,), lambda b, x, k=k: b("diag", x, k), lambda x, k=k: anp.diag(x, k))
               for s, k in [((3,), 0), ((3,), 1), ((3, 3), 1)]],
     *[Case((s,), lambda b, x, k=k: b("diag", x, k))            # autograd assumes square matrices
       for s, k in [((2, 3), 0), ((3, 2), -1), ((2, 4), 1)]])
for _op in ("triu", "tril"):
    case(_op, *[Case((s,), lambda b, x, k=k, _op=_op: b(_op, x, k), lambda x, k=k, _op=_op: getattr(anp, _op)(x, k))
                for s, k in [((3, 3), 0), ((2, 4), 1), ((3, 2), -1)]])
case("diff", Case(((2, 4),), lambda b, x: b("diff", x), anp.diff),
     Case(((2, 4),), lambda b, x: b("diff", x, n=2, axis=-1), lambda x: anp.diff(x, n=2, axis=-1)),
     Case(((3, 2),), lambda b, x: b("diff", x, axis=0), lambda x: anp.diff(x, axis=0)))
case("sort", Case(((4,),), lambda b, x: b("sort", x), anp.sort),
     Case(((2, 3),), lambda b, x: b("sort", x, axis=None)), Case(((2, 3),), lambda b, x: b("sort", x, axis=0)),
     Case(((1, 3),), lambda b, x: b("sort", x)))
case("concatenate",
     Case(((2, 3), (1, 3)), lambda b, x, y: b("concatenate", (x, y)), lambda x, y: anp.concatenate((x, y))),
     Case(((2, 3), (2, 1)), lambda b, x, y: b("concatenate", (x, y), axis=1),
          lambda x, y: anp.concatenate((x, y), axis=1)),
     Case(((2, 3), (3,)), lambda b, x, y: b("concatenate", (x, y), axis=None)))
case("stack", *[Case(((3,), (3,)), lambda b, x, y, a=a: b("stack", (x, y), axis=a),
                     lambda x, y, a=a: anp.stack((x, y), axis=a)) for a in (0, 1, -1)])
case("hstack", Case(((3,), (2,)), lambda b, x, y: b("hstack", (x, y)), lambda x, y: anp.hstack((x, y))),
     Case(((2, 3), (2, 1)), lambda b, x, y: b("hstack", (x, y)), lambda x, y: anp.hstack((x, y))),
     Case(((), ()), lambda b, x, y: b("hstack", (x, y)), lambda x, y: anp.hstack((x, y))))
case("vstack", Case(((3,), (3,)), lambda b, x, y: b("vstack", (x, y)), lambda x, y: anp.vstack((x, y))),
     Case(((2, 3), (1, 3)), lambda b, x, y: b("vstack", (x, y)), lambda x, y: anp.vstack((x, y))))
for _op in ("copy", "ascontiguousarray", "asarray", "array", "tensor", "as_ndarray", "as_tensor"):
    case(_op, Case(((2, 3),), lambda b, x, _op=_op: b(_op, x), lambda x: x))
case("astype", Case(((2, 3),), lambda b, x: b("astype", x, dtype=np.float64)))

# --- indexing ---
case("getitem", Case(((2, 3),), lambda b, x: b("getitem", x, index=(0,)), lambda x: x[0]),
     Case(((2, 3),), lambda b, x: b("getitem", x, index=(slice(None), slice(1, None))), lambda x: x[:, 1:]),
     Case(((3, 4),), lambda b, x: b("getitem", x, index=(None, 1, slice(None, None, 2))), lambda x: x[None, 1, ::2]),
     Case(((2, 3),), lambda b, x: b("getitem", x, index=(Ellipsis, -1)), lambda x: x[..., -1]),
     Case(((3, 2),), lambda b, x: b("getitem", x, b("asarray", (0, 2, 0, -1)), index=[OperandRef(1)]),
          lambda x: x[np.array([0, 2, 0, -1])]))
case("take", Case(((2, 3),), lambda b, x: b("take", x, (0, 2, 0), axis=1)),   # autograd has no np.take
     Case(((2, 3),), lambda b, x: b("take", x, 4)), Case(((3,),), lambda b, x: b("take", x, ((0, 1), (2, 2)))),
     Case(((2, 3),), lambda b, x: b("take", x, -1, axis=0)))

case("correlate", *[Case(((5,), (3,)), lambda b, a, v, m=m: b("correlate", a, v, mode=m)) for m in ("valid", "same", "full")],
     Case(((4,), (4,)), lambda b, a, v: b("correlate", a, v, "same")), Case(((3,), (1,)), lambda b, a, v: b("correlate", a, v)))
case("sliding_window_view", Case(((5,),), lambda b, x: b("sliding_window_view", x, 3)),
     Case(((4,),), lambda b, x: b("sliding_window_view", x, (2,), axis=0)),
     Case(((3,),), lambda b, x: b("sliding_window_view", x, 1)))

# --- products ---
MATMUL = [((3,), (3,)), ((2, 3), (3,)), ((3,), (3, 2)), ((2, 3), (3, 4)), ((2, 2, 3), (3,)), ((3,), (2, 3, 4)),
          ((2, 2, 3), (2, 3, 4)), ((2, 2, 3), (3, 4))]
case("matmul", *[Case(p, lambda b, x, y: b("matmul", x, y), anp.matmul) for p in MATMUL])
DOT = [((), (2, 3)), ((3,), (3,)), ((2, 3), (3,)), ((3,), (3, 2)), ((2, 3), (3, 4)), ((2, 2, 3), (3, 4)),
       ((2, 3), (2, 3, 4)), ((3,), (2, 3, 4)), ((2, 2, 3), (3,))]
case("dot", *[Case(p, lambda b, x, y: b("dot", x, y), anp.dot) for p in DOT])
case("outer", Case(((3,), (2,)), lambda b, x, y: b("outer", x, y), anp.outer),
     Case(((2, 2), (3,)), lambda b, x, y: b("outer", x, y)))    # autograd: only vectors
TENSORDOT = [(((2, 3), (2, 3)), 2), (((2, 3), (3, 4)), 1), (((2, 3), (3, 4)), ([1], [0])),
             (((2, 3, 4), (3, 2, 5)), ((0, 1), (1, 0))), (((2,), (3,)), 0), (((2, 3, 4), (4, 3)), ((1, 2), (1, 0)))]
case("tensordot", *[Case(p, lambda b, x, y, a=a: b("tensordot", x, y, axes=a),
                         lambda x, y, a=a: anp.tensordot(x, y, axes=a)) for p, a in TENSORDOT])
EINSUM = [("ij,jk->ik", ((2, 3), (3, 4))), ("ij,ij->i", ((2, 3), (2, 3))), ("ij->", ((2, 3),)),
          ("i,j->ij", ((2,), (3,))), ("ij,jk,kl->il", ((2, 3), (3, 2), (2, 2))), ("ij->j", ((2, 3),)),
          ("ij,jk", ((2, 3), (3, 4))), ("ij,k->jk", ((2, 3), (2,))), ("...ij,...jk->...ik", ((2, 2, 3), (3, 4))),
          ("...ij,...jk", ((1, 2, 3), (2, 3, 2)))]
case("einsum", *[Case(shapes, lambda b, *xs, s=s: b("einsum", s, *xs), lambda *xs, s=s: anp.einsum(s, *xs))
                 for s, shapes in EINSUM])

# --- creation ---
case("zeros_like", Case(((2, 3),), lambda b, x: b("add", x, b("zeros_like", x)), lambda x: x))
case("ones_like", Case(((2, 3),), lambda b, x: b("mul", x, b("ones_like", x)), lambda x: x))
case("empty_like", Case(((2, 3),), lambda b, x: b("where", True, x, b("empty_like", x)), lambda x: x))
case("zeros", Case(((2, 3),), lambda b, x: b("add", x, b("zeros", (2, 3))), lambda x: x))
case("ones", Case(((2, 3),), lambda b, x: b("mul", x, b("ones", (2, 3))), lambda x: x))
case("empty", Case(((2, 3),), lambda b, x: b("where", True, x, b("empty", (2, 3))), lambda x: x))
case("eye", Case(((2, 3),), lambda b, x: b("matmul", x, b("eye", 3)), lambda x: x))
case("arange", Case(((3,),), lambda b, x: b("mul", x, b("arange", 3.0)), lambda x: x * anp.arange(3.0)))
case("full", Case((PY_FLOAT,), lambda b, v: b("full", (2, 3), v), lambda v: anp.full((2, 3), v)),
     Case(((),), lambda b, v: b("full", (2, 3), v)))
case("full_like", Case(((2, 3), PY_FLOAT), lambda b, x, v: b("mul", x, b("full_like", x, v))))  # autograd: zero for v
case("linspace", Case((PY_FLOAT, PY_FLOAT), lambda b, a, z: b("linspace", a, z, 5), lambda a, z: anp.linspace(a, z, 5)),
     Case(((), ()), lambda b, a, z: b("linspace", a, z, 4, endpoint=False)))

# --- what the transform handles: tuples and the leaves ---
case("tuple", Case(((3,), (2, 3)), lambda b, x, y: b("mul", b("tuple_get", b("tuple", x, y), index=1),
                                                         b("tuple_get", b("tuple", y, x), index=1)),
                   lambda x, y: y * x))
case("tuple_get", *CASES["tuple"])
case("arg", Case(((2, 3),), lambda b, x: x, lambda x: x))
case("param", Case(((2, 3), (3,)), lambda b, w, x: b("mul", w, x), lambda w, x: w * x, params=1))
case("const", Case(((2, 3),), lambda b, x: b("mul", x, 2.5), lambda x: x * 2.5))


case("sum_to", Case(((2, 3), (3,)), lambda b, x, y: b("mul", b("sum_to", x, y), y), lambda x, y: x.sum(axis=0) * y),
     Case(((2, 3), (1, 3)), lambda b, x, y: b("sum_to", x, y), lambda x, y: x.sum(axis=0, keepdims=True)))

# Ops the transform differentiates by their place in a program (regions, in-place writes, a stop):
# the program tests check them (tests/autodiff_programs.py, by program name).
BY_PROGRAMS = {"if": "branch_then", "for_range": "loop", "while": "while_break", "setitem": "writes",
               "inplace": "writes", "add_at": "gather_scatter", "stop_gradient": "softmax_xent"}
BY_PROGRAMS.update({"gradient": "grad_inside", "gradient_boundary": "grad_inside", "replayed": "recurrence"})


# --- the tests ------------------------------------------------------------------------------------
@pytest.mark.parametrize("op", sorted(OPS))
def test_op_gradient(op):
    """Each op has a rule and passes its gradient checks, or says why it has none."""
    kinds = [op in RULES, op in WHY_NOT, op in BY_TRANSFORM]
    assert sum(kinds) == 1, f"{op}: needs exactly one of a VJP rule, a WHY_NOT reason or BY_TRANSFORM"
    if op in WHY_NOT:
        reason = WHY_NOT[op]
        assert isinstance(reason, str) and len(reason.split()) >= 3, f"{op}: say why in words"
        assert op not in CASES
        return
    if op in BY_PROGRAMS:
        from autodiff_programs import PROGRAMS
        assert BY_PROGRAMS[op] in PROGRAMS, f"{op}: no program checks its gradient"
        return
    assert op in CASES, f"{op} has a VJP rule but no gradient check: add a Case"
    for number, c in enumerate(CASES[op]):
        check_case(op, number, c)


def test_cases_name_ops_of_the_table():
    assert sorted(set(CASES) - set(OPS)) == []


@pytest.mark.parametrize("build, message", [
    (lambda b, x, y: b("mul", b("call", x, fn="numpy.linalg.norm"), y), "NumPy/math function .*" + WHY_NOT["call"]),
    (lambda b, x, y: b("add", b("pad", x, 1, mode="median"), y), "np.pad with mode='median'"),
    (lambda b, x, y: b("add", b("tile", x, b("tuple", b("int", y), 2)), y), "np.tile.*`reps` must be known at compile time"),
])
def test_what_has_no_gradient_is_an_error_naming_it(build, message):
    """Never a silent zero: an opaque call (whose result's type is unknown) or an op whose rule
    cannot handle its arguments stops the transform with GJ501."""
    graph = Graph("f")
    inputs = [graph.add_arg("x", array_type("float64", (2, 3))), graph.add_arg("y", array_type("float64", ()))]
    out = build(Builder(graph), *inputs)
    with pytest.raises(NotDifferentiableError, match=message):
        differentiate(graph, inputs, out)


def test_index_by_arrays_gathers_back_with_add_at():
    """`x[rows, cols]` with a repeated element: its gradient adds up there (`np.add.at`)."""
    case = Case(((3, 2), ()), lambda b, x, y: b("mul", b("getitem", x, b("asarray", (0, 2, 0)),
                                                           b("asarray", (1, 0, 1)),
                                                           index=[OperandRef(1), OperandRef(2)]), y),
                lambda x, y: x[[0, 2, 0], [1, 0, 1]] * y)
    check_case("getitem", 99, case)


def test_gradient_with_respect_to_an_inner_value_and_its_input():
    """`h = exp(x)`, `s = sum(h * h)`: ds/dh = 2h is kept although the walk goes on to x."""
    graph = Graph("f")
    x = graph.add_arg("x", array_type("float64", (3,)))
    h = graph.add("exp", [x])
    s = graph.add("sum", [graph.add("mul", [h, h])])
    graph.set_outputs([graph.add("tuple", differentiate(graph, [h, x], s))])
    value = np.array([0.1, -0.4, 0.7])
    for run in (Interpreter(graph, Roots()), compile_emitted(emit_function(graph), {}, {})):
        dh, dx = run(value)
        np.testing.assert_allclose(dh, 2 * np.exp(value))
        np.testing.assert_allclose(dx, 2 * np.exp(2 * value))
