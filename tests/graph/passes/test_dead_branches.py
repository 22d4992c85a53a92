"""Dead branches (graph/passes/dead_branches.py): graph text in, graph text out (tests/graph_testing.py),
including where it must not fire.
"""

from graphjit.graph.passes import dead_branches

from graph_testing import assert_pass_leaves, assert_pass_output


# --- dead branches ------------------------------------------------------------------------------

def test_dead_branches_inline_the_taken_branch():
    assert_pass_output(dead_branches.run, """
        graph f(%x: f64[3]) -> f64[3]
          %0 = if(True, %x) : tuple(f64[3])
            then(%x.1: f64[3]) {
              %y = mul(%x.1, 2) : f64[3]
              yield %y
            }
            else(%x.2: f64[3]) {
              %y.1 = neg(%x.2) : f64[3]
              yield %y.1
            }
          %y.2 = tuple_get(%0) {index=0} : f64[3]
          %1 = if(False, %y.2) : tuple(f64[3], float)
            then(%2: f64[3]) {
              yield %2, 1.0
            }
            else(%3: f64[3]) {
              %4 = if(True, %3) : tuple(f64[3])
                then(%5: f64[3]) {
                  %6 = exp(%5) : f64[3]
                  yield %6
                }
                else(%7: f64[3]) {
                  yield %7
                }
              %8 = tuple_get(%4) {index=0} : f64[3]
              yield %8, 2.0
            }
          %9 = tuple_get(%1) {index=0} : f64[3]
          %10 = tuple_get(%1) {index=1} : float
          %11 = add(%9, %10) : f64[3]
          return %11
    """, """
        graph f(%x: f64[3]) -> f64[3]
          %y = mul(%x, 2) : f64[3]
          %0 = exp(%y) : f64[3]
          %1 = add(%0, 2.0) : f64[3]
          return %1
    """)


def test_dead_branches_drop_loops_that_never_run():
    assert_pass_output(dead_branches.run, """
        graph f(%x: f64[3]) -> tuple(f64[3], f64[3])
          %0 = for_range(5, 2, 1, %x) {carried=1} : tuple(f64[3])
            body(%i: int, %x.1: f64[3]) {
              %1 = exp(%x.1) : f64[3]
              yield %1
            }
          %2 = tuple_get(%0) {index=0} : f64[3]
          %3 = while(%x) {carried=1} : tuple(f64[3])
            cond(%x.2: f64[3]) {
              yield False
            }
            body(%x.3: f64[3]) {
              %4 = exp(%x.3) : f64[3]
              yield %4
            }
          %5 = tuple_get(%3) {index=0} : f64[3]
          %6 = tuple(%2, %5) : tuple(f64[3], f64[3])
          return %6
    """, """
        graph f(%x: f64[3]) -> tuple(f64[3], f64[3])
          %0 = tuple(%x, %x) : tuple(f64[3], f64[3])
          return %0
    """)


def test_dead_branches_leave_run_time_control_alone():
    assert_pass_leaves(dead_branches.run, """
        graph f(%x: f64[3], %n: int) -> f64[3]
          %0 = sum(%x) : f64[]
          %1 = gt(%0, 0) : bool[]
          %2 = if(%1, %x) : tuple(f64[3])
            then(%x.1: f64[3]) {
              yield %x.1
            }
            else(%x.2: f64[3]) {
              %3 = neg(%x.2) : f64[3]
              yield %3
            }
          %4 = tuple_get(%2) {index=0} : f64[3]
          %5 = for_range(0, %n, 1, %4) {carried=1} : tuple(f64[3])
            body(%i: int, %6: f64[3]) {
              %7 = mul(%6, 2.0) : f64[3]
              yield %7
            }
          %8 = tuple_get(%5) {index=0} : f64[3]
          return %8
    """)
