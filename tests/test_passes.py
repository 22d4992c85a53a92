"""Every pass: graph text in, graph text out, including where it must not fire.

Each case also runs the graph before and after the pass on seeded inputs (interpreter, and the
emitted NumPy code for the result) and checks results and argument mutation agree
(tests/graph_testing.py).
"""

import importlib
import re
import textwrap

import numpy as np
import pytest

from graphjit.graph import parse, verify
from graphjit.graph.passes import cse, dce, dead_branches, fold_constants, licm, memory_plan, simplify, tile, unswitch, vectorize

from graph_testing import assert_pass_leaves, assert_pass_output, norm, run_all_ways


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


# --- tiling ------------------------------------------------------------------------------------------

@pytest.fixture
def small_tiles(monkeypatch):
    """Tile small arrays (8 rows of 4 float64: 64 bytes per tile = 2 rows) so tests stay fast, and
    short chains, so each test shows one mechanism."""
    monkeypatch.setattr(tile, "MIN_ELEMENTS", 8)
    monkeypatch.setattr(tile, "TILE_BYTES", 64)
    monkeypatch.setattr(tile, "MIN_INTERNAL", 1)


def test_tile_slices_what_varies_along_rows_and_passes_the_rest_whole(small_tiles):
    assert_pass_output(tile.run, """
        graph f(%x: f64[8,4], %col: f64[8,1], %row: f64[1,4], %v: f64[4], %s: float) -> f64[8,4]
          %0 = sub(%x, %col) : f64[8,4]
          %1 = mul(%0, %row) : f64[8,4]
          %2 = add(%1, %v) : f64[8,4]
          %3 = mul(%2, %s) : f64[8,4]
          %4 = exp(%3) : f64[8,4]
          return %4
    """, """
        graph f(%x: f64[8,4], %col: f64[8,1], %row: f64[1,4], %v: f64[4], %s: float) -> f64[8,4]
          %0 = empty((8, 4)) {dtype=np.float64} : f64[8,4]
          %1 = for_range(0, 8, 2, %x, %col, %row, %v, %s, %0) {carried=0, tile=2} : tuple()
            body(%i: int, %x.1: f64[8,4], %col.1: f64[8,1], %row.1: f64[1,4], %v.1: f64[4], %s.1: float, %2: f64[8,4]) {
              %3 = add(%i, 2) : int
              %4 = getitem(%x.1, %i, %3) {index=[$1:$2]} : f64[2,4]
              %5 = getitem(%col.1, %i, %3) {index=[$1:$2]} : f64[2,1]
              %6 = sub(%4, %5) : f64[2,4]
              %7 = mul(%6, %row.1) : f64[2,4]
              %8 = add(%7, %v.1) : f64[2,4]
              %9 = mul(%8, %s.1) : f64[2,4]
              %10 = exp(%9) : f64[2,4]
              %11 = setitem(%2, %10, %i, %3) {index=[$2:$3]} : none
              yield
            }
          return %0
    """)


def test_tile_writes_values_used_later_and_reuses_a_dead_input(small_tiles):
    # %t is a temporary nobody reads after the chain's first node: the first value the chain must
    # hand on (%1, summed later) is written into it; the result %2 gets a new array
    assert_pass_output(tile.run, """
        graph f(%x: f64[8,4]) -> tuple(f64[8,4], f64[])
          %t = copy(%x) : f64[8,4]
          %0 = mul(%t, 2.0) : f64[8,4]
          %1 = tanh(%0) : f64[8,4]
          %2 = add(%1, 1.0) : f64[8,4]
          %3 = sum(%1) : f64[]
          %4 = tuple(%2, %3) : tuple(f64[8,4], f64[])
          return %4
    """, """
        graph f(%x: f64[8,4]) -> tuple(f64[8,4], f64[])
          %t = copy(%x) : f64[8,4]
          %0 = empty((8, 4)) {dtype=np.float64} : f64[8,4]
          %1 = for_range(0, 8, 2, %t, %0) {carried=0, tile=2} : tuple()
            body(%i: int, %t.1: f64[8,4], %2: f64[8,4]) {
              %3 = add(%i, 2) : int
              %4 = getitem(%t.1, %i, %3) {index=[$1:$2]} : f64[2,4]
              %5 = mul(%4, 2.0) : f64[2,4]
              %6 = tanh(%5) : f64[2,4]
              %7 = setitem(%t.1, %6, %i, %3) {index=[$2:$3]} : none
              %8 = add(%6, 1.0) : f64[2,4]
              %9 = setitem(%2, %8, %i, %3) {index=[$2:$3]} : none
              yield
            }
          %10 = sum(%t) : f64[]
          %11 = tuple(%0, %10) : tuple(f64[8,4], f64[])
          return %11
    """)


