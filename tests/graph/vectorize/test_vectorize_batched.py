"""Loops over small matrices (tests/batched_programs.py): products of per-iteration stacks become one
batched `@` (graph/vectorize/batched.py), `np.linalg` solves, inverses and determinants one call
on the stack (linalg_calls.py), a row of indices read per iteration one gather
(indexing.py), in-place updates of a loop-invariant view a sum over the loop axis and of a matrix
made in every iteration a stack (updates.py), and a nest of short loops is vectorized as a whole
when its total trip count pays for its run-time tests (nest.py).

Graph text in and out for each rule; eager against compiled at O0/O1/O2 through the emitted code
and the interpreter, complex dtypes included; an index out of range raises the loop's IndexError
after the loop's own partial writes, a singular matrix the loop's LinAlgError (batched only where
no partial write can be seen); hypothesis on the shapes, zero iterations included. Sums over
the loop axis add in another order than the loop: values are compared with rtol 1e-12 (see the
tolerance note in tests/graph/passes/test_vectorize.py).
"""

import copy

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import graphjit
import batched_programs as B
from graph_testing import assert_pass_leaves, assert_pass_output
from graphjit.graph.passes import vectorize

LEVELS = ["O0", "O1", "O2"]
MODES = ["auto", "no_sink"]


def cplx(rng, *shape):
    return rng.random(shape) + 1j * rng.random(shape)


