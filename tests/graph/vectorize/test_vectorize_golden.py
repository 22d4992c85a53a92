"""Golden graph text for the vectorizer: graph text in, `vectorize.run`, graph text out.

Each input is the O0 graph of a kernel in tests/vector_programs.py; the output is what the pass
makes of it. Set GRAPHJIT_UPDATE_GOLDEN=1 to print the actual outputs (ready to paste).
"""

import os
import textwrap

import pytest

from graphjit.graph import parse, verify
from graphjit.graph.passes import vectorize

CASES = {}

CASES["elementwise"] = (
    """
    graph strided(%x: f64[6]) -> f64[6]
      %out = zeros_like(%x) : f64[6]  # vector_programs.py:216:11
      %0 = for_range(0, 6, 2, %x, %out) {carried=0} : tuple()  # vector_programs.py:217:5
        body(%i: int, %x.1: f64[6], %out.1: f64[6]) {
          %1 = getitem(%x.1, %i) {index=[$1]} : f64[]  # vector_programs.py:218:18
          %2 = mul(%1, 3) : f64[]  # vector_programs.py:218:18
          %3 = setitem(%out.1, %2, %i) {index=[$2]} : none  # vector_programs.py:218:9
          yield 
        }
      return %out
""",
    """
    graph strided(%x: f64[6]) -> f64[6]
      %out = zeros_like(%x) : f64[6]  # vector_programs.py:216:11
      %0 = note() {text='vectorized loop vector_programs.py:217: elementwise'} : none  # vector_programs.py:217:5
      %1 = getitem(%x) {index=[::2]} : f64[3]  # vector_programs.py:217:5
      %2 = mul(%1, 3) : f64[3]  # vector_programs.py:217:5
      %3 = setitem(%out, %2) {index=[::2]} : none  # vector_programs.py:217:5
      return %out
""",
)

CASES["stencil"] = (
    """
    graph stencil3(%u: f64[6]) -> f64[6]
      %v = zeros_like(%u) : f64[6]  # vector_programs.py:100:9
      %0 = for_range(1, 5, 1, %u, %v) {carried=0} : tuple()  # vector_programs.py:101:5
        body(%i: int, %u.1: f64[6], %v.1: f64[6]) {
          %1 = sub(%i, 1) : int  # vector_programs.py:102:19
          %2 = getitem(%u.1, %1) {index=[$1]} : f64[]  # vector_programs.py:102:17
          %3 = getitem(%u.1, %i) {index=[$1]} : f64[]  # vector_programs.py:102:28
          %4 = add(%2, %3) : f64[]  # vector_programs.py:102:17
          %5 = add(%i, 1) : int  # vector_programs.py:102:37
          %6 = getitem(%u.1, %5) {index=[$1]} : f64[]  # vector_programs.py:102:35
          %7 = add(%4, %6) : f64[]  # vector_programs.py:102:17
          %8 = truediv(%7, 3.0) : f64[]  # vector_programs.py:102:16
          %9 = setitem(%v.1, %8, %i) {index=[$2]} : none  # vector_programs.py:102:9
          yield 
        }
      return %v
""",
    """
    graph stencil3(%u: f64[6]) -> f64[6]
      %v = zeros_like(%u) : f64[6]  # vector_programs.py:100:9
      %0 = note() {text='vectorized loop vector_programs.py:101: elementwise, stencil'} : none  # vector_programs.py:101:5
      %1 = getitem(%u) {index=[:4]} : f64[4]  # vector_programs.py:101:5
      %2 = getitem(%u) {index=[1:5]} : f64[4]  # vector_programs.py:101:5
      %3 = add(%1, %2) : f64[4]  # vector_programs.py:101:5
      %4 = getitem(%u) {index=[2:]} : f64[4]  # vector_programs.py:101:5
      %5 = add(%3, %4) : f64[4]  # vector_programs.py:101:5
      %6 = truediv(%5, 3.0) : f64[4]  # vector_programs.py:101:5
      %7 = setitem(%v, %6) {index=[1:5]} : none  # vector_programs.py:101:5
      return %v
""",
)

