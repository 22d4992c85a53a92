"""Loop unswitching (graph/passes/unswitch.py): graph text in, graph text out (tests/graph_testing.py),
including where it must not fire.
"""

import textwrap

from graphjit.graph import parse, verify
from graphjit.graph.passes import unswitch

from graph_testing import assert_pass_leaves, assert_pass_output


# --- unswitching -------------------------------------------------------------------------------

def test_unswitch_hoists_a_loop_invariant_branch_into_two_loops():
    assert_pass_output(unswitch.run, """
        graph f(%x: f64[4], %out: f64[4], %up: bool) -> f64[4]
          %0 = for_range(0, 4, 1, %x, %out, %up) {carried=0} : tuple()
            body(%i: int, %x.1: f64[4], %out.1: f64[4], %up.1: bool) {
              %1 = getitem(%x.1, %i) {index=[$1]} : f64[]
              %2 = if(%up.1, %1) : tuple(f64[])
                then(%a: f64[]) {
                  %3 = mul(%a, 2.0) : f64[]
                  yield %3
                }
                else(%b: f64[]) {
                  yield %b
                }
              %4 = tuple_get(%2) {index=0} : f64[]
              %5 = setitem(%out.1, %4, %i) {index=[$2]} : none
              yield
            }
          return %out
    """, """
        graph f(%x: f64[4], %out: f64[4], %up: bool) -> f64[4]
          %0 = if(%up, %x, %out, %up) : tuple()
            then(%x.1: f64[4], %out.1: f64[4], %up.1: bool) {
              %1 = for_range(0, 4, 1, %x.1, %out.1, %up.1) {carried=0, unswitched=2} : tuple()
                body(%i: int, %x.2: f64[4], %out.2: f64[4], %up.2: bool) {
                  %2 = getitem(%x.2, %i) {index=[$1]} : f64[]
                  %3 = mul(%2, 2.0) : f64[]
                  %4 = setitem(%out.2, %3, %i) {index=[$2]} : none
                  yield 
                }
              yield 
            }
            else(%x.3: f64[4], %out.3: f64[4], %up.3: bool) {
              %5 = for_range(0, 4, 1, %x.3, %out.3, %up.3) {carried=0, unswitched=2} : tuple()
                body(%i.1: int, %x.4: f64[4], %out.4: f64[4], %up.4: bool) {
                  %6 = getitem(%x.4, %i.1) {index=[$1]} : f64[]
                  %7 = setitem(%out.4, %6, %i.1) {index=[$2]} : none
                  yield 
                }
              yield 
            }
          return %out
    """)


def test_unswitch_leaves_conditions_the_loop_computes_or_that_are_arrays():
    # %c varies with i; %m is an array (its truth raises, maybe in no iteration); %k is carried
    assert_pass_leaves(unswitch.run, """
        graph f(%x: f64[4], %m: bool[1]) -> int
          %0 = for_range(0, 4, 1, 0, %x, %m) {carried=1} : tuple(int)
            body(%i: int, %k: int, %x.1: f64[4], %m.1: bool[1]) {
              %1 = getitem(%x.1, %i) {index=[$1]} : f64[]
              %c = gt(%1, 0.5) : bool
              %2 = if(%c, %k) : tuple(int)
                then(%a: int) {
                  %3 = add(%a, 1) : int
                  yield %3
                }
                else(%b: int) {
                  yield %b
                }
              %4 = tuple_get(%2) {index=0} : int
              %5 = if(%m.1, %4) : tuple(int)
                then(%p: int) {
                  yield %p
                }
                else(%q: int) {
                  yield %q
                }
              %6 = tuple_get(%5) {index=0} : int
              %7 = if(%6, %6) : tuple(int)
                then(%r: int) {
                  yield %r
                }
                else(%s: int) {
                  yield %s
                }
              %8 = tuple_get(%7) {index=0} : int
              yield %8
            }
          %9 = tuple_get(%0) {index=0} : int
          return %9
    """)


def test_unswitch_copies_a_loop_at_most_four_times():
    g = parse(textwrap.dedent("""
        graph f(%x: f64[4], %out: f64[4], %a: bool, %b: bool, %c: bool) -> f64[4]
          %0 = for_range(0, 4, 1, %x, %out, %a, %b, %c) {carried=0} : tuple()
            body(%i: int, %x.1: f64[4], %out.1: f64[4], %a.1: bool, %b.1: bool, %c.1: bool) {
              %1 = getitem(%x.1, %i) {index=[$1]} : f64[]
              %2 = if(%a.1, %1) : tuple(f64[])
                then(%p: f64[]) {
                  %3 = mul(%p, 2.0) : f64[]
                  yield %3
                }
                else(%q: f64[]) {
                  yield %q
                }
              %4 = tuple_get(%2) {index=0} : f64[]
              %5 = if(%b.1, %4) : tuple(f64[])
                then(%r: f64[]) {
                  %6 = add(%r, 1.0) : f64[]
                  yield %6
                }
                else(%s: f64[]) {
                  yield %s
                }
              %7 = tuple_get(%5) {index=0} : f64[]
              %8 = if(%c.1, %7) : tuple(f64[])
                then(%t: f64[]) {
                  %9 = neg(%t) : f64[]
                  yield %9
                }
                else(%u: f64[]) {
                  yield %u
                }
              %10 = tuple_get(%8) {index=0} : f64[]
              %11 = setitem(%out.1, %10, %i) {index=[$2]} : none
              yield
            }
          return %out
    """))
    while unswitch.run(g):
        pass
    text = str(g)
    assert text.count("= for_range(") == 4 and text.count("unswitched=4") == 4, text
    verify(g)
