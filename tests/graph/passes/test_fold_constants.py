"""Constant folding (graph/passes/fold_constants.py): graph text in, graph text out (tests/graph_testing.py),
including where it must not fire.
"""

from graphjit.graph import parse
from graphjit.graph.passes import fold_constants

from graph_testing import assert_pass_leaves, assert_pass_output, norm


# --- constant folding -------------------------------------------------------------------------

def test_fold_scalars_shapes_and_numpy_calls():
    assert_pass_output(fold_constants.run, """
        graph f(%x: f32[4,3]) -> f64[4,3]
          %0 = dim(%x) {axis=0} : int
          %1 = mul(%0, 2) : int
          %2 = sqrt(2.0) : f64[]
          %3 = mul(%x, %2) : f64[4,3]
          %4 = add(%3, %1) : f64[4,3]
          return %4
    """, """
        graph f(%x: f32[4,3]) -> f64[4,3]
          %0 = dim(%x) {axis=0} : int
          %1 = mul(4, 2) : int
          %2 = sqrt(2.0) : f64[]
          %3 = mul(%x, np.float64(1.4142135623730951)) : f64[4,3]
          %4 = add(%3, 8) : f64[4,3]
          return %4
    """)


def test_fold_shape_tuple_ndim_size_dtype_and_tuples():
    assert_pass_output(fold_constants.run, """
        graph f(%x: f64[2,3]) -> tuple(tuple(int, int), int, int, f32[2,3])
          %0 = shape(%x) : object
          %1 = ndim(%x) : int
          %2 = size(%x) : int
          %3 = tuple(2, 3) : tuple(int, int)
          %z = zeros(%3) {dtype=np.float32} : f32[2,3]
          %4 = tuple_get(%3) {index=1} : int
          %5 = mul(%z, %4) : f32[2,3]
          %6 = tuple(%0, %1, %2, %5) : tuple(tuple(int, int), int, int, f32[2,3])
          return %6
    """, """
        graph f(%x: f64[2,3]) -> tuple(tuple(int, int), int, int, f32[2,3])
          %0 = shape(%x) : object
          %1 = ndim(%x) : int
          %2 = size(%x) : int
          %3 = tuple(2, 3) : tuple(int, int)
          %z = zeros((2, 3)) {dtype=np.float32} : f32[2,3]
          %4 = tuple_get((2, 3)) {index=1} : int
          %5 = mul(%z, 3) : f32[2,3]
          %6 = tuple((2, 3), 2, 6, %5) : tuple(tuple(int, int), int, int, f32[2,3])
          return %6
    """)


def test_fold_small_intermediate_arrays_to_a_literal():
    assert_pass_output(fold_constants.run, """
        graph f(%x: f64[3]) -> f64[3]
          %0 = arange(10) : i64[10]
          %1 = sum(%0) : i64[]
          %2 = add(%x, %1) : f64[3]
          return %2
    """, """
        graph f(%x: f64[3]) -> f64[3]
          %0 = arange(10) : i64[10]
          %1 = sum(%0) : i64[]
          %2 = add(%x, np.int64(45)) : f64[3]
          return %2
    """)


def test_fold_never_builds_big_arrays():
    # above FOLD_LIMIT elements the type alone stops folding: nothing is allocated at compile time
    assert fold_constants.FOLD_LIMIT < 5000
    assert_pass_leaves(fold_constants.run, """
        graph f(%x: f64[3]) -> f64[3]
          %0 = ones(5000) : f64[5000]
          %1 = sum(%0) : f64[]
          %2 = add(%x, %1) : f64[3]
          return %2
    """)


def test_fold_leaves_errors_warnings_effects_and_unknowns_for_run_time():
    # an unknown dimension, a warning (log(0)), nondeterminism (empty), an opaque call, and an
    # exception (1.0 / 0) stay for run time, where the user sees them as eager code would show them
    text = norm("""
        graph f(%x: f64[?,3]) -> tuple(int, f64[], f64[3], object, float)
          %0 = dim(%x) {axis=0} : int
          %1 = log(0.0) : f64[]
          %2 = empty(3) : f64[3]
          %3 = call(2.0) {fn='math.sqrt'} : object
          %4 = truediv(1.0, 0) : float
          %5 = tuple(%0, %1, %2, %3, %4) : tuple(int, f64[], f64[3], object, float)
          return %5
    """)
    graph = parse(text)
    assert fold_constants.run(graph) is False
    assert str(graph) == text


def test_fold_propagates_constants_into_regions_and_folds_there():
    assert_pass_output(fold_constants.run, """
        graph f(%x: f64[4,3]) -> f64[3]
          %n = dim(%x) {axis=1} : int
          %acc = zeros(3) : f64[3]
          %0 = for_range(0, 4, 1, %acc, %n) {carried=1} : tuple(f64[3])
            body(%i: int, %acc.1: f64[3], %n.1: int) {
              %1 = mul(%n.1, 2) : int
              %acc.2 = add(%acc.1, %1) : f64[3]
              yield %acc.2
            }
          %acc.3 = tuple_get(%0) {index=0} : f64[3]
          return %acc.3
    """, """
        graph f(%x: f64[4,3]) -> f64[3]
          %n = dim(%x) {axis=1} : int
          %acc = zeros(3) : f64[3]
          %0 = for_range(0, 4, 1, %acc, 3) {carried=1} : tuple(f64[3])
            body(%i: int, %acc.1: f64[3], %n.1: int) {
              %1 = mul(3, 2) : int
              %acc.2 = add(%acc.1, 6) : f64[3]
              yield %acc.2
            }
          %acc.3 = tuple_get(%0) {index=0} : f64[3]
          return %acc.3
    """)


def test_a_list_is_never_folded_code_may_fill_it():
    """A `list` node is a new list at each call; a loop's tape (autodiff) fills one with `append`:
    folding it would share one list between calls and fold `len` of it to 0."""
    assert_pass_leaves(fold_constants.run, """
        graph f(%x: f64[3]) -> int
          %tape = list() : object
          %0 = append(%tape, %x) : none
          %1 = len(%tape) : int
          return %1
    """)