def test_tile_stops_a_chain_at_a_scalar_operation(small_tiles):
    assert_pass_output(tile.run, """
        graph f(%x: f64[8,4], %n: int) -> tuple(f64[8,4], int)
          %0 = mul(%x, 2.0) : f64[8,4]
          %1 = exp(%0) : f64[8,4]
          %2 = add(%n, 1) : int
          %3 = tuple(%1, %2) : tuple(f64[8,4], int)
          return %3
    """, """
        graph f(%x: f64[8,4], %n: int) -> tuple(f64[8,4], int)
          %0 = empty((8, 4)) {dtype=np.float64} : f64[8,4]
          %1 = for_range(0, 8, 2, %x, %0) {carried=0, tile=2} : tuple()
            body(%i: int, %x.1: f64[8,4], %2: f64[8,4]) {
              %3 = add(%i, 2) : int
              %4 = getitem(%x.1, %i, %3) {index=[$1:$2]} : f64[2,4]
              %5 = mul(%4, 2.0) : f64[2,4]
              %6 = exp(%5) : f64[2,4]
              %7 = setitem(%2, %6, %i, %3) {index=[$2:$3]} : none
              yield
            }
          %8 = add(%n, 1) : int
          %9 = tuple(%0, %8) : tuple(f64[8,4], int)
          return %9
    """)


def test_tile_leaves_chains_that_keep_too_little_to_themselves(small_tiles, monkeypatch):
    monkeypatch.setattr(tile, "MIN_INTERNAL", 3)
    assert_pass_leaves(tile.run, """
        graph f(%x: f64[8,4], %s: f64[8,1]) -> f64[8,4]
          %0 = truediv(%x, %s) : f64[8,4]
          %1 = mul(%0, 1.5) : f64[8,4]
          %2 = add(%1, 0.25) : f64[8,4]
          return %2
    """)


def test_tile_leaves_small_split_escaping_and_indivisible_chains(small_tiles):
    # %0..%1: every value is used after the chain; %2: a chain of one (the sum splits it);
    # %5..%6: 7 rows of 16 bytes cannot be cut into equal tiles near 64 bytes; %7..%8: too small
    assert_pass_leaves(tile.run, """
        graph f(%x: f64[8,4], %y: f64[7,2], %z: f64[2,3]) -> tuple(f64[8,4], f64[8,4], f64[8,4], f64[7,2], f64[2,3])
          %0 = mul(%x, 2.0) : f64[8,4]
          %1 = add(%0, 1.0) : f64[8,4]
          %2 = exp(%1) : f64[8,4]
          %3 = sum(%2) : f64[]
          %4 = mul(%2, %3) : f64[8,4]
          %5 = mul(%y, 2.0) : f64[7,2]
          %6 = exp(%5) : f64[7,2]
          %7 = mul(%z, 2.0) : f64[2,3]
          %8 = exp(%7) : f64[2,3]
          %9 = tuple(%0, %1, %4, %6, %8) : tuple(f64[8,4], f64[8,4], f64[8,4], f64[7,2], f64[2,3])
          return %9
    """)


# --- every pass documents itself with a before/after printout that is real output -----------------

