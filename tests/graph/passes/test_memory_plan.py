"""Memory planning (graph/passes/memory_plan.py): graph text in, graph text out (tests/graph_testing.py),
including where it must not fire.
"""

from graphjit.graph.passes import memory_plan

from graph_testing import assert_pass_leaves, assert_pass_output


# --- memory planning ----------------------------------------------------------------------------

def test_memory_plan_dense_layer():
    assert_pass_output(memory_plan.run, """
        graph dense(%x: f32[8,6], %w: f32[6,5], %b: f32[5]) -> f32[8,5]
          %t = matmul(%x, %w) : f32[8,5]
          %t.1 = add(%t, %b) : f32[8,5]
          %t.2 = maximum(%t.1, 0) : f32[8,5]
          return %t.2
    """, """
        graph dense(%x: f32[8,6], %w: f32[6,5], %b: f32[5]) -> f32[8,5]
          %t = matmul(%x, %w) : f32[8,5]
          %t.1 = inplace(%t, %b) {op='add'} : f32[8,5]
          %t.2 = maximum(%t.1, 0) {out=0} : f32[8,5]
          return %t.2
    """)


def test_memory_plan_elementwise_chain_commutes_and_uses_out_positions():
    assert_pass_output(memory_plan.run, """
        graph f(%x: f64[4,3]) -> bool[4,3]
          %0 = mul(%x, %x) : f64[4,3]
          %1 = add(2.0, %0) : f64[4,3]
          %2 = sub(1.0, %1) : f64[4,3]
          %3 = tanh(%2) : f64[4,3]
          %4 = neg(%3) : f64[4,3]
          %5 = pow(%4, 2) : f64[4,3]
          %6 = lt(%5, %x) : bool[4,3]
          %7 = logical_not(%6) : bool[4,3]
          return %7
    """, """
        graph f(%x: f64[4,3]) -> bool[4,3]
          %0 = mul(%x, %x) : f64[4,3]
          %1 = inplace(%0, 2.0) {op='add'} : f64[4,3]
          %2 = sub(1.0, %1) {out=1} : f64[4,3]
          %3 = tanh(%2) {out=0} : f64[4,3]
          %4 = neg(%3) {out=0} : f64[4,3]
          %5 = inplace(%4, 2) {op='pow'} : f64[4,3]
          %6 = lt(%5, %x) : bool[4,3]
          %7 = logical_not(%6) {out=0} : bool[4,3]
          return %7
    """)


def test_memory_plan_in_a_loop_body():
    assert_pass_output(memory_plan.run, """
        graph f(%x: f64[4,3]) -> f64[3]
          %acc = zeros(3) : f64[3]
          %0 = for_range(0, 4, 1, %acc, %x) {carried=1} : tuple(f64[3])
            body(%i: int, %acc.1: f64[3], %x.1: f64[4,3]) {
              %1 = getitem(%x.1, %i) {index=[$1]} : f64[3]
              %2 = mul(%1, %i) : f64[3]
              %3 = exp(%2) : f64[3]
              %acc.2 = add(%acc.1, %3) : f64[3]
              yield %acc.2
            }
          %acc.3 = tuple_get(%0) {index=0} : f64[3]
          return %acc.3
    """, """
        graph f(%x: f64[4,3]) -> f64[3]
          %acc = zeros(3) : f64[3]
          %0 = for_range(0, 4, 1, %acc, %x) {carried=1} : tuple(f64[3])
            body(%i: int, %acc.1: f64[3], %x.1: f64[4,3]) {
              %1 = getitem(%x.1, %i) {index=[$1]} : f64[3]
              %2 = mul(%1, %i) : f64[3]
              %3 = exp(%2) {out=0} : f64[3]
              %acc.2 = inplace(%3, %acc.1) {op='add'} : f64[3]
              yield %acc.2
            }
          %acc.3 = tuple_get(%0) {index=0} : f64[3]
          return %acc.3
    """)


def test_memory_plan_never_writes_args_params_views_or_constants():
    assert_pass_leaves(memory_plan.run, """
        graph f(%x: f64[4,3]) -> tuple(f64[4,3], f64[4,3], f64[3,4], f64[3])
          param %w: f64[4,3] = globals['w']
          %0 = exp(%x) : f64[4,3]
          %1 = add(%w, 1.0) : f64[4,3]
          %2 = T(%x) : f64[3,4]
          %3 = mul(%2, 2.0) : f64[3,4]
          %4 = getitem(%x) {index=[0]} : f64[3]
          %5 = neg(%4) : f64[3]
          %6 = tuple(%0, %1, %3, %5) : tuple(f64[4,3], f64[4,3], f64[3,4], f64[3])
          return %6
    """)