CASES["dot_product"] = (
    """
    graph dot(%x: f64[6], %y: f64[6]) -> object
      %0 = for_range(0, 6, 1, 0.0, %x, %y) {carried=1} : tuple(object)  # vector_programs.py:26:5
        body(%i: int, %s: object, %x.1: f64[6], %y.1: f64[6]) {
          %1 = getitem(%x.1, %i) {index=[$1]} : f64[]  # vector_programs.py:27:14
          %2 = getitem(%y.1, %i) {index=[$1]} : f64[]  # vector_programs.py:27:21
          %3 = mul(%1, %2) : f64[]  # vector_programs.py:27:14
          %s.1 = inplace(%s, %3) {op='add'} : ?[*]  # vector_programs.py:27:9
          yield %s.1
        }
      %s.2 = tuple_get(%0) {index=0} : object  # vector_programs.py:26:5
      return %s.2
""",
    """
    graph dot(%x: f64[6], %y: f64[6]) -> f64[]
      %0 = note() {text='vectorized loop vector_programs.py:26: elementwise, reduction, contraction'} : none  # vector_programs.py:26:5
      %s = dot(%x, %y) : f64[]  # vector_programs.py:26:5
      return %s
""",
)

CASES["running_max"] = (
    """
    graph tern_max(%x: f64[6]) -> object
      %0 = for_range(0, 6, 1, -1.0, %x) {carried=1} : tuple(object)  # vector_programs.py:57:5
        body(%i: int, %m: object, %x.1: f64[6]) {
          %1 = getitem(%x.1, %i) {index=[$1]} : f64[]  # vector_programs.py:58:21
          %2 = gt(%1, %m) : ?[*]  # vector_programs.py:58:21
          %3 = if(%2, %x.1, %i, %m) : tuple(object)  # vector_programs.py:58:13
            then(%x.2: f64[6], %i.1: int, %m.1: object) {
              %4 = getitem(%x.2, %i.1) {index=[$1]} : f64[]  # vector_programs.py:58:13
              yield %4
            }
            else(%x.3: f64[6], %i.2: int, %m.2: object) {
              yield %m.2
            }
          %m.3 = tuple_get(%3) {index=0} : object  # vector_programs.py:58:13
          yield %m.3
        }
      %m.4 = tuple_get(%0) {index=0} : object  # vector_programs.py:57:5
      return %m.4
""",
    """
    graph tern_max(%x: f64[6]) -> f64[]|float
      %0 = note() {text='vectorized loop vector_programs.py:57: elementwise, reduction'} : none  # vector_programs.py:57:5
      %1 = nanmax(%x) : f64[]  # vector_programs.py:57:5
      %m = py_max(-1.0, %1) : f64[]|float  # vector_programs.py:57:5
      return %m
""",
)

