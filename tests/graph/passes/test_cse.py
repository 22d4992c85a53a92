"""Common-subexpression elimination (graph/passes/cse.py): graph text in, graph text out (tests/graph_testing.py),
including where it must not fire.
"""

from graphjit.graph.passes import cse

from graph_testing import assert_pass_leaves, assert_pass_output


# --- common-subexpression elimination -----------------------------------------------------------

def test_cse_merges_identical_pure_nodes():
    assert_pass_output(cse.run, """
        graph f(%x: f64[3]) -> f64[3]
          %0 = exp(%x) : f64[3]
          %1 = exp(%x) : f64[3]
          %2 = getitem(%x) {index=[0]} : f64[]
          %3 = getitem(%x) {index=[0]} : f64[]
          %4 = add(%0, %1) : f64[3]
          %5 = mul(%4, %2) : f64[3]
          %6 = add(%5, %3) : f64[3]
          return %6
    """, """
        graph f(%x: f64[3]) -> f64[3]
          %0 = exp(%x) : f64[3]
          %1 = getitem(%x) {index=[0]} : f64[]
          %2 = add(%0, %0) : f64[3]
          %3 = mul(%2, %1) : f64[3]
          %4 = add(%3, %1) : f64[3]
          return %4
    """)


def test_cse_not_across_a_write_to_what_was_read():
    assert_pass_leaves(cse.run, """
        graph f(%x: f64[3]) -> f64[]
          %0 = sum(%x) : f64[]
          %1 = setitem(%x, 5.0) {index=[0]} : none
          %2 = sum(%x) : f64[]
          %3 = add(%0, %2) : f64[]
          return %3
    """)


def test_cse_not_across_a_write_through_a_view_or_a_call_or_a_loop():
    assert_pass_leaves(cse.run, """
        graph f(%x: f64[3]) -> f64[]
          %0 = sum(%x) : f64[]
          %v = getitem(%x) {index=[0:2]} : f64[2]
          %1 = setitem(%v, 5.0) {index=[0]} : none
          %2 = sum(%x) : f64[]
          %3 = call(%x) {fn='numpy.sort'} : object
          %4 = sum(%x) : f64[]
          %5 = for_range(0, 2, 1, %x) {carried=0} : tuple()
            body(%i: int, %x.1: f64[3]) {
              %6 = setitem(%x.1, 1.0, %i) {index=[$2]} : none
              yield
            }
          %7 = sum(%x) : f64[]
          %8 = add(%0, %2) : f64[]
          %9 = add(%8, %4) : f64[]
          %10 = add(%9, %7) : f64[]
          return %10
    """)


def test_cse_across_a_write_to_unrelated_fresh_memory():
    assert_pass_output(cse.run, """
        graph f(%x: f64[3]) -> f64[3]
          %0 = sum(%x) : f64[]
          %t = copy(%x) : f64[3]
          %1 = setitem(%t, 5.0) {index=[0]} : none
          %2 = sum(%x) : f64[]
          %3 = add(%t, %0) : f64[3]
          %4 = add(%3, %2) : f64[3]
          return %4
    """, """
        graph f(%x: f64[3]) -> f64[3]
          %0 = sum(%x) : f64[]
          %t = copy(%x) : f64[3]
          %1 = setitem(%t, 5.0) {index=[0]} : none
          %2 = add(%t, %0) : f64[3]
          %3 = add(%2, %0) : f64[3]
          return %3
    """)


def test_cse_not_when_a_result_is_written_later_or_both_are_returned():
    # b = x * 2; b += 1 must leave a = x * 2 alone; `return x * 2, x * 2` returns two arrays
    assert_pass_leaves(cse.run, """
        graph f(%x: f64[3]) -> tuple(f64[3], f64[3])
          %a = mul(%x, 2) : f64[3]
          %b = mul(%x, 2) : f64[3]
          %b.1 = inplace(%b, 1) {op='add'} : f64[3]
          %0 = tuple(%a, %b.1) : tuple(f64[3], f64[3])
          return %0
    """)
    assert_pass_leaves(cse.run, """
        graph f(%x: f64[3]) -> tuple(f64[3], f64[3])
          %a = mul(%x, 2) : f64[3]
          %b = mul(%x, 2) : f64[3]
          %0 = tuple(%a, %b) : tuple(f64[3], f64[3])
          return %0
    """)


def test_cse_never_merges_impure_calls():
    assert_pass_leaves(cse.run, """
        graph f(%x: f64[3]) -> f64[3]
          %0 = call(%x) {fn='numpy.linalg.norm'} : object
          %1 = call(%x) {fn='numpy.linalg.norm'} : object
          %2 = add(%0, %1) : object
          %3 = mul(%x, %2) : f64[3]
          return %3
    """)
