"""Big temporaries computed into buffers kept between calls (graph/passes/scratch.py): graph text in,
graph text out, each graph run before and after (tests/graph_testing.py); where it must not fire
(a buffer that could outlive the call); then compiled functions called again and again, from two
threads and recursively, against eager NumPy."""

import threading

import numpy as np
import pytest

import graphjit
from graphjit.graph.passes import scratch

from eager_vs_compiled import run_both
from graph_testing import assert_pass_output


def test_a_big_temporary_is_computed_into_the_workspace():
    assert_pass_output(scratch.run, """
        graph f(%x: f64[256,256], %y: f64[256,256]) -> f64[]
          %t = add(%x, %y) : f64[256,256]
          %s = sum(%t) : f64[]
          return %s
    """, """
        graph f(%x: f64[256,256], %y: f64[256,256]) -> f64[]
          %0 = scratch() {buffer=0, slot=0} : f64[256,256]
          %t = np_add(%x, %y, %0) {kw=('out',)} : f64[256,256]
          %s = sum(%t) : f64[]
          return %s
    """)


def test_temporaries_never_alive_together_share_a_buffer_and_others_do_not():
    # %a dies at %b; %b and %c are alive together; %c's slot is %a's again
    assert_pass_output(scratch.run, """
        graph f(%x: f64[256,256]) -> f64[]
          %a = exp(%x) : f64[256,256]
          %b = mul(%a, 2.0) : f64[256,256]
          %c = sin(%x) : f64[256,256]
          %d = add(%b, %c) : f64[256,256]
          %s = sum(%d) : f64[]
          return %s
    """, """
        graph f(%x: f64[256,256]) -> f64[]
          %0 = scratch() {buffer=0, slot=0} : f64[256,256]
          %a = exp(%x, %0) {kw=('out',)} : f64[256,256]
          %1 = scratch() {buffer=1, slot=1} : f64[256,256]
          %b = multiply(%a, 2.0, %1) {kw=('out',)} : f64[256,256]
          %2 = scratch() {buffer=0, slot=0} : f64[256,256]
          %c = sin(%x, %2) {kw=('out',)} : f64[256,256]
          %3 = scratch() {buffer=2, slot=2} : f64[256,256]
          %d = np_add(%b, %c, %3) {kw=('out',)} : f64[256,256]
          %s = sum(%d) : f64[]
          return %s
    """)


def test_values_of_other_types_share_a_buffer_through_views_of_their_own():
    # %a (512 KiB) dies at %b; %c, float32 (256 KiB), takes %a's bytes as a view of its own type
    assert_pass_output(scratch.run, """
        graph f(%x: f64[256,256], %y: f32[256,256]) -> f64[]
          %a = exp(%x) : f64[256,256]
          %b = sum(%a) : f64[]
          %c = sin(%y) : f32[256,256]
          %d = sum(%c) : f32[]
          %e = add(%b, %d) : f64[]
          return %e
    """, """
        graph f(%x: f64[256,256], %y: f32[256,256]) -> f64[]
          %0 = scratch() {buffer=0, slot=0} : f64[256,256]
          %a = exp(%x, %0) {kw=('out',)} : f64[256,256]
          %b = sum(%a) : f64[]
          %1 = scratch() {buffer=0, slot=1} : f32[256,256]
          %c = sin(%y, %1) {kw=('out',)} : f32[256,256]
          %d = sum(%c) : f32[]
          %e = add(%b, %d) : f64[]
          return %e
    """)