CASES["if_else_writes"] = (
    """
    graph ifelse_writes(%x: f64[6]) -> tuple(f64[6], f64[6])
      %out = zeros_like(%x) : f64[6]  # vector_programs.py:159:11
      %neg = zeros_like(%x) : f64[6]  # vector_programs.py:160:11
      %0 = for_range(0, 6, 1, %x, %out, %neg) {carried=0} : tuple()  # vector_programs.py:161:5
        body(%i: int, %x.1: f64[6], %out.1: f64[6], %neg.1: f64[6]) {
          %1 = getitem(%x.1, %i) {index=[$1]} : f64[]  # vector_programs.py:162:12
          %2 = gt(%1, 0.5) : bool[]  # vector_programs.py:162:12
          %3 = if(%2, %x.1, %i, %out.1, %neg.1) : tuple()  # vector_programs.py:162:9
            then(%x.2: f64[6], %i.1: int, %out.2: f64[6], %neg.2: f64[6]) {
              %4 = getitem(%x.2, %i.1) {index=[$1]} : f64[]  # vector_programs.py:163:22
              %5 = mul(%4, 2) : f64[]  # vector_programs.py:163:22
              %6 = setitem(%out.2, %5, %i.1) {index=[$2]} : none  # vector_programs.py:163:13
              yield 
            }
            else(%x.3: f64[6], %i.2: int, %out.3: f64[6], %neg.3: f64[6]) {
              %7 = getitem(%x.3, %i.2) {index=[$1]} : f64[]  # vector_programs.py:165:23
              %8 = neg(%7) : f64[]  # vector_programs.py:165:22
              %9 = setitem(%out.3, %8, %i.2) {index=[$2]} : none  # vector_programs.py:165:13
              %10 = setitem(%neg.3, 1.0, %i.2) {index=[$2]} : none  # vector_programs.py:166:13
              yield 
            }
          yield 
        }
      %11 = tuple(%out, %neg) : tuple(f64[6], f64[6])  # vector_programs.py:167:5
      return %11
""",
    """
    graph ifelse_writes(%x: f64[6]) -> tuple(f64[6], f64[6])
      %neg = zeros_like(%x) : f64[6]  # vector_programs.py:160:11
      %0 = note() {text='vectorized loop vector_programs.py:161: elementwise, where'} : none  # vector_programs.py:161:5
      %1 = gt(%x, 0.5) : bool[6]  # vector_programs.py:161:5
      %2 = mul(%x, 2) : f64[6]  # vector_programs.py:161:5
      %3 = neg(%x) : f64[6]  # vector_programs.py:161:5
      %out = where(%1, %2, %3) : f64[6]  # vector_programs.py:161:5
      %4 = where(%1, %neg, 1.0) : f64[6]  # vector_programs.py:161:5
      %5 = setitem(%neg, %4) {index=[:]} : none  # vector_programs.py:161:5
      %6 = tuple(%out, %neg) : tuple(f64[6], f64[6])  # vector_programs.py:167:5
      return %6
""",
)

CASES["matmul_nest"] = (
    """
    graph matmul3(%a: f64[4,3], %b: f64[3,5]) -> f64[4,5]
      %0 = tuple(4, 5) : tuple(int, int)  # vector_programs.py:84:9
      %c = zeros(%0) : f64[4,5]  # vector_programs.py:84:9
      %1 = for_range(0, 4, 1, %c, %a, %b) {carried=0} : tuple()  # vector_programs.py:85:5
        body(%i: int, %c.1: f64[4,5], %a.1: f64[4,3], %b.1: f64[3,5]) {
          %2 = for_range(0, 5, 1, %c.1, %i, %a.1, %b.1) {carried=0} : tuple()  # vector_programs.py:86:9
            body(%j: int, %c.2: f64[4,5], %i.1: int, %a.2: f64[4,3], %b.2: f64[3,5]) {
              %3 = for_range(0, 3, 1, %c.2, %i.1, %j, %a.2, %b.2) {carried=0} : tuple()  # vector_programs.py:87:13
                body(%p: int, %c.3: f64[4,5], %i.2: int, %j.1: int, %a.3: f64[4,3], %b.3: f64[3,5]) {
                  %4 = getitem(%c.3, %i.2, %j.1) {index=[$1, $2]} : f64[]  # vector_programs.py:88:17
                  %5 = getitem(%a.3, %i.2, %p) {index=[$1, $2]} : f64[]  # vector_programs.py:88:28
                  %6 = getitem(%b.3, %p, %j.1) {index=[$1, $2]} : f64[]  # vector_programs.py:88:38
                  %7 = mul(%5, %6) : f64[]  # vector_programs.py:88:28
                  %8 = inplace(%4, %7) {op='add'} : f64[]  # vector_programs.py:88:17
                  %9 = setitem(%c.3, %8, %i.2, %j.1) {index=[$2, $3]} : none  # vector_programs.py:88:17
                  yield 
                }
              yield 
            }
          yield 
        }
      return %c
""",
    """
    graph matmul3(%a: f64[4,3], %b: f64[3,5]) -> f64[4,5]
      %0 = tuple(4, 5) : tuple(int, int)  # vector_programs.py:84:9
      %1 = note() {text='vectorized loop vector_programs.py:85: elementwise, contraction'} : none  # vector_programs.py:85:5
      %c = matmul(%a, %b) : f64[4,5]  # vector_programs.py:85:5
      return %c
""",
)

