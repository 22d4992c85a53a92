"""The gradients of the ops that copy elements (np.sort, np.repeat, np.pad in each mode with a
gradient) and of np.einsum with `...`, repeated subscripts and the interleaved form, over many
axes, modes, options, counts and shapes.

Each case runs through the harness of test_vjp_rules.py (interpreter and emitted NumPy agree, the
gradient matches central finite differences, and autograd where it differentiates the op). Most
of these ops are linear in `x` (sort piecewise), so their gradients are also checked exactly
against the transposed Jacobian built by NumPy itself: the op applied to every basis vector.
"""

from __future__ import annotations

import autograd.numpy as anp
import numpy as np
import pytest

from graphjit.backends.interpreter import Interpreter
from graphjit.graph.autodiff import NotDifferentiableError, differentiate
from graphjit.graph.ir import Graph
from graphjit.graph.paths import Roots
from graphjit.graph.types import array_type
from test_vjp_rules import Builder, Case, check_case

SORTS = [((3,), -1), ((3,), 0), ((3,), None), ((2, 3), 0), ((2, 3), 1), ((2, 3), -1), ((2, 3), None), ((1, 3), 0),
         ((2, 3, 4), 0), ((2, 3, 4), 1), ((2, 3, 4), -1), ((2, 3, 4), None), ((4, 1, 2), 1)]
COUNTS = [((3,), (1, 0, 2), None), ((3,), (0, 2, 0), 0), ((3,), (0, 0, 0), None), ((2, 3), (2, 0, 1), 1),
          ((2, 3), (0, 3), 0), ((2, 3), (0, 0, 0), -1), ((2, 3), (1, 2, 0, 0, 3, 1), None),
          ((2, 3), (0, 1, 0, 0, 0, 0), None), ((2, 3), (3,), 1), ((2, 3), 3, -1), ((2, 3, 2), (1, 2, 0), 1),
          ((1, 3), (2,), 0)]
PADS = [((3,), 2), ((3,), (1, 2)), ((3,), ((0, 4),)), ((2, 3), 1), ((2, 3), ((1, 2), (2, 1))), ((2, 3), (1, 0)),
        ((2, 3), ((0, 0), (4, 5))), ((2, 3), ((5, 1), (0, 7))), ((1, 3), 1), ((1, 3), ((2, 2), (0, 0))),
        ((2, 3, 2), ((1, 0), (0, 2), (3, 1)))]
MODES = ("edge", "reflect", "symmetric", "wrap", "constant", "linear_ramp", "mean")
# the other options of np.pad, each with the modes it applies to
OPTIONS = [({"reflect_type": "odd"}, ("reflect", "symmetric")), ({"stat_length": 2}, ("mean",)),
           ({"stat_length": ((1, 2), (3, 1))}, ("mean",)), ({"end_values": (1.5, -2.0)}, ("linear_ramp",)),
           ({"constant_values": 4.0}, ("constant",))]
EXTREME_OPTIONS = [{}, {"stat_length": 2}, {"stat_length": ((1, 2), (3, 1))}, {"stat_length": ((2, 1),)}]
EINSUMS = [("...ij,...jk->...ik", ((2, 2, 3), (2, 3, 4))), ("...ij,...jk->...ik", ((2, 2, 3), (3, 4))),
           ("...ij,...jk", ((1, 2, 3), (4, 3, 2))), ("...ij,jk", ((5, 1, 2, 3), (3, 2))),
           ("i...,i...->...", ((2, 1, 3), (2, 4, 1))), ("...i,...i", ((2, 3), (3,))), ("ij...->...", ((2, 3, 4),)),
           ("...i->...", ((2, 3),)), ("...", ((2, 3),)), ("...ij,...jk->ik", ((2, 3), (3, 4))),
           ("ji...", ((3, 2, 3),)), ("i...j,j->i...", ((2, 3, 4), (4,))),
           ("ii->i", ((3, 3),)), ("ii", ((3, 3),)), ("ij,jj->i", ((2, 3), (3, 3))), ("...ii->...i", ((2, 3, 3),)),
           ("i...i", ((3, 2, 3),)), ("iij,j->ij", ((2, 2, 3), (3,))), ("iii->", ((2, 2, 2),)),
           ("ij,ik,i->jk", ((2, 3), (2, 1), (1,)))]


def autograd_knows(spec: str) -> bool:
    """autograd's einsum has no repeated subscript in one operand (a diagonal)."""
    return all(len(set(s)) == len(s) for s in spec.replace("...", "").partition("->")[0].split(","))