def neighbours(n_atoms, n_neigh):
    """Each atom's neighbours, wrapping around (a ring)."""
    return np.array([[(a + b - n_neigh // 2) % n_atoms for b in range(n_neigh)] for a in range(n_atoms)],
                    dtype=np.int32).reshape(n_atoms, n_neigh)


def check(fn, args, level="O2", exec_mode="auto"):
    """Same result and argument mutation as eager, or the same exception after the same writes."""
    eager_args, compiled_args = copy.deepcopy(args), copy.deepcopy(args)
    jitted = graphjit.jit(fn, jit_level=level, exec_mode=exec_mode)
    try:
        expected, error = fn(*eager_args), None
    except (IndexError, np.linalg.LinAlgError) as e:
        expected, error = None, e
    if error is not None:
        with pytest.raises(type(error)) as info:
            jitted(*compiled_args)
        assert str(info.value) == str(error)
    else:
        actual = jitted(*compiled_args)
        for a, e in zip(actual, expected) if isinstance(expected, tuple) else [(actual, expected)]:
            np.testing.assert_allclose(a, e, rtol=1e-12, atol=1e-12)
            assert a.dtype == e.dtype and a.shape == e.shape
    for a, e in zip(compiled_args, eager_args):
        if isinstance(e, np.ndarray):
            np.testing.assert_allclose(a, e, rtol=1e-12, atol=1e-12)
    return jitted


def graph_text(jitted, args) -> str:
    return str(jitted.graph(*args))


def self_energy_args(rng, nk=2, ne=4, nw=2, n3=2, na=8, nb=2, norb=3):
    return (neighbours(na, nb), cplx(rng, na, nb, n3, norb, norb), cplx(rng, nk, ne, na, norb, norb),
            cplx(rng, nw, na, nb, n3), np.zeros((nk, ne, na, norb, norb), dtype=np.complex128))


# --- graph text in, graph text out ------------------------------------------------------------

STACKED_PRODUCT = ("""
    graph row_gathers(%idx: i64[16,2], %G: f64[5,2,2], %H: f64[16,2,3], %out: f64[16,2,2,3]) -> f64[16,2,2,3]
      %0 = for_range(0, 16, 1, %idx, %G, %H, %out) {carried=0} : tuple()  # k.py:3:5
        body(%a: int, %idx.1: i64[16,2], %G.1: f64[5,2,2], %H.1: f64[16,2,3], %out.1: f64[16,2,2,3]) {
          %1 = getitem(%idx.1, %a) {index=[$1]} : i64[2]  # k.py:4:20
          %2 = getitem(%G.1, %1) {index=[$1]} : f64[2,2,2]  # k.py:4:18
          %3 = getitem(%H.1, %a) {index=[$1]} : f64[2,3]  # k.py:4:30
          %4 = matmul(%2, %3) : f64[2,2,3]  # k.py:4:18
          %5 = setitem(%out.1, %4, %a) {index=[$2]} : none  # k.py:4:9
          yield
        }
      return %out
""", """
    graph row_gathers(%idx: i64[16,2], %G: f64[5,2,2], %H: f64[16,2,3], %out: f64[16,2,2,3]) -> f64[16,2,2,3]
      %0 = note() {text='vectorized loop k.py:3: elementwise, contraction, gather (the loop runs instead when out/idx, out/G, out/H share memory or `G[idx[a]]` (an index out of range) could raise)'} : none  # k.py:3:5
      %1 = lt(%idx, -5) : bool[16,2]  # k.py:3:5
      %2 = ge(%idx, 5) : bool[16,2]  # k.py:3:5
      %3 = bitor(%1, %2) : bool[16,2]  # k.py:3:5
      %4 = any(%3) : bool[]  # k.py:3:5
      %5 = call(%out, %idx) {fn='numpy.may_share_memory'} : bool  # k.py:3:5
      %6 = bitor(%4, %5) : bool  # k.py:3:5
      %7 = call(%out, %G) {fn='numpy.may_share_memory'} : bool  # k.py:3:5
      %8 = bitor(%6, %7) : bool  # k.py:3:5
      %9 = call(%out, %H) {fn='numpy.may_share_memory'} : bool  # k.py:3:5
      %10 = bitor(%8, %9) : bool  # k.py:3:5
      %11 = if(%10, %idx, %G, %H, %out) {guard='`G[idx[a]]` (an index out of range)'} : tuple()  # k.py:3:5
        then(%idx.1: i64[16,2], %G.1: f64[5,2,2], %H.1: f64[16,2,3], %out.1: f64[16,2,2,3]) {
          %12 = for_range(0, 16, 1, %idx.1, %G.1, %H.1, %out.1) {carried=0, vectorize='no: kept as the fallback of its vectorized form'} : tuple()  # k.py:3:5
            body(%a: int, %idx.2: i64[16,2], %G.2: f64[5,2,2], %H.2: f64[16,2,3], %out.2: f64[16,2,2,3]) {
              %13 = getitem(%idx.2, %a) {index=[$1]} : i64[2]  # k.py:4:20
              %14 = getitem(%G.2, %13) {index=[$1]} : f64[2,2,2]  # k.py:4:18
              %15 = getitem(%H.2, %a) {index=[$1]} : f64[2,3]  # k.py:4:30
              %16 = matmul(%14, %15) : f64[2,2,3]  # k.py:4:18
              %17 = setitem(%out.2, %16, %a) {index=[$2]} : none  # k.py:4:9
              yield
            }
          yield
        }
        else(%idx.3: i64[16,2], %G.3: f64[5,2,2], %H.3: f64[16,2,3], %out.3: f64[16,2,2,3]) {
          %18 = getitem(%G.3, %idx.3) {index=[$1]} : f64[16,2,2,2]  # k.py:3:5
          %19 = getitem(%H.3) {index=[:, None]} : f64[16,1,2,3]  # k.py:3:5
          %20 = matmul(%18, %19) : f64[16,2,2,3]  # k.py:3:5
          %21 = setitem(%out.3, %20) {index=[:]} : none  # k.py:3:5
          yield
        }
      return %out
""")

VIEW_SUM = ("""
    graph view_accumulate(%A: f64[4,2,3], %B: f64[4,3,2], %out: f64[3,2,2]) -> f64[3,2,2]
      %0 = for_range(0, 4, 1, %out, %A, %B) {carried=0} : tuple()  # k.py:3:5
        body(%j: int, %out.1: f64[3,2,2], %A.1: f64[4,2,3], %B.1: f64[4,3,2]) {
          %row = getitem(%out.1) {index=[1]} : f64[2,2]  # k.py:4:15
          %1 = getitem(%A.1, %j) {index=[$1]} : f64[2,3]  # k.py:5:16
          %2 = getitem(%B.1, %j) {index=[$1]} : f64[3,2]  # k.py:5:23
          %3 = matmul(%1, %2) : f64[2,2]  # k.py:5:16
          %row.1 = inplace(%row, %3) {op='add'} : f64[2,2]  # k.py:5:9
          yield
        }
      return %out
""", """
    graph view_accumulate(%A: f64[4,2,3], %B: f64[4,3,2], %out: f64[3,2,2]) -> f64[3,2,2]
      %0 = note() {text='vectorized loop k.py:3: elementwise, reduction, contraction (the loop runs instead when out/A, out/B share memory)'} : none  # k.py:3:5
      %1 = call(%out, %A) {fn='numpy.may_share_memory'} : bool  # k.py:3:5
      %2 = call(%out, %B) {fn='numpy.may_share_memory'} : bool  # k.py:3:5
      %3 = bitor(%1, %2) : bool  # k.py:3:5
      %4 = if(%3, %out, %A, %B) {guard='shared memory'} : tuple()  # k.py:3:5
        then(%out.1: f64[3,2,2], %A.1: f64[4,2,3], %B.1: f64[4,3,2]) {
          %5 = for_range(0, 4, 1, %out.1, %A.1, %B.1) {carried=0, vectorize='no: kept as the fallback of its vectorized form'} : tuple()  # k.py:3:5
            body(%j: int, %out.2: f64[3,2,2], %A.2: f64[4,2,3], %B.2: f64[4,3,2]) {
              %row = getitem(%out.2) {index=[1]} : f64[2,2]  # k.py:4:15
              %6 = getitem(%A.2, %j) {index=[$1]} : f64[2,3]  # k.py:5:16
              %7 = getitem(%B.2, %j) {index=[$1]} : f64[3,2]  # k.py:5:23
              %8 = matmul(%6, %7) : f64[2,2]  # k.py:5:16
              %row.1 = inplace(%row, %8) {op='add'} : f64[2,2]  # k.py:5:9
              yield
            }
          yield
        }
        else(%out.3: f64[3,2,2], %A.3: f64[4,2,3], %B.3: f64[4,3,2]) {
          %row.2 = getitem(%out.3) {index=[1]} : f64[2,2]  # k.py:3:5
          %9 = einsum('cad,cdb->ab', %A.3, %B.3) {optimize=True} : f64[2,2]  # k.py:3:5
          %row.3 = inplace(%row.2, %9) {op='add'} : f64[2,2]  # k.py:3:5
          yield
        }
      return %out
""")

FRESH_STACK = ("""
    graph fresh(%z: c128[4], %H: c128[2,2,2], %out: c128[4,2,2]) -> c128[4,2,2]
      %0 = for_range(0, 4, 1, %z, %H, %out) {carried=0} : tuple()  # k.py:3:5
        body(%i: int, %z.1: c128[4], %H.1: c128[2,2,2], %out.1: c128[4,2,2]) {
          %1 = tuple(2, 2) : tuple(int, int)  # k.py:4:13
          %T = zeros(%1) {dtype=np.complex128} : c128[2,2]  # k.py:4:13
          %2 = getitem(%z.1, %i) {index=[$1]} : c128[]  # k.py:5:14
          %3 = getitem(%H.1) {index=[0]} : c128[2,2]  # k.py:5:21
          %4 = mul(%2, %3) : c128[2,2]  # k.py:5:14
          %T.1 = inplace(%T, %4) {op='add'} : c128[2,2]  # k.py:5:9
          %5 = getitem(%H.1) {index=[1]} : c128[2,2]  # k.py:6:14
          %T.2 = inplace(%T.1, %5) {op='add'} : c128[2,2]  # k.py:6:9
          %6 = setitem(%out.1, %T.2, %i) {index=[$2]} : none  # k.py:7:9
          yield
        }
      return %out
""", """
    graph fresh(%z: c128[4], %H: c128[2,2,2], %out: c128[4,2,2]) -> c128[4,2,2]
      %0 = note() {text='vectorized loop k.py:3: elementwise (the loop runs instead when out/z, out/H share memory)'} : none  # k.py:3:5
      %1 = call(%out, %z) {fn='numpy.may_share_memory'} : bool  # k.py:3:5
      %2 = call(%out, %H) {fn='numpy.may_share_memory'} : bool  # k.py:3:5
      %3 = bitor(%1, %2) : bool  # k.py:3:5
      %4 = if(%3, %z, %H, %out) {guard='shared memory'} : tuple()  # k.py:3:5
        then(%z.1: c128[4], %H.1: c128[2,2,2], %out.1: c128[4,2,2]) {
          %5 = for_range(0, 4, 1, %z.1, %H.1, %out.1) {carried=0, vectorize='no: kept as the fallback of its vectorized form'} : tuple()  # k.py:3:5
            body(%i: int, %z.2: c128[4], %H.2: c128[2,2,2], %out.2: c128[4,2,2]) {
              %6 = tuple(2, 2) : tuple(int, int)  # k.py:4:13
              %T = zeros(%6) {dtype=np.complex128} : c128[2,2]  # k.py:4:13
              %7 = getitem(%z.2, %i) {index=[$1]} : c128[]  # k.py:5:14
              %8 = getitem(%H.2) {index=[0]} : c128[2,2]  # k.py:5:21
              %9 = mul(%7, %8) : c128[2,2]  # k.py:5:14
              %T.1 = inplace(%T, %9) {op='add'} : c128[2,2]  # k.py:5:9
              %10 = getitem(%H.2) {index=[1]} : c128[2,2]  # k.py:6:14
              %T.2 = inplace(%T.1, %10) {op='add'} : c128[2,2]  # k.py:6:9
              %11 = setitem(%out.2, %T.2, %i) {index=[$2]} : none  # k.py:7:9
              yield
            }
          yield
        }
        else(%z.3: c128[4], %H.3: c128[2,2,2], %out.3: c128[4,2,2]) {
          %12 = tuple(2, 2) : tuple(int, int)  # k.py:3:5
          %T.3 = zeros(%12) {dtype=np.complex128} : c128[2,2]  # k.py:3:5
          %13 = getitem(%H.3) {index=[0]} : c128[2,2]  # k.py:3:5
          %14 = getitem(%z.3) {index=[:, None, None]} : c128[4,1,1]  # k.py:3:5
          %15 = mul(%14, %13) : c128[4,2,2]  # k.py:3:5
          %T.4 = add(%T.3, %15) : c128[4,2,2]  # k.py:3:5
          %16 = getitem(%H.3) {index=[1]} : c128[2,2]  # k.py:3:5
          %T.5 = inplace(%T.4, %16) {op='add'} : c128[4,2,2]  # k.py:3:5
          %17 = setitem(%out.3, %T.5) {index=[:]} : none  # k.py:3:5
          yield
        }
      return %out
""")

ROUNDING_SUM = """
    graph float32_accumulate(%A: f64[4,2], %out: f32[3,2]) -> f32[3,2]
      %0 = for_range(0, 4, 1, %out, %A) {carried=0, vectorize='no: `out[0] add= ...` would round to float32 in every iteration'} : tuple()  # k.py:3:5
        body(%j: int, %out.1: f32[3,2], %A.1: f64[4,2]) {
          %row = getitem(%out.1) {index=[0]} : f32[2]  # k.py:4:15
          %1 = getitem(%A.1, %j) {index=[$1]} : f64[2]  # k.py:5:16
          %row.1 = inplace(%row, %1) {op='add'} : f32[2]  # k.py:5:9
          yield
        }
      return %out
"""


@pytest.mark.parametrize("before, after, execute", [(*STACKED_PRODUCT, True), (*VIEW_SUM, False),
                                                     (*FRESH_STACK, True)],
                         ids=["stacked_product", "view_sum", "fresh_stack"])
def test_graph_text(before, after, execute):
    # the sum over the loop axis adds in another order: compared with a tolerance below, not here
    assert_pass_output(vectorize.run, before, after, execute=execute)


def test_an_accumulation_that_rounds_stays_a_loop():
    assert_pass_leaves(vectorize.run, ROUNDING_SUM)


# --- eager against compiled ---------------------------------------------------------------------

@pytest.mark.parametrize("level", LEVELS)
@pytest.mark.parametrize("exec_mode", MODES)
def test_kernels_equal_eager(level, exec_mode):
    rng = np.random.default_rng(5)
    check(B.self_energy, self_energy_args(rng), level, exec_mode)
    check(B.neighbour_products, (neighbours(6, 3), cplx(rng, 4, 6, 2, 2), cplx(rng, 6, 3, 2, 2),
                                 np.zeros((4, 6, 2, 2), complex)), level, exec_mode)
    check(B.row_gathers, (rng.integers(-5, 5, (20, 2)), rng.random((5, 2, 3)), rng.random((20, 3, 2))),
          level, exec_mode)
    check(B.view_accumulate, (rng.random((5, 2, 3)), rng.random((5, 3, 2)), rng.random((3, 2, 2))), level,
          exec_mode)
    check(B.fresh_per_iteration, (cplx(rng, 5), cplx(rng, 3, 2, 2), np.zeros((5, 2, 2), complex)), level,
          exec_mode)
    check(B.fresh_then_read_twice, (rng.random(5), rng.random((1, 2, 2)), np.zeros((5, 2, 2))), level, exec_mode)
    check(B.float32_accumulate, (rng.random((5, 2)), np.zeros((2, 2), np.float32)), level, exec_mode)


def test_the_whole_nest_is_one_product_and_sums():
    rng = np.random.default_rng(6)
    args = self_energy_args(rng)
    text = graph_text(check(B.self_energy, args), args)
    # the loops over i, a, b vectorize together: their 2 * 8 * 2 neighbour indices pay for the range test
    assert "vectorized loop batched_programs.py:22-27: elementwise, reduction, contraction" in text
    assert "an index out of range" in text


def test_a_short_nest_stays_a_loop():
    rng = np.random.default_rng(7)
    args = (neighbours(2, 2), cplx(rng, 1, 2, 2, 2), cplx(rng, 2, 2, 2, 2), np.zeros((1, 2, 2, 2), complex))
    text = graph_text(check(B.neighbour_products, args), args)
    assert "vectorized loop" not in text and "the loop is short" in text


def test_an_index_out_of_range_raises_after_the_loops_writes():
    rng = np.random.default_rng(8)
    args = list(self_energy_args(rng))
    args[0] = args[0].copy()
    args[0][3, 1] = 6     # one neighbour past the last atom: IndexError in the middle of the nest
    for level in LEVELS:
        check(B.self_energy, tuple(args), level)
    args[0][3, 1] = -7
    check(B.self_energy, tuple(args), "O2", "no_sink")
    rows = rng.integers(0, 5, (20, 2))
    rows[11, 0] = 5
    check(B.row_gathers, (rows, rng.random((5, 2, 3)), rng.random((20, 3, 2))))


def test_arrays_that_share_memory_run_the_loop():
    rng = np.random.default_rng(9)
    A = rng.random((4, 3, 2, 2))
    check(B.view_accumulate, (A[0], A[1], A[1:]))     # `out` overlaps B: the loop's order is kept


@settings(max_examples=12, deadline=None)
@given(nk=st.integers(0, 2), ne=st.integers(0, 3), nw=st.integers(0, 2), n3=st.integers(0, 2),
       na=st.integers(1, 6), nb=st.integers(0, 3), norb=st.integers(1, 3))
def test_shapes(nk, ne, nw, n3, na, nb, norb):
    rng = np.random.default_rng(nk * 1000 + ne * 100 + na * 10 + nb)
    check(B.self_energy, self_energy_args(rng, nk, ne, nw, n3, na, nb, norb))
    check(B.view_accumulate, (rng.random((ne, norb, nb + 1)), rng.random((ne, nb + 1, norb)),
                              rng.random((2, norb, norb))))


# --- np.linalg on the stack of per-iteration matrices ----------------------------------------------

SOLVE_EACH = ("""
    graph solve_each(%A: f64[4,3,3], %b: f64[4,3]) -> f64[4,3]
      %0 = tuple(4, 3) : tuple(int, int)  # k.py:2:9
      %x = zeros(%0) {dtype=np.float64} : f64[4,3]  # k.py:2:9
      %1 = for_range(0, 4, 1, %A, %b, %x) {carried=0} : tuple()  # k.py:3:5
        body(%i: int, %A.1: f64[4,3,3], %b.1: f64[4,3], %x.1: f64[4,3]) {
          %2 = getitem(%A.1, %i) {index=[$1]} : f64[3,3]  # k.py:4:32
          %3 = getitem(%b.1, %i) {index=[$1]} : f64[3]  # k.py:4:38
          %4 = call(%2, %3) {fn='numpy.linalg.solve'} : object  # k.py:4:16
          %5 = setitem(%x.1, %4, %i) {index=[$2]} : none  # k.py:4:9
          yield
        }
      return %x
""", """
    graph solve_each(%A: f64[4,3,3], %b: f64[4,3]) -> f64[4,3]
      %0 = tuple(4, 3) : tuple(int, int)  # k.py:2:9
      %x = zeros(%0) {dtype=np.float64} : f64[4,3]  # k.py:2:9
      %1 = note() {text='vectorized loop k.py:3: elementwise, contraction'} : none  # k.py:3:5
      %2 = getitem(%b) {index=[..., None]} : f64[4,3,1]  # k.py:3:5
      %3 = call(%A, %2) {fn='numpy.linalg.solve'} : object  # k.py:3:5
      %4 = getitem(%3) {index=[..., 0]} : ?[*]  # k.py:3:5
      %5 = setitem(%x, %4) {index=[:]} : none  # k.py:3:5
      return %x
""")

SOLVE_INTO_ARGUMENT = """
    graph solve_into(%A: f64[4,3,3], %b: f64[4,3], %x: f64[4,3]) -> f64[4,3]
      %0 = for_range(0, 4, 1, %A, %b, %x) {carried=0, vectorize='no: `np.linalg.solve` can raise LinAlgError after the loop has written to an array others see'} : tuple()  # k.py:2:5
        body(%i: int, %A.1: f64[4,3,3], %b.1: f64[4,3], %x.1: f64[4,3]) {
          %1 = getitem(%A.1, %i) {index=[$1]} : f64[3,3]  # k.py:3:32
          %2 = getitem(%b.1, %i) {index=[$1]} : f64[3]  # k.py:3:38
          %3 = call(%1, %2) {fn='numpy.linalg.solve'} : object  # k.py:3:16
          %4 = setitem(%x.1, %3, %i) {index=[$2]} : none  # k.py:3:9
          yield
        }
      return %x
"""


def test_linalg_graph_text():
    assert_pass_output(vectorize.run, *SOLVE_EACH)
    assert_pass_leaves(vectorize.run, SOLVE_INTO_ARGUMENT)


def solvable(rng, n, k, complex_=False):
    A = rng.random((n, k, k)) + k * np.eye(k)
    return A + 1j * rng.random((n, k, k)) if complex_ else A


@pytest.mark.parametrize("level", LEVELS)
@pytest.mark.parametrize("exec_mode", MODES)
def test_linalg_kernels_equal_eager(level, exec_mode):
    rng = np.random.default_rng(10)
    check(B.solve_each, (solvable(rng, 6, 3), rng.random((6, 3))), level, exec_mode)
    check(B.solve_each, (solvable(rng, 6, 3, True), rng.random((6, 3, 2))), level, exec_mode)
    check(B.resolvent_sums, (solvable(rng, 3, 4, True), cplx(rng, 5) * 1.5, cplx(rng, 4, 6)), level, exec_mode)
    check(B.inverse_sum, (solvable(rng, 5, 3),), level, exec_mode)
    check(B.solve_into, (solvable(rng, 5, 3), rng.random((5, 3)), np.zeros((5, 3))), level, exec_mode)
    check(B.determinants, (rng.random((7, 3, 3)),), level, exec_mode)


def test_which_linalg_loops_are_batched():
    rng = np.random.default_rng(11)
    args = (solvable(rng, 3, 4, True), cplx(rng, 5), cplx(rng, 4, 6))
    assert "vectorized loop" in graph_text(check(B.resolvent_sums, args), args).splitlines()[3]
    big = (solvable(rng, 3, 40, True), cplx(rng, 5), cplx(rng, 40, 6))    # LAPACK dominates: the loop stays
    assert "40x40 matrices: their factorization costs more" in graph_text(check(B.resolvent_sums, big), big)


def test_a_singular_matrix_raises_as_the_loop_does():
    rng = np.random.default_rng(12)
    A = solvable(rng, 6, 3)
    A[4] = 0.0
    for level in LEVELS:
        check(B.solve_each, (A, rng.random((6, 3))), level)        # batched: nothing of its own is seen
        check(B.inverse_sum, (A,), level)
        check(B.solve_into, (A, rng.random((6, 3)), np.zeros((6, 3))), level)   # a loop: rows 0-3 written


@settings(max_examples=10, deadline=None)
@given(n=st.integers(0, 4), k=st.integers(0, 3), m=st.integers(0, 2), cx=st.booleans())
def test_linalg_shapes(n, k, m, cx):
    rng = np.random.default_rng(n * 100 + k * 10 + m)
    check(B.solve_each, (solvable(rng, n, k, cx), rng.random((n, k, m) if m else (n, k))))
    check(B.inverse_sum, (solvable(rng, n, k),))
    check(B.determinants, (rng.random((n, k, k)),))


def test_with_numba_the_short_nest_is_one_kernel(monkeypatch):
    """Numba compiles the whole nest of short loops (docs/numba.md): faster than the batched calls,
    so the vectorizer leaves it to Numba (graph/vectorize/nest.py)."""
    monkeypatch.setenv("GRAPHJIT_NUMBA", "1")
    rng = np.random.default_rng(13)
    args = self_energy_args(rng)
    text = graph_text(check(B.self_energy, args), args)
    assert "numba='kernel'" in text.splitlines()[1]
    assert "vectorized loop batched_programs.py:22-27: elementwise, reduction" not in text