CASES["convolution_window"] = (
    """
    graph conv1d(%x: f64[8], %w: f64[3]) -> f64[6]
      %out = zeros(6) : f64[6]  # vector_programs.py:125:11
      %0 = for_range(0, 6, 1, %w, %x, %out) {carried=0} : tuple()  # vector_programs.py:126:5
        body(%i: int, %w.1: f64[3], %x.1: f64[8], %out.1: f64[6]) {
          %1 = for_range(0, 3, 1, 0.0, %w.1, %i, %x.1) {carried=1} : tuple(object)  # vector_programs.py:128:9
            body(%k: int, %s: object, %w.2: f64[3], %i.1: int, %x.2: f64[8]) {
              %2 = getitem(%w.2, %k) {index=[$1]} : f64[]  # vector_programs.py:129:18
              %3 = add(%i.1, %k) : int  # vector_programs.py:129:27
              %4 = getitem(%x.2, %3) {index=[$1]} : f64[]  # vector_programs.py:129:25
              %5 = mul(%2, %4) : f64[]  # vector_programs.py:129:18
              %s.1 = inplace(%s, %5) {op='add'} : ?[*]  # vector_programs.py:129:13
              yield %s.1
            }
          %s.2 = tuple_get(%1) {index=0} : object  # vector_programs.py:128:9
          %6 = setitem(%out.1, %s.2, %i) {index=[$2]} : none  # vector_programs.py:130:9
          yield 
        }
      return %out
""",
    """
    graph conv1d(%x: f64[8], %w: f64[3]) -> f64[6]
      %0 = note() {text='vectorized loop vector_programs.py:126: window, contraction'} : none  # vector_programs.py:126:5
      %out = correlate(%x, %w) {mode='valid'} : f64[6]  # vector_programs.py:126:5
      return %out
""",
)

CASES["prefix_sum"] = (
    """
    graph prefix(%x: f64[6]) -> f64[6]
      %out = empty_like(%x) : f64[6]  # vector_programs.py:183:11
      %0 = for_range(0, 6, 1, 0.0, %x, %out) {carried=1} : tuple(object)  # vector_programs.py:185:5
        body(%i: int, %s: object, %x.1: f64[6], %out.1: f64[6]) {
          %1 = getitem(%x.1, %i) {index=[$1]} : f64[]  # vector_programs.py:186:14
          %s.1 = inplace(%s, %1) {op='add'} : ?[*]  # vector_programs.py:186:9
          %2 = setitem(%out.1, %s.1, %i) {index=[$2]} : none  # vector_programs.py:187:9
          yield %s.1
        }
      %s.2 = tuple_get(%0) {index=0} : object  # vector_programs.py:185:5
      return %out
""",
    """
    graph prefix(%x: f64[6]) -> f64[6]
      %0 = note() {text='vectorized loop vector_programs.py:185: elementwise, scan'} : none  # vector_programs.py:185:5
      %out = cumsum(%x) : f64[6]  # vector_programs.py:185:5
      return %out
""",
)

