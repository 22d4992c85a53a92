"""Dead-code elimination (graph/passes/dce.py): graph text in, graph text out (tests/graph_testing.py),
including where it must not fire.
"""

from graphjit.graph.passes import dce

from graph_testing import assert_pass_leaves, assert_pass_output


# --- dead-code elimination ----------------------------------------------------------------------

def test_dce_removes_unused_nodes_dead_stores_pure_branches_and_captures():
    assert_pass_output(dce.run, """
        graph f(%x: f64[3], %y: f64[3], %c: bool) -> f64[3]
          param %w: f64[3] = globals['w']
          %0 = add(%x, %y) : f64[3]
          %t = copy(%x) : f64[3]
          %1 = setitem(%t, 0.0) {index=[0]} : none
          %2 = if(%c, %x, %y) : tuple(f64[3])
            then(%x.1: f64[3], %y.1: f64[3]) {
              %3 = exp(%x.1) : f64[3]
              yield %3
            }
            else(%x.2: f64[3], %y.2: f64[3]) {
              yield %x.2
            }
          %4 = tuple_get(%2) {index=0} : f64[3]
          %5 = for_range(0, 3, 1, %x, %y) {carried=1} : tuple(f64[3])
            body(%i: int, %x.3: f64[3], %y.3: f64[3]) {
              %6 = mul(%x.3, 2.0) : f64[3]
              yield %6
            }
          %7 = tuple_get(%5) {index=0} : f64[3]
          %8 = mul(%7, 2.0) : f64[3]
          return %8
    """, """
        graph f(%x: f64[3], %y: f64[3], %c: bool) -> f64[3]
          %0 = for_range(0, 3, 1, %x) {carried=1} : tuple(f64[3])
            body(%i: int, %x.1: f64[3]) {
              %1 = mul(%x.1, 2.0) : f64[3]
              yield %1
            }
          %2 = tuple_get(%0) {index=0} : f64[3]
          %3 = mul(%2, 2.0) : f64[3]
          return %3
    """)


def test_dce_drops_carried_values_nothing_reads():
    # `j` is carried out of the first loop only to be the second loop's start value; the second
    # loop's `j` is read by nobody after it: both slots go, the loops stay (they write %out)
    assert_pass_output(dce.run, """
        graph f(%x: f64[4], %out: f64[4]) -> f64[4]
          %0 = for_range(0, 2, 1, 0, %x, %out) {carried=1} : tuple(int)
            body(%i: int, %j: int, %x.1: f64[4], %out.1: f64[4]) {
              %1 = getitem(%x.1, %i) {index=[$1]} : f64[]
              %2 = setitem(%out.1, %1, %i) {index=[$2]} : none
              yield %i
            }
          %3 = tuple_get(%0) {index=0} : int
          %4 = for_range(2, 4, 1, %3, %x, %out) {carried=1} : tuple(int)
            body(%k: int, %j.1: int, %x.2: f64[4], %out.2: f64[4]) {
              %5 = getitem(%x.2, %k) {index=[$1]} : f64[]
              %6 = neg(%5) : f64[]
              %7 = setitem(%out.2, %6, %k) {index=[$2]} : none
              yield %k
            }
          return %out
    """, """
        graph f(%x: f64[4], %out: f64[4]) -> f64[4]
          %0 = for_range(0, 2, 1, %x, %out) {carried=0} : tuple()
            body(%i: int, %x.1: f64[4], %out.1: f64[4]) {
              %1 = getitem(%x.1, %i) {index=[$1]} : f64[]
              %2 = setitem(%out.1, %1, %i) {index=[$2]} : none
              yield
            }
          %3 = for_range(2, 4, 1, %x, %out) {carried=0} : tuple()
            body(%k: int, %x.2: f64[4], %out.2: f64[4]) {
              %4 = getitem(%x.2, %k) {index=[$1]} : f64[]
              %5 = neg(%4) : f64[]
              %6 = setitem(%out.2, %5, %k) {index=[$2]} : none
              yield
            }
          return %out
    """)


def test_dce_keeps_writes_the_caller_or_a_later_node_can_see():
    assert_pass_leaves(dce.run, """
        graph f(%x: f64[3], %y: f64[3]) -> f64[3]
          param %w: f64[3] = globals['w']
          %0 = setitem(%x, 1.0) {index=[0]} : none
          %v = getitem(%y) {index=[1:]} : f64[2]
          %1 = setitem(%v, 2.0) {index=[0]} : none
          %y.1 = inplace(%w, 1.0) {op='add'} : f64[3]
          %t = copy(%x) : f64[3]
          %2 = setitem(%t, 3.0) {index=[1]} : none
          %3 = sum(%t) : f64[]
          %u = copy(%x) : f64[3]
          %4 = setitem(%u, 4.0) {index=[2]} : none
          %5 = call(%x) {fn='numpy.sort'} : object
          %6 = while(%3) {carried=1} : tuple(f64[])
            cond(%7: f64[]) {
              %8 = lt(%7, 0.0) : bool[]
              yield %8
            }
            body(%9: f64[]) {
              yield %9
            }
          %10 = add(%u, %3) : f64[3]
          return %10
    """)


def test_dce_removes_a_users_out_write_only_when_nobody_reads_it():
    assert_pass_output(dce.run, """
        graph f(%x: f64[3]) -> f64[3]
          %y = zeros_like(%x) : f64[3]
          %0 = exp(%x, %y) {kw=('out',)} : f64[3]
          %z = zeros_like(%x) : f64[3]
          %1 = exp(%x, %z) {kw=('out',)} : f64[3]
          return %z
    """, """
        graph f(%x: f64[3]) -> f64[3]
          %z = zeros_like(%x) : f64[3]
          %0 = exp(%x, %z) {kw=('out',)} : f64[3]
          return %z
    """)
