"""Algebraic simplification (graph/passes/simplify.py): graph text in, graph text out (tests/graph_testing.py),
including where it must not fire.
"""

from graphjit.graph.passes import simplify

from graph_testing import assert_pass_leaves, assert_pass_output


# --- algebraic simplification -------------------------------------------------------------------

def test_simplify_identities():
    assert_pass_output(simplify.run, """
        graph f(%x: f32[4,3], %k: i64[4,3]) -> tuple(f32[3,4], i64[4,3])
          %0 = mul(%x, 1) : f32[4,3]
          %1 = pow(%0, 2) : f32[4,3]
          %2 = neg(%1) : f32[4,3]
          %3 = neg(%2) : f32[4,3]
          %4 = T(%3) : f32[3,4]
          %5 = T(%4) : f32[4,3]
          %6 = where(True, %5, 0.0) : f32[4,3]
          %7 = T(%6) : f32[3,4]
          %8 = truediv(%7, 1) : f32[3,4]
          %9 = mul(%8, 3.0) : f32[3,4]
          %10 = add(0, %k) : i64[4,3]
          %11 = sub(%10, 0) : i64[4,3]
          %12 = mul(%11, 3) : i64[4,3]
          %13 = tuple(%9, %12) : tuple(f32[3,4], i64[4,3])
          return %13
    """, """
        graph f(%x: f32[4,3], %k: i64[4,3]) -> tuple(f32[3,4], i64[4,3])
          %0 = mul(%x, 1) : f32[4,3]
          %1 = mul(%x, %x) : f32[4,3]
          %2 = pow(%x, 2) : f32[4,3]
          %3 = neg(%1) : f32[4,3]
          %4 = neg(%3) : f32[4,3]
          %5 = T(%1) : f32[3,4]
          %6 = T(%5) : f32[4,3]
          %7 = where(True, %1, 0.0) : f32[4,3]
          %8 = T(%1) : f32[3,4]
          %9 = truediv(%8, 1) : f32[3,4]
          %10 = mul(%8, 3.0) : f32[3,4]
          %11 = add(0, %k) : i64[4,3]
          %12 = sub(%k, 0) : i64[4,3]
          %13 = mul(%k, 3) : i64[4,3]
          %14 = tuple(%10, %13) : tuple(f32[3,4], i64[4,3])
          return %14
    """)


def test_simplify_sqrt_transpose_reshape_astype_where():
    assert_pass_output(simplify.run, """
        graph f(%x: f64[2,3,4], %c: bool[2,3,4]) -> tuple(f64[2,3,4], f64[4,2,3], f64[6,4], f64[2,3,4])
          %0 = pow(%x, 0.5) : f64[2,3,4]
          %1 = transpose(%0, (1, 0, 2)) : f64[3,2,4]
          %2 = transpose(%1, (2, 1, 0)) : f64[4,2,3]
          %3 = reshape(%x, (24,)) : f64[24]
          %4 = reshape(%3, (6, 4)) : f64[6,4]
          %5 = add(%4, 1.0) : f64[6,4]
          %6 = astype(%x) {dtype=np.float64} : f64[2,3,4]
          %7 = where(%c, %6, %6) : f64[2,3,4]
          %8 = reshape(%7, (2, 3, 4)) : f64[2,3,4]
          %9 = mul(%8, 2.0) : f64[2,3,4]
          %10 = tuple(%0, %2, %5, %9) : tuple(f64[2,3,4], f64[4,2,3], f64[6,4], f64[2,3,4])
          return %10
    """, """
        graph f(%x: f64[2,3,4], %c: bool[2,3,4]) -> tuple(f64[2,3,4], f64[4,2,3], f64[6,4], f64[2,3,4])
          %0 = sqrt(%x) : f64[2,3,4]
          %1 = pow(%x, 0.5) : f64[2,3,4]
          %2 = transpose(%0, (1, 0, 2)) : f64[3,2,4]
          %3 = transpose(%0, (2, 0, 1)) : f64[4,2,3]
          %4 = transpose(%2, (2, 1, 0)) : f64[4,2,3]
          %5 = reshape(%x, (24,)) : f64[24]
          %6 = reshape(%x, (6, 4)) : f64[6,4]
          %7 = reshape(%5, (6, 4)) : f64[6,4]
          %8 = add(%6, 1.0) : f64[6,4]
          %9 = astype(%x) {dtype=np.float64} : f64[2,3,4]
          %10 = where(%c, %x, %x) : f64[2,3,4]
          %11 = reshape(%x, (2, 3, 4)) : f64[2,3,4]
          %12 = mul(%x, 2.0) : f64[2,3,4]
          %13 = tuple(%0, %3, %8, %12) : tuple(f64[2,3,4], f64[4,2,3], f64[6,4], f64[2,3,4])
          return %13
    """)