PASSES = ["fold_constants", "simplify", "cse", "dce", "dead_branches", "licm", "tile", "memory_plan"]


def _docstring_graphs(doc: str) -> list[str]:
    """The `graph ...` blocks of a docstring, in order (side-by-side columns are split)."""
    blocks, current = [], None
    for line in doc.splitlines():
        stripped = line.strip()
        if stripped.startswith("graph "):
            current = [stripped]
            blocks.append(current)
        elif current is not None and stripped and not stripped.endswith(":") and \
                not stripped.startswith(("Before", "After", "which", "A ", "Only", "Kept", "Not", "The", "Invariant",
                                         "NOTE")):
            current.append(line)
        else:
            current = None
    return ["\n".join(block) for block in blocks]


@pytest.mark.parametrize("name", PASSES)
def test_docstring_example_is_real_output(name):
    module = importlib.import_module(f"graphjit.graph.passes.{name}")
    doc = module.run.__doc__
    assert "Before" in doc and "After" in doc, f"{name}.run needs a before/after printout"
    blocks = _docstring_graphs(doc)
    assert len(blocks) == 2, f"{name}: expected a before and an after graph, found {len(blocks)}"
    before, after = (norm(_reindent(b)) for b in blocks)
    graph = parse(before)
    assert module.run(graph) is True
    assert norm(str(graph)) == after, f"{name} docstring 'After' differs; actual:\n{graph}"
    run_all_ways(parse(before), graph)


def _reindent(block: str) -> str:
    lines = block.splitlines()
    header, body = lines[0], lines[1:]
    indent = min((len(b) - len(b.lstrip()) for b in body if b.strip()), default=0)
    return "\n".join([header] + ["  " + b[indent:] for b in body])


def test_every_pass_module_has_a_run_and_a_one_line_summary():
    for name in PASSES + ["manager"]:
        module = importlib.import_module(f"graphjit.graph.passes.{name}")
        assert module.__doc__ and module.__doc__.strip(), name
        if name != "manager":
            assert callable(module.run)
            assert re.match(r"^[A-Z].*\.$", module.__doc__.strip().splitlines()[0]), name


def test_tile_sizes_tiles_by_the_widest_element_of_the_chain(small_tiles):
    # the chain starts with a bool comparison; tiles are 64 bytes of float64 (8 elements), not of bool
    assert_pass_output(tile.run, """
        graph f(%x: f64[32]) -> f64[32]
          %0 = gt(%x, 1.0) : bool[32]
          %1 = mul(%x, 0.01) : f64[32]
          %2 = where(%0, 1.0, %1) : f64[32]
          return %2
    """, """
        graph f(%x: f64[32]) -> f64[32]
          %0 = empty((32,)) {dtype=np.float64} : f64[32]
          %1 = for_range(0, 32, 8, %x, %0) {carried=0, tile=8} : tuple()
            body(%i: int, %x.1: f64[32], %2: f64[32]) {
              %3 = add(%i, 8) : int
              %4 = getitem(%x.1, %i, %3) {index=[$1:$2]} : f64[8]
              %5 = gt(%4, 1.0) : bool[8]
              %6 = mul(%4, 0.01) : f64[8]
              %7 = select(%5, 1.0, %6) : f64[8]
              %8 = setitem(%2, %7, %i, %3) {index=[$2:$3]} : none
              yield
            }
          return %0
    """)


def test_tile_and_vectorize_leave_the_loops_tile_made(small_tiles):
    # another round of the O2 passes must not tile a tile again, nor turn its loop back into slices
    g = parse(textwrap.dedent("""
        graph f(%x: f64[64]) -> f64[64]
          %0 = gt(%x, 1.0) : bool[64]
          %1 = mul(%x, 0.01) : f64[64]
          %2 = where(%0, 1.0, %1) : f64[64]
          return %2
    """))
    assert tile.run(g)
    once = str(g)
    assert not tile.run(g) and not vectorize.run(g)
    assert str(g) == once



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