CASES["recurrence_stays_a_loop"] = (
    """
    graph recurrence(%b: f64[6]) -> f64[6]
      %x = zeros_like(%b) : f64[6]  # vector_programs.py:177:9
      %0 = for_range(1, 6, 1, %x, %b) {carried=0} : tuple()  # vector_programs.py:178:5
        body(%i: int, %x.1: f64[6], %b.1: f64[6]) {
          %1 = sub(%i, 1) : int  # vector_programs.py:179:24
          %2 = getitem(%x.1, %1) {index=[$1]} : f64[]  # vector_programs.py:179:22
          %3 = mul(0.5, %2) : f64[]  # vector_programs.py:179:16
          %4 = getitem(%b.1, %i) {index=[$1]} : f64[]  # vector_programs.py:179:33
          %5 = add(%3, %4) : f64[]  # vector_programs.py:179:16
          %6 = setitem(%x.1, %5, %i) {index=[$2]} : none  # vector_programs.py:179:9
          yield 
        }
      return %x
""",
    """
    graph recurrence(%b: f64[6]) -> f64[6]
      %x = zeros_like(%b) : f64[6]  # vector_programs.py:177:9
      %0 = for_range(1, 6, 1, %x, %b) {carried=0, vectorize='no: carried dependence: `x[i - 1]` reads what `x[i]` writes in another iteration'} : tuple()  # vector_programs.py:178:5
        body(%i: int, %x.1: f64[6], %b.1: f64[6]) {
          %1 = sub(%i, 1) : int  # vector_programs.py:179:24
          %2 = getitem(%x.1, %1) {index=[$1]} : f64[]  # vector_programs.py:179:22
          %3 = mul(0.5, %2) : f64[]  # vector_programs.py:179:16
          %4 = getitem(%b.1, %i) {index=[$1]} : f64[]  # vector_programs.py:179:33
          %5 = add(%3, %4) : f64[]  # vector_programs.py:179:16
          %6 = setitem(%x.1, %5, %i) {index=[$2]} : none  # vector_programs.py:179:9
          yield 
        }
      return %x
""",
)

CASES["aliasing_guard"] = (
    """
    graph alias_args(%a: f64[6], %b: f64[6]) -> f64[6]
      %0 = for_range(0, 5, 1, %b, %a) {carried=0} : tuple()  # vector_programs.py:283:5
        body(%i: int, %b.1: f64[6], %a.1: f64[6]) {
          %1 = getitem(%b.1, %i) {index=[$1]} : f64[]  # vector_programs.py:284:20
          %2 = mul(%1, 2) : f64[]  # vector_programs.py:284:20
          %3 = add(%i, 1) : int  # vector_programs.py:284:11
          %4 = setitem(%a.1, %2, %3) {index=[$2]} : none  # vector_programs.py:284:9
          yield 
        }
      return %a
""",
    """
    graph alias_args(%a: f64[6], %b: f64[6]) -> f64[6]
      %0 = note() {text='vectorized loop vector_programs.py:283: elementwise (the loop runs instead when a/b share memory)'} : none  # vector_programs.py:283:5
      %1 = call(%a, %b) {fn='numpy.may_share_memory'} : bool  # vector_programs.py:283:5
      %2 = if(%1, %b, %a) {guard='shared memory'} : tuple()  # vector_programs.py:283:5
        then(%b.1: f64[6], %a.1: f64[6]) {
          %3 = for_range(0, 5, 1, %b.1, %a.1) {carried=0, vectorize='no: kept as the fallback of its vectorized form'} : tuple()  # vector_programs.py:283:5
            body(%i: int, %b.2: f64[6], %a.2: f64[6]) {
              %4 = getitem(%b.2, %i) {index=[$1]} : f64[]  # vector_programs.py:284:20
              %5 = mul(%4, 2) : f64[]  # vector_programs.py:284:20
              %6 = add(%i, 1) : int  # vector_programs.py:284:11
              %7 = setitem(%a.2, %5, %6) {index=[$2]} : none  # vector_programs.py:284:9
              yield 
            }
          yield 
        }
        else(%b.3: f64[6], %a.3: f64[6]) {
          %8 = getitem(%b.3) {index=[:5]} : f64[5]  # vector_programs.py:283:5
          %9 = mul(%8, 2) : f64[5]  # vector_programs.py:283:5
          %10 = setitem(%a.3, %9) {index=[1:]} : none  # vector_programs.py:283:5
          yield 
        }
      return %a
""",
)