def test_simplify_keeps_results_the_caller_gets_distinct():
    # returning x * 1 or x - 0 must hand the caller a new array, not its own argument
    assert_pass_leaves(simplify.run, """
        graph f(%x: f64[3], %k: i64[3]) -> tuple(f64[3], i64[3])
          %0 = mul(%x, 1) : f64[3]
          %1 = sub(%k, 0) : i64[3]
          %2 = tuple(%0, %1) : tuple(f64[3], i64[3])
          return %2
    """)


def test_simplify_keeps_dtype_shape_and_negative_zero():
    # x * 1.0 on ints is a float array; x + 0.0 turns -0.0 into +0.0; where(True, a, b) broadcasts
    # to b's shape; x ** 0.5 on ints is not NumPy's sqrt fast path
    assert_pass_leaves(simplify.run, """
        graph f(%k: i64[3], %x: f64[3], %b: f64[2,3]) -> tuple(f64[3], f64[3], f64[2,3], f64[3])
          %0 = mul(%k, 1.0) : f64[3]
          %1 = add(%x, 0) : f64[3]
          %2 = where(True, %x, %b) : f64[2,3]
          %3 = pow(%k, 0.5) : f64[3]
          %4 = tuple(%0, %1, %2, %3) : tuple(f64[3], f64[3], f64[2,3], f64[3])
          return %4
    """)


def test_simplify_never_shares_a_buffer_that_is_written_or_returned():
    # `y = x * 1; y += 1` must not write x; `return x * 1` must hand the caller a new array
    assert_pass_leaves(simplify.run, """
        graph f(%x: f64[3]) -> tuple(f64[3], f64[3])
          %y = mul(%x, 1) : f64[3]
          %y.1 = inplace(%y, 1) {op='add'} : f64[3]
          %0 = mul(%x, 1) : f64[3]
          %1 = tuple(%y.1, %0) : tuple(f64[3], f64[3])
          return %1
    """)
    assert_pass_leaves(simplify.run, """
        graph f(%x: f64[3]) -> f64[3]
          %y = mul(%x, 1) : f64[3]
          %0 = setitem(%x, 5.0) {index=[0]} : none
          %1 = add(%y, 1) : f64[3]
          return %1
    """)


def test_simplify_python_scalars_freely():
    assert_pass_output(simplify.run, """
        graph f(%n: int, %s: float) -> tuple(int, float)
          %0 = add(%n, 0) : int
          %1 = mul(%s, 1) : float
          %2 = tuple(%0, %1) : tuple(int, float)
          return %2
    """, """
        graph f(%n: int, %s: float) -> tuple(int, float)
          %0 = add(%n, 0) : int
          %1 = mul(%s, 1) : float
          %2 = tuple(%n, %s) : tuple(int, float)
          return %2
    """)


def test_simplify_keeps_the_square_of_a_python_float():
    # `1e200 ** 2` raises OverflowError on a Python float, `1e200 * 1e200` is inf: only ints square as products
    assert_pass_output(simplify.run, """
        graph f(%s: float, %n: int) -> tuple(float, int)
          %0 = pow(%s, 2) : float
          %1 = pow(%n, 2) : int
          %2 = tuple(%0, %1) : tuple(float, int)
          return %2
    """, """
        graph f(%s: float, %n: int) -> tuple(float, int)
          %0 = pow(%s, 2) : float
          %1 = mul(%n, %n) : int
          %2 = pow(%n, 2) : int
          %3 = tuple(%0, %1) : tuple(float, int)
          return %3
    """)
