"""Loop-invariant code motion (graph/passes/licm.py): graph text in, graph text out (tests/graph_testing.py),
including where it must not fire.
"""

from graphjit.graph import parse
from graphjit.graph.passes import licm

from graph_testing import assert_pass_leaves, assert_pass_output, norm


# --- loop-invariant code motion -----------------------------------------------------------------

def test_licm_hoists_invariant_chain():
    assert_pass_output(licm.run, """
        graph f(%x: f64[4,3], %w: f64[3,3]) -> f64[3]
          %acc = zeros(3) : f64[3]
          %0 = for_range(0, 4, 1, %acc, %x, %w) {carried=1} : tuple(f64[3])
            body(%i: int, %acc.1: f64[3], %x.1: f64[4,3], %w.1: f64[3,3]) {
              %1 = T(%w.1) : f64[3,3]
              %2 = mul(%1, 2.0) : f64[3,3]
              %3 = getitem(%x.1, %i) {index=[$1]} : f64[3]
              %4 = matmul(%3, %2) : f64[3]
              %acc.2 = add(%acc.1, %4) : f64[3]
              yield %acc.2
            }
          %acc.3 = tuple_get(%0) {index=0} : f64[3]
          return %acc.3
    """, """
        graph f(%x: f64[4,3], %w: f64[3,3]) -> f64[3]
          %acc = zeros(3) : f64[3]
          %0 = T(%w) : f64[3,3]
          %1 = mul(%0, 2.0) : f64[3,3]
          %2 = for_range(0, 4, 1, %acc, %x, %w, %0, %1) {carried=1} : tuple(f64[3])
            body(%i: int, %acc.1: f64[3], %x.1: f64[4,3], %w.1: f64[3,3], %3: f64[3,3], %4: f64[3,3]) {
              %5 = getitem(%x.1, %i) {index=[$1]} : f64[3]
              %6 = matmul(%5, %4) : f64[3]
              %acc.2 = add(%acc.1, %6) : f64[3]
              yield %acc.2
            }
          %acc.3 = tuple_get(%2) {index=0} : f64[3]
          return %acc.3
    """)


def test_licm_from_while_condition_and_safe_ops_from_maybe_empty_loops():
    assert_pass_output(licm.run, """
        graph f(%x: f64[3], %n: int) -> f64[3]
          %0 = while(%x, %x) {carried=1} : tuple(f64[3])
            cond(%y: f64[3], %x.1: f64[3]) {
              %1 = sum(%x.1) : f64[]
              %2 = sum(%y) : f64[]
              %3 = lt(%2, %1) : bool[]
              yield %3
            }
            body(%y.1: f64[3], %x.2: f64[3]) {
              %4 = add(%y.1, 1.0) : f64[3]
              yield %4
            }
          %y.2 = tuple_get(%0) {index=0} : f64[3]
          %5 = for_range(0, %n, 1, %y.2, %x) {carried=1} : tuple(f64[3])
            body(%i: int, %6: f64[3], %x.3: f64[3]) {
              %7 = exp(%x.3) : f64[3]
              %8 = sum(%x.3) : f64[]
              %9 = add(%6, %7) : f64[3]
              %10 = add(%9, %8) : f64[3]
              yield %10
            }
          %11 = tuple_get(%5) {index=0} : f64[3]
          return %11
    """, """
        graph f(%x: f64[3], %n: int) -> f64[3]
          %0 = sum(%x) : f64[]
          %1 = while(%x, %x, %0) {carried=1} : tuple(f64[3])
            cond(%y: f64[3], %x.1: f64[3], %2: f64[]) {
              %3 = sum(%y) : f64[]
              %4 = lt(%3, %2) : bool[]
              yield %4
            }
            body(%y.1: f64[3], %x.2: f64[3], %5: f64[]) {
              %6 = add(%y.1, 1.0) : f64[3]
              yield %6
            }
          %y.2 = tuple_get(%1) {index=0} : f64[3]
          %7 = exp(%x) : f64[3]
          %8 = for_range(0, %n, 1, %y.2, %x, %7) {carried=1} : tuple(f64[3])
            body(%i: int, %9: f64[3], %x.3: f64[3], %10: f64[3]) {
              %11 = sum(%x.3) : f64[]
              %12 = add(%9, %10) : f64[3]
              %13 = add(%12, %11) : f64[3]
              yield %13
            }
          %14 = tuple_get(%8) {index=0} : f64[3]
          return %14
    """)


def test_licm_leaves_variant_and_written_memory():
    # index- and carried-dependent nodes; a read of an array the loop writes (%3); a buffer the
    # loop updates in place (%6), which must stay fresh in every iteration
    assert_pass_leaves(licm.run, """
        graph f(%x: f64[3], %n: int) -> tuple(f64[3], f64[3])
          %out = zeros(3) : f64[3]
          %0 = for_range(0, %n, 1, %x, %out) {carried=1} : tuple(f64[3])
            body(%i: int, %acc: f64[3], %out.1: f64[3]) {
              %1 = mul(%acc, %i) : f64[3]
              %2 = setitem(%out.1, %1) {index=[:]} : none
              %3 = sum(%out.1) : f64[]
              %4 = sin(%acc) : f64[3]
              %5 = exp(%out.1) : f64[3]
              %6 = mul(%5, 2.0) : f64[3]
              %7 = inplace(%6, %3) {op='add'} : f64[3]
              %8 = add(%7, %4) : f64[3]
              yield %8
            }
          %9 = tuple_get(%0) {index=0} : f64[3]
          %10 = tuple(%out, %9) : tuple(f64[3], f64[3])
          return %10
    """)


def test_licm_never_moves_what_may_raise_out_of_a_loop_that_may_not_run():
    # `k ** -1` on integers raises, `10 // m` may divide by zero: with n == 0 eager code never
    # runs them, so they stay in the loop (this graph is not executed: with n == 3 it raises)
    text = norm("""
        graph f(%k: i64[3], %n: int, %m: int) -> int
          %0 = for_range(0, %n, 1, 0, %k, %m) {carried=1} : tuple(int)
            body(%i: int, %s: int, %k.1: i64[3], %m.1: int) {
              %1 = pow(%k.1, -1) : f64[3]
              %2 = floordiv(10, %m.1) : int
              %3 = sum(%1) : f64[]
              %4 = add(%s, %2) : int
              yield %4
            }
          %5 = tuple_get(%0) {index=0} : int
          return %5
    """)
    graph = parse(text)
    assert licm.run(graph) is False
    assert norm(str(graph)) == text