@pytest.mark.parametrize("why, graph", [
    ("returned", """
        graph f(%x: f64[256,256]) -> f64[256,256]
          %t = exp(%x) : f64[256,256]
          return %t
    """),
    ("a view of it returned", """
        graph f(%x: f64[256,256]) -> f64[128,256]
          %t = exp(%x) : f64[256,256]
          %v = getitem(%t) {index=[0:128]} : f64[128,256]
          return %v
    """),
    ("in a returned tuple", """
        graph f(%x: f64[256,256]) -> tuple(f64[256,256], int)
          %t = exp(%x) : f64[256,256]
          %r = tuple(%t, 1) : tuple(f64[256,256], int)
          return %r
    """),
    ("given to a Python call that may keep it", """
        graph f(%x: f64[256,256], %keep: object) -> none
          %t = exp(%x) : f64[256,256]
          %0 = pycall(%keep, %t) : object
          return None
    """),
    ("stored in a list", """
        graph f(%x: f64[256,256], %l: object) -> none
          %t = exp(%x) : f64[256,256]
          %0 = setitem(%l, %t) {index=[0]} : none
          return None
    """),
    ("too small to gain", """
        graph f(%x: f64[64,64]) -> f64[]
          %t = exp(%x) : f64[64,64]
          %s = sum(%t) : f64[]
          return %s
    """),
    ("not an elementwise ufunc", """
        graph f(%x: f64[256,256]) -> f64[]
          %t = matmul(%x, %x) : f64[256,256]
          %s = sum(%t) : f64[]
          return %s
    """),
])
def test_a_buffer_that_could_outlive_the_call_is_left_alone(why, graph):
    # (graphs taking a Python object are not run: the test inputs cannot make one)
    assert_pass_output(scratch.run, graph, graph, changed=False, execute="object" not in graph)


def test_the_workspace_is_bounded(monkeypatch):
    monkeypatch.setattr(scratch, "MAX_WORKSPACE_BYTES", 600 * 1024)   # room for one 512 KiB buffer
    assert_pass_output(scratch.run, """
        graph f(%x: f64[256,256]) -> f64[]
          %a = exp(%x) : f64[256,256]
          %b = sin(%a) : f64[256,256]
          %s = sum(%b) : f64[]
          return %s
    """, """
        graph f(%x: f64[256,256]) -> f64[]
          %0 = scratch() {buffer=0, slot=0} : f64[256,256]
          %a = exp(%x, %0) {kw=('out',)} : f64[256,256]
          %b = sin(%a) : f64[256,256]
          %s = sum(%b) : f64[]
          return %s
    """)


# --- compiled, called again and again -------------------------------------------------------------
def stencil(a, out):
    lap = 4.0 * a[1:-1, 1:-1] - (a[2:, 1:-1] + a[:-2, 1:-1] + a[1:-1, 2:] + a[1:-1, :-2])
    flux = np.where(lap * (a[1:-1, 1:-1] - a[:-2, 1:-1]) > 0, 0.0, lap)
    out[:, :] = a[1:-1, 1:-1] - 0.25 * flux
    return float(np.sum(lap * lap)), flux[::2, ::2].copy()


def test_results_of_earlier_calls_are_not_overwritten_by_later_ones():
    jitted = graphjit.jit(stencil, jit_level="O2")
    rng = np.random.default_rng(0)
    inputs = [rng.standard_normal((258, 258)) for _ in range(3)]
    assert "out=_w[" in jitted.source(inputs[0], np.empty((256, 256)))
    kept = []
    for a in inputs:
        out_e, out_c = np.empty((256, 256)), np.empty((256, 256))
        expected = stencil(a, out_e)
        actual = jitted(a, out_c)
        np.testing.assert_array_equal(out_c, out_e)
        assert actual[0] == expected[0]
        np.testing.assert_array_equal(actual[1], expected[1])
        kept.append((actual, expected))
    for actual, expected in kept:   # later calls reused the workspace: earlier results are intact
        np.testing.assert_array_equal(actual[1], expected[1])


@pytest.mark.parametrize("level", ["O0", "O1", "O2"])
@pytest.mark.parametrize("exec_mode", ["sink", "no_sink"])
def test_every_level_and_the_interpreter_equal_eager(level, exec_mode):
    rng = np.random.default_rng(1)
    for _ in range(3):
        run_both(stencil, (rng.standard_normal((130, 130)), np.zeros((128, 128))),
                 jit_config=graphjit.JitConfig(jit_level=level, exec_mode=exec_mode))