def sort_case(shape, axis):
    attrs = {} if axis == -1 else {"axis": axis}
    ref = (lambda x: anp.sort(x, **attrs)) if len(shape) == 1 else None     # autograd: 1-D only
    return Case((shape,), lambda b, x: b("sort", x, **attrs), ref)


def repeat_case(shape, counts, axis):
    # autograd: one count for all, and a negative axis reshapes wrongly
    ref = (lambda x: anp.repeat(x, counts, axis=axis)) if isinstance(counts, int) and (axis or 0) >= 0 else None
    return Case((shape,), lambda b, x: b("repeat", x, counts, axis=axis), ref)


def runtime_repeat_case(shape, counts, axis):
    """Counts the rule cannot read at compile time (`np.asarray` of them)."""
    return Case((shape,), lambda b, x: b("repeat", x, b("asarray", counts), axis=axis))


def pad_case(shape, width, mode):
    ref = (lambda x: anp.pad(x, width, mode="constant")) if mode == "constant" else None   # autograd: constant only
    return Case((shape,), lambda b, x: b("pad", x, width, mode=mode), ref)


def einsum_case(spec, shapes):
    ref = (lambda *xs: anp.einsum(spec, *xs)) if autograd_knows(spec) else None
    return Case(shapes, lambda b, *xs: b("einsum", spec, *xs), ref)


CASES = {
    "sort": [sort_case(*c) for c in SORTS],
    "repeat": [repeat_case(*c) for c in COUNTS] + [runtime_repeat_case(*c) for c in COUNTS if isinstance(c[1], tuple)],
    "pad": [pad_case(s, w, m) for s, w in PADS for m in MODES]
    + [Case(((2, 3),), lambda b, x, o=o, m=m: b("pad", x, ((1, 2), (4, 1)), mode=m, **o)) for o, ms in OPTIONS
       for m in ms]
    + [Case((s,), lambda b, x, w=w, m=m, o=o: b("pad", x, w, mode=m, **o)) for s, w in PADS
       for m in ("maximum", "minimum") for o in EXTREME_OPTIONS if len(s) == 2 or "stat_length" not in o
       or np.ndim(o["stat_length"]) < 2]
    + [Case(((2, 3), ()), lambda b, x, c: b("pad", x, ((1, 0), (2, 1)), c, kw=("constant_values",))),
       Case(((3,),), lambda b, x: b("pad", x, 2, mode="reflect", reflect_type="even"))],
    "einsum": [einsum_case(*c) for c in EINSUMS] + [
        Case(((2, 3), (3, 4)), lambda b, x, y: b("einsum", x, (0, 1), y, (1, 2), (0, 2)),
             lambda x, y: anp.einsum("ij,jk->ik", x, y)),
        Case(((2, 3), (3, 4)), lambda b, x, y: b("einsum", x, (5, 1), y, (1, 30))),
        Case(((2, 2, 3), (3,)), lambda b, x, y: b("einsum", x, (Ellipsis, 0), y, (0,), (Ellipsis,))),
        Case(((3, 3),), lambda b, x: b("einsum", x, (0, 0)))],
    "add_reduceat": [Case(((6,),), lambda b, x: b("add_reduceat", x, (0, 1, 4))),
                     Case(((3, 4),), lambda b, x: b("add_reduceat", x, (1, 2), axis=0)),
                     Case(((2, 4),), lambda b, x: b("add_reduceat", x, (0,), axis=-1))],
}


@pytest.mark.parametrize("op, number", [(op, k) for op, cases in CASES.items() for k in range(len(cases))])
def test_gradient_by_finite_differences_and_autograd(op, number):
    check_case(op, 1000 + number, CASES[op][number])


# --- exact: the transposed Jacobian -----------------------------------------------------------------
def gradient(name, shape, seed_value, x, *operands, **attrs):
    """The gradient of `sum(seed * op(x, ...))` by the graph's backward pass, run by the interpreter."""
    graph = Graph("f")
    arg = graph.add_arg("x", array_type("float64", shape))
    out = Builder(graph)(name, arg, *operands, **attrs)
    seed = graph.add_arg("seed", array_type("float64", np.shape(seed_value)))
    graph.set_outputs(list(differentiate(graph, [arg], out, seed=seed)))
    return Interpreter(graph, Roots())(x, seed_value)


def transposed_jacobian(fn, x, g):
    """`J.T @ g` for `fn` linear in x, column by column: `<fn(e_i), g>` for each basis vector e_i."""
    out = np.zeros(x.size)
    for i in range(x.size):
        e = np.zeros(x.size)
        e[i] = 1.0
        out[i] = np.sum(fn(e.reshape(x.shape)) * g)
    return out.reshape(x.shape)