def test_memory_plan_never_reuses_a_view_of_a_temporary():
    assert_pass_leaves(memory_plan.run, """
        graph f(%x: f64[4,3]) -> f64[3,4]
          %t = mul(%x, 2.0) : f64[4,3]
          %v = T(%t) : f64[3,4]
          %0 = exp(%v) : f64[3,4]
          return %0
    """)


def test_memory_plan_not_when_the_temporary_is_used_later_returned_or_captured():
    # values used after an in-place update would see it: %t is read again by %1 (so %0 allocates;
    # %1, its last use, may reuse it); %u is returned; %s is captured by a region that runs after %3
    assert_pass_output(memory_plan.run, """
        graph f(%x: f64[3], %c: bool) -> tuple(f64[3], f64[3], f64[3], f64[3])
          %t = mul(%x, 2.0) : f64[3]
          %0 = add(%t, 1.0) : f64[3]
          %1 = sub(%t, %0) : f64[3]
          %u = exp(%x) : f64[3]
          %2 = neg(%u) : f64[3]
          %s = mul(%x, 3.0) : f64[3]
          %3 = sqrt(%s) : f64[3]
          %4 = if(%c, %s) : tuple(f64[3])
            then(%s.1: f64[3]) {
              yield %s.1
            }
            else(%s.2: f64[3]) {
              %5 = neg(%s.2) : f64[3]
              yield %5
            }
          %6 = tuple_get(%4) {index=0} : f64[3]
          %7 = add(%3, %6) : f64[3]
          %8 = tuple(%7, %1, %u, %2) : tuple(f64[3], f64[3], f64[3], f64[3])
          return %8
    """, """
        graph f(%x: f64[3], %c: bool) -> tuple(f64[3], f64[3], f64[3], f64[3])
          %t = mul(%x, 2.0) : f64[3]
          %0 = add(%t, 1.0) : f64[3]
          %1 = inplace(%t, %0) {op='sub'} : f64[3]
          %u = exp(%x) : f64[3]
          %2 = neg(%u) : f64[3]
          %s = mul(%x, 3.0) : f64[3]
          %3 = sqrt(%s) : f64[3]
          %4 = if(%c, %s) : tuple(f64[3])
            then(%s.1: f64[3]) {
              yield %s.1
            }
            else(%s.2: f64[3]) {
              %5 = neg(%s.2) : f64[3]
              yield %5
            }
          %6 = tuple_get(%4) {index=0} : f64[3]
          %7 = inplace(%3, %6) {op='add'} : f64[3]
          %8 = tuple(%7, %1, %u, %2) : tuple(f64[3], f64[3], f64[3], f64[3])
          return %8
    """)


def test_memory_plan_needs_equal_static_types():
    # float32 buffer for a float64 result; broadcasting into a smaller buffer; unknown shapes; 0-d
    assert_pass_leaves(memory_plan.run, """
        graph f(%x: f32[3], %y: f64[3], %m: f32[2,3], %s: f64[]) -> tuple(f64[3], f32[2,3], f64[])
          %t = mul(%x, 2.0) : f32[3]
          %0 = add(%t, %y) : f64[3]
          %u = mul(%x, 3.0) : f32[3]
          %1 = add(%u, %m) : f32[2,3]
          %v = mul(%s, 2.0) : f64[]
          %2 = exp(%v) : f64[]
          %3 = tuple(%0, %1, %2) : tuple(f64[3], f32[2,3], f64[])
          return %3
    """)


def test_memory_plan_keeps_a_users_own_out():
    assert_pass_leaves(memory_plan.run, """
        graph f(%x: f64[3]) -> f64[3]
          %y = zeros_like(%x) : f64[3]
          %0 = exp(%x, %y) {kw=('out',)} : f64[3]
          return %y
    """)


def test_memory_plan_keeps_quiet_python_float_arithmetic_quiet():
    """`quiet` (graph/attrs.py: Python float arithmetic done on arrays, run in np.errstate) is kept on
    the in-place and `out=` forms, so they stay silent too."""
    assert_pass_output(memory_plan.run, """
        graph f(%x: f64[4]) -> f64[4]
          %0 = fabs(%x) : f64[4]
          %1 = mul(%0, 2.0) {quiet=True} : f64[4]
          %2 = sub(1.0, %1) {quiet=True} : f64[4]
          return %2
    """, """
        graph f(%x: f64[4]) -> f64[4]
          %0 = fabs(%x) : f64[4]
          %1 = inplace(%0, 2.0) {op='mul', quiet=True} : f64[4]
          %2 = sub(1.0, %1) {out=1, quiet=True} : f64[4]
          return %2
    """)