CASES["empty_range"] = (
    """
    graph dot(%x: f64[0], %y: f64[0]) -> object
      %0 = for_range(0, 0, 1, 0.0, %x, %y) {carried=1} : tuple(object)  # vector_programs.py:26:5
        body(%i: int, %s: object, %x.1: f64[0], %y.1: f64[0]) {
          %1 = getitem(%x.1, %i) {index=[$1]} : f64[*]  # vector_programs.py:27:14
          %2 = getitem(%y.1, %i) {index=[$1]} : f64[*]  # vector_programs.py:27:21
          %3 = mul(%1, %2) : f64[*]  # vector_programs.py:27:14
          %s.1 = inplace(%s, %3) {op='add'} : ?[*]  # vector_programs.py:27:9
          yield %s.1
        }
      %s.2 = tuple_get(%0) {index=0} : object  # vector_programs.py:26:5
      return %s.2
""",
    """
    graph dot(%x: f64[0], %y: f64[0]) -> float
      %0 = note() {text='loop vector_programs.py:26 removed: its range is empty'} : none  # vector_programs.py:26:5
      return 0.0
""",
)


CASES["symbolic_shapes"] = (
    """
    graph f(%x: f64[?], %y: f64[?]) -> f64[?]
      %n = dim(%x) {axis=0} : int
      %out = empty_like(%x) : f64[?]
      %0 = for_range(0, %n, 1, %x, %y, %out) {carried=0} : tuple()  # f.py:3:5
        body(%i: int, %x.1: f64[?], %y.1: f64[?], %out.1: f64[?]) {
          %1 = getitem(%x.1, %i) {index=[$1]} : f64[]  # f.py:4:18
          %2 = getitem(%y.1, %i) {index=[$1]} : f64[]  # f.py:4:25
          %3 = add(%1, %2) : f64[]  # f.py:4:18
          %4 = setitem(%out.1, %3, %i) {index=[$2]} : none  # f.py:4:9
          yield
        }
      return %out
    """,
    """
    graph f(%x: f64[?], %y: f64[?]) -> f64[?]
      %n = dim(%x) {axis=0} : int
      %out = empty_like(%x) : f64[?]
      %0 = note() {text='vectorized loop f.py:3: elementwise, gather (the loop runs instead when `y[i]` (an index out of range) could raise)'} : none  # f.py:3:5
      %1 = arange(0, %n) : i64[?]  # f.py:3:5
      %2 = dim(%y) {axis=0} : int  # f.py:3:5
      %3 = neg(%2) : int  # f.py:3:5
      %4 = lt(%1, %3) : bool[?]  # f.py:3:5
      %5 = ge(%1, %2) : bool[?]  # f.py:3:5
      %6 = bitor(%4, %5) : bool[?]  # f.py:3:5
      %7 = any(%6) : bool[]  # f.py:3:5
      %8 = if(%7, %n, %x, %y, %out, %1) {guard='`y[i]` (an index out of range)'} : tuple()  # f.py:3:5
        then(%n.1: int, %x.1: f64[?], %y.1: f64[?], %out.1: f64[?], %v: i64[?]) {
          %9 = for_range(0, %n.1, 1, %x.1, %y.1, %out.1) {carried=0, vectorize='no: kept as the fallback of its vectorized form'} : tuple()  # f.py:3:5
            body(%i: int, %x.2: f64[?], %y.2: f64[?], %out.2: f64[?]) {
              %10 = getitem(%x.2, %i) {index=[$1]} : f64[]  # f.py:4:18
              %11 = getitem(%y.2, %i) {index=[$1]} : f64[]  # f.py:4:25
              %12 = add(%10, %11) : f64[]  # f.py:4:18
              %13 = setitem(%out.2, %12, %i) {index=[$2]} : none  # f.py:4:9
              yield 
            }
          yield 
        }
        else(%n.2: int, %x.3: f64[?], %y.3: f64[?], %out.3: f64[?], %v.1: i64[?]) {
          %14 = getitem(%y.3, %v.1) {index=[$1]} : f64[*]  # f.py:3:5
          %15 = add(%x.3, %14) : f64[*]  # f.py:3:5
          %16 = setitem(%out.3, %15) {index=[:]} : none  # f.py:3:5
          yield 
        }
      return %out
    """,
)
# x has the loop's length n, so x[i] is x itself; y's length is not known, so y[i] is a gather whose
# indices are tested first (the loop runs, and raises IndexError after its writes, when one is out of
# range); out = np.empty_like(x) has x's shape.