@pytest.mark.parametrize("shape, width", PADS)
@pytest.mark.parametrize("mode", MODES)
def test_pad_gradient_is_the_transposed_jacobian(shape, width, mode):
    rng = np.random.default_rng(3)
    x = rng.standard_normal(shape)
    g = rng.standard_normal(np.pad(x, width, mode=mode).shape)
    got = gradient("pad", shape, g, x, width, mode=mode)
    np.testing.assert_allclose(got, transposed_jacobian(lambda v: np.pad(v, width, mode=mode), x, g), rtol=1e-12,
                               atol=1e-12)


@pytest.mark.parametrize("options, mode", [(o, m) for o, ms in OPTIONS for m in ms])
def test_pad_gradient_with_options_is_the_transposed_jacobian(options, mode):
    rng = np.random.default_rng(6)
    x = rng.standard_normal((2, 3))
    width = ((1, 2), (4, 1))
    g = rng.standard_normal(np.pad(x, width, mode=mode, **options).shape)
    got = gradient("pad", (2, 3), g, x, width, mode=mode, **options)
    # the constants (end_values, constant_values) do not depend on x: J is the padding of x minus that of zeros
    expected = transposed_jacobian(lambda v: np.pad(v, width, mode=mode, **options)
                                   - np.pad(np.zeros_like(v), width, mode=mode, **options), x, g)
    np.testing.assert_allclose(got, expected, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("shape, counts, axis", COUNTS)
def test_repeat_gradient_is_the_transposed_jacobian(shape, counts, axis):
    rng = np.random.default_rng(4)
    x = rng.standard_normal(shape)
    g = rng.standard_normal(np.repeat(x, counts, axis=axis).shape)
    expected = transposed_jacobian(lambda v: np.repeat(v, counts, axis=axis), x, g)
    np.testing.assert_allclose(gradient("repeat", shape, g, x, counts, axis=axis), expected, rtol=1e-12, atol=1e-12)
    got = gradient_runtime_counts(shape, g, x, np.asarray(counts), axis)     # the np.add.at path
    np.testing.assert_allclose(got, expected, rtol=1e-12, atol=1e-12)


def gradient_runtime_counts(shape, seed_value, x, counts, axis):
    """As `gradient`, with the counts an argument of the graph (known only at run time)."""
    graph = Graph("f")
    arg = graph.add_arg("x", array_type("float64", shape))
    c = graph.add_arg("counts", array_type("int64", counts.shape))
    out = graph.add("repeat", [arg, c], {"axis": axis})
    seed = graph.add_arg("seed", array_type("float64", np.shape(seed_value)))
    graph.set_outputs(list(differentiate(graph, [arg], out, seed=seed)))
    return Interpreter(graph, Roots())(x, counts, seed_value)


@pytest.mark.parametrize("shape, axis", SORTS)
def test_sort_gradient_goes_back_through_the_stable_permutation(shape, axis):
    """With ties: the k-th equal element in the input's order takes the k-th equal place, as the
    stable sort order puts them (np.put_along_axis through np.argsort(kind='stable'))."""
    rng = np.random.default_rng(5)
    x = rng.integers(0, 3, size=shape).astype(np.float64)      # many ties
    g = rng.standard_normal(np.sort(x, axis=axis).shape)
    flat = x.ravel() if axis is None else x
    expected = np.zeros_like(flat)
    along = 0 if axis is None else axis
    np.put_along_axis(expected, np.argsort(flat, axis=along, kind="stable"), g, axis=along)
    attrs = {} if axis == -1 else {"axis": axis}
    np.testing.assert_array_equal(gradient("sort", shape, g, x, **attrs), expected.reshape(shape))


@pytest.mark.parametrize("build, message", [
    (lambda b, x: b("pad", x, 1, mode="median"), "np.pad with mode='median' \\(the modes with a gradient"),
    (lambda b, x: b("add_reduceat", x, (1, 0), axis=1), "not increasing"),
])
def test_what_these_rules_cannot_differentiate_is_an_error_naming_it(build, message):
    graph = Graph("f")
    x = graph.add_arg("x", array_type("float64", (2, 3)))
    with pytest.raises(NotDifferentiableError, match=message):
        differentiate(graph, [x], build(Builder(graph), x))


def test_a_linear_pad_mode_along_a_long_axis_says_why_it_has_no_gradient():
    """linear_ramp and mean fold back through the axis's Jacobian, n x n: not for a long axis."""
    graph = Graph("f")
    x = graph.add_arg("x", array_type("float64", (2, 3000)))
    with pytest.raises(NotDifferentiableError, match="mode='mean' along an axis of 3000 elements"):
        differentiate(graph, [x], Builder(graph)("pad", x, 1, mode="mean"))