def test_two_threads_calling_at_once_each_get_a_workspace():
    jitted = graphjit.jit(stencil, jit_level="O2")
    rng = np.random.default_rng(2)
    inputs = [rng.standard_normal((258, 258)) for _ in range(8)]
    expected = [stencil(a, np.empty((256, 256))) for a in inputs]
    jitted(inputs[0], np.empty((256, 256)))
    failures = []

    def work(k):
        for _ in range(20):
            for a, e in zip(inputs[k::2], expected[k::2]):
                actual = jitted(a, np.empty((256, 256)))
                if actual[0] != e[0] or not np.array_equal(actual[1], e[1]):
                    failures.append(k)
    threads = [threading.Thread(target=work, args=(k,)) for k in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not failures


def test_a_recursive_call_gets_its_own_workspace():
    def f(x, depth):
        t = np.exp(x) * 0.5
        inner = g(x * 0.5, depth - 1) if depth > 0 else 0.0
        return float(np.sum(t)) + inner

    g = graphjit.jit(f, jit_level="O2", jit_config=graphjit.JitConfig(jit_syntax_level="LAX"))
    x = np.random.default_rng(3).standard_normal((256, 256))

    def eager(x, depth):
        return float(np.sum(np.exp(x) * 0.5)) + (eager(x * 0.5, depth - 1) if depth > 0 else 0.0)
    assert g(x, 3) == eager(x, 3)


def test_a_temporary_of_a_loop_body_reuses_its_buffer_at_every_iteration():
    assert_pass_output(scratch.run, """
        graph f(%x: f64[256,256], %n: int) -> f64[256,256]
          %0 = for_range(0, %n, 1, %x) {carried=1} : tuple(f64[256,256])
            body(%i: int, %u: f64[256,256]) {
              %1 = mul(%u, 0.5) : f64[256,256]
              %2 = sin(%1) : f64[256,256]
              yield %2
            }
          %3 = tuple_get(%0) {index=0} : f64[256,256]
          return %3
    """, """
        graph f(%x: f64[256,256], %n: int) -> f64[256,256]
          %0 = for_range(0, %n, 1, %x) {carried=1} : tuple(f64[256,256])
            body(%i: int, %u: f64[256,256]) {
              %1 = scratch() {buffer=0, slot=0} : f64[256,256]
              %2 = multiply(%u, 0.5, %1) {kw=('out',)} : f64[256,256]
              %3 = sin(%2) : f64[256,256]
              yield %3
            }
          %4 = tuple_get(%0) {index=0} : f64[256,256]
          return %4
    """)


def time_steps(u, nt):
    for _ in range(nt):
        un = u.copy()
        u[1:-1, 1:-1] = un[1:-1, 1:-1] + 0.1 * (un[2:, 1:-1] - 2.0 * un[1:-1, 1:-1] + un[:-2, 1:-1]) \
            + 0.1 * (un[1:-1, 2:] - 2.0 * un[1:-1, 1:-1] + un[1:-1, :-2])
        u = np.where(u > 0.5, u * 0.9, u)
    return u, float(np.sum(u * u))


@pytest.mark.parametrize("level", ["O1", "O2"])
def test_a_time_stepping_loop_equals_eager_across_calls(level):
    rng = np.random.default_rng(4)
    jitted = graphjit.jit(time_steps, jit_level=level)
    for nt in (0, 1, 3, 5):
        run_both(time_steps, (rng.standard_normal((200, 200)), nt), jit_level=level)
        a = rng.standard_normal((200, 200))
        expected = time_steps(a.copy(), nt)
        actual = jitted(a.copy(), nt)
        np.testing.assert_array_equal(actual[0], expected[0])
        assert actual[1] == expected[1]


def keep_in(x, box):
    t = np.exp(x) * 0.5
    box[0] = t                 # an object array keeps the array itself
    return float(t.sum())


@pytest.mark.parametrize("level", ["O1", "O2"])
def test_an_array_kept_by_an_object_array_is_never_a_workspace_buffer(level):
    jitted = graphjit.jit(keep_in, jit_level=level)
    rng = np.random.default_rng(5)
    xs = [rng.standard_normal((256, 256)) for _ in range(3)]
    boxes = [np.empty(2, dtype=object) for _ in xs]
    for x, box in zip(xs, boxes):
        jitted(x, box)
    for x, box in zip(xs, boxes):
        np.testing.assert_array_equal(box[0], np.exp(x) * 0.5)


def test_cache_info_says_how_much_the_function_keeps_between_calls():
    jitted = graphjit.jit(stencil, jit_level="O2")
    assert jitted.cache_info()["workspace_bytes"] == 0
    jitted(np.zeros((258, 258)), np.empty((256, 256)))
    kept = jitted.cache_info()["workspace_bytes"]
    assert 256 * 256 * 8 <= kept <= 6 * 258 * 258 * 8     # a few 512 KiB buffers, shared where it can
    assert graphjit.jit(stencil, jit_level="O1").cache_info()["workspace_bytes"] == 0