CASES["math_guard"] = (   # math.log raises where np.log returns NaN: the loop runs for such arguments
    """
    graph logs(%x: f64[6]) -> f64[6]
      %out = empty_like(%x) : f64[6]  # k.py:2:11
      %0 = for_range(0, 6, 1, %x, %out) {carried=0} : tuple()  # k.py:3:5
        body(%i: int, %x.1: f64[6], %out.1: f64[6]) {
          %1 = getitem(%x.1, %i) {index=[$1]} : f64[]  # k.py:4:27
          %2 = call(%1) {fn='math.log'} : float  # k.py:4:18
          %3 = setitem(%out.1, %2, %i) {index=[$2]} : none  # k.py:4:9
          yield 
        }
      return %out
""",
    """
    graph logs(%x: f64[6]) -> f64[6]
      %out = empty_like(%x) : f64[6]  # k.py:2:11
      %0 = note() {text='vectorized loop k.py:3: elementwise (the loop runs instead when math.log could raise)'} : none  # k.py:3:5
      %1 = le(%x, 0.0) : bool[6]  # k.py:3:5
      %2 = any(%1) : bool[]  # k.py:3:5
      %3 = if(%2, %x) {guard='math.log'} : tuple(f64[6])  # k.py:3:5
        then(%x.1: f64[6]) {
          %out.1 = empty_like(%x.1) : f64[6]  # k.py:2:11
          %4 = for_range(0, 6, 1, %x.1, %out.1) {carried=0, vectorize='no: kept as the fallback of its vectorized form'} : tuple()  # k.py:3:5
            body(%i: int, %x.2: f64[6], %out.2: f64[6]) {
              %5 = getitem(%x.2, %i) {index=[$1]} : f64[]  # k.py:4:27
              %6 = call(%5) {fn='math.log'} : float  # k.py:4:18
              %7 = setitem(%out.2, %6, %i) {index=[$2]} : none  # k.py:4:9
              yield 
            }
          yield %out.1
        }
        else(%x.3: f64[6]) {
          %8 = log(%x.3) : f64[6]  # k.py:3:5
          yield %8
        }
      %out.3 = tuple_get(%3) {index=0} : f64[6]  # k.py:3:5
      return %out.3
""",
)


@pytest.mark.parametrize("name", sorted(CASES))
def test_vectorize_golden(name):
    before, after = CASES[name]
    graph = parse(textwrap.dedent(before))
    vectorize.run(graph)
    verify(graph)
    actual = str(graph)
    if os.environ.get("GRAPHJIT_UPDATE_GOLDEN"):
        print(f"--- {name}\n{actual}")
    assert actual == textwrap.dedent(after).lstrip("\n"), f"graph text changed; actual:\n{actual}"
    again = parse(actual)        # the output is graph text too
    assert str(again) == actual


def test_vectorize_is_idempotent():
    graph = parse(textwrap.dedent(CASES["stencil"][0]))
    assert vectorize.run(graph)
    text = str(graph)
    assert not vectorize.run(graph)
    assert str(graph) == text
