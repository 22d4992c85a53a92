"""The Numba kernel marking pass (graph/passes/kernels.py): graph text in, graph text out.

The pass only records a decision on each outermost loop that stays a loop: `numba='kernel'`, or
`numba='no: <reason>'` (and then tries the loops inside). The reasons come from
graph/analysis/kernel_plan.py; programs, kernels and their semantics are tested in
tests/backends/test_numba_kernels.py.
"""

from graphjit.graph.passes import kernels

from graph_testing import assert_pass_leaves, assert_pass_output

RECURRENCE = """
    graph f(%b: f64[8]) -> f64[8]
      %x = zeros_like(%b) : f64[8]
      %0 = for_range(1, 8, 1, %x, %b) {carried=0, vectorize='no: carried dependence'} : tuple()
        body(%i: int, %x.1: f64[8], %b.1: f64[8]) {
          %1 = sub(%i, 1) : int
          %2 = getitem(%x.1, %1) {index=[$1]} : f64[]
          %3 = mul(0.5, %2) : f64[]
          %4 = getitem(%b.1, %i) {index=[$1]} : f64[]
          %5 = add(%3, %4) : f64[]
          %6 = setitem(%x.1, %5, %i) {index=[$2]} : none
          yield
        }
      return %x
"""


def test_a_recurrence_on_float64_arrays_is_marked_as_a_kernel():
    assert_pass_output(kernels.run, RECURRENCE, RECURRENCE.replace(
        "vectorize='no: carried dependence'}", "vectorize='no: carried dependence', numba='kernel'}"))


def test_a_python_int_that_grows_without_bound_is_not_a_kernel():
    # s * 3 over 50 iterations exceeds int64: Python's int grows, Numba's would wrap
    before = """
        graph f(%x: f64[4]) -> int
          %0 = for_range(0, 50, 1, 1) {carried=1, vectorize='no: carried'} : tuple(int)
            body(%i: int, %s: int) {
              %s.1 = mul(%s, 3) : int
              yield %s.1
            }
          %s.2 = tuple_get(%0) {index=0} : int
          return %s.2
    """
    assert_pass_output(kernels.run, before, before.replace(
        "vectorize='no: carried'}",
        "vectorize='no: carried', numba='no: a Python int (`*`) may exceed 2**62'}"),
        execute=False)   # (the harness compares results as floats; 3**50 is a Python int)


def test_a_math_function_that_raises_keeps_the_loop_and_its_inner_loops_are_tried():
    before = """
        graph f(%x: f64[4]) -> f64[4]
          %0 = for_range(0, 4, 1, %x) {carried=0, vectorize='no: carried'} : tuple()
            body(%i: int, %x.1: f64[4]) {
              %1 = getitem(%x.1, %i) {index=[$1]} : f64[]
              %2 = call(%1) {fn='math.exp'} : float
              %3 = for_range(1, 4, 1, %x.1) {carried=0, vectorize='no: carried'} : tuple()
                body(%j: int, %x.2: f64[4]) {
                  %4 = sub(%j, 1) : int
                  %5 = getitem(%x.2, %4) {index=[$1]} : f64[]
                  %6 = setitem(%x.2, %5, %j) {index=[$2]} : none
                  yield
                }
              %7 = setitem(%x.1, %2, %i) {index=[$2]} : none
              yield
            }
          return %x
    """
    after = before.replace(
        "%0 = for_range(0, 4, 1, %x) {carried=0, vectorize='no: carried'}",
        "%0 = for_range(0, 4, 1, %x) {carried=0, vectorize='no: carried', numba='no: the call math.exp may "
        "raise where Numba does not, or has no kernel spelling'}").replace(
        "%3 = for_range(1, 4, 1, %x.1) {carried=0, vectorize='no: carried'}",
        "%3 = for_range(1, 4, 1, %x.1) {carried=0, vectorize='no: carried', numba='kernel'}")
    assert_pass_output(kernels.run, before, after)


def test_vectorized_and_already_decided_loops_are_left_alone():
    assert_pass_leaves(kernels.run, RECURRENCE.replace("vectorize='no: carried dependence'",
                                                       "vectorize='no: carried dependence', numba='kernel'"))
    assert_pass_leaves(kernels.run, """
        graph f(%b: f64[8]) -> f64[8]
          %x = zeros_like(%b) : f64[8]
          %0 = for_range(0, 8, 1, %x, %b) {carried=0, scalar='python floats (tolist)', vectorize='no: x'} : tuple()
            body(%i: int, %x.1: f64[8], %b.1: f64[8]) {
              %1 = getitem(%b.1, %i) {index=[$1]} : f64[]
              %2 = setitem(%x.1, %1, %i) {index=[$2]} : none
              yield
            }
          return %x
    """)


def test_python_and_numpy_divisions_in_one_loop_are_not_a_kernel():
    before = """
        graph f(%x: f64[4]) -> f64[4]
          %0 = for_range(0, 4, 1, %x) {carried=0, vectorize='no: carried'} : tuple()
            body(%i: int, %x.1: f64[4]) {
              %1 = getitem(%x.1, %i) {index=[$1]} : f64[]
              %2 = float(%1) : float
              %3 = truediv(1.0, %2) : float
              %4 = truediv(%1, %1) : f64[]
              %5 = add(%3, %4) : f64[]
              %6 = setitem(%x.1, %5, %i) {index=[$2]} : none
              yield
            }
          return %x
    """
    assert_pass_output(kernels.run, before, before.replace(
        "vectorize='no: carried'}", "vectorize='no: carried', numba='no: it divides both Python numbers "
        "(ZeroDivisionError) and NumPy ones (inf)'}"))


def test_a_ufunc_the_column_allows_on_floats_only_keeps_an_integer_loop_in_python():
    # np.abs(np.int32 min) wraps in NumPy; the column allows `abs` on floats only
    before = """
        graph f(%x: i32[4]) -> i32[4]
          %0 = for_range(1, 4, 1, %x) {carried=0, vectorize='no: carried'} : tuple()
            body(%i: int, %x.1: i32[4]) {
              %1 = sub(%i, 1) : int
              %2 = getitem(%x.1, %1) {index=[$1]} : i32[]
              %3 = abs(%2) : i32[]
              %4 = setitem(%x.1, %3, %i) {index=[$2]} : none
              yield
            }
          return %x
    """
    assert_pass_output(kernels.run, before, before.replace(
        "vectorize='no: carried'}", "vectorize='no: carried', numba='no: `abs` on integers has no kernel spelling'}"))
