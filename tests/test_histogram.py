"""`np.histogram(a, bins=int, ...)` lowered to the op table's four steps (transpiler/lower/histogram.py,
graph/histogram.py): the graph it makes, the sharing CSE finds between histograms of the same data,
the forms kept as NumPy's call, and counts and edges equal to NumPy's bit for bit (dtype included),
or the same error, eager against compiled at O0/O1/O2 through the emitter and the interpreter."""

import warnings

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

import graphjit
from graphjit.graph import histogram as H

QUIET = [HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much]
CONFIGS = [(level, mode) for level in ("O0", "O1", "O2") for mode in ("auto", "no_sink")]


# --- kernels ---------------------------------------------------------------------------------------
def ratio(data, radius, npt):
    """Mean of `data` per radial bin: two histograms of the same values."""
    counts = np.histogram(radius, npt)[0]
    sums = np.histogram(radius, npt, weights=data)[0]
    return sums / counts


def both(a, w):
    counts, edges = np.histogram(a, 6)
    return counts, edges, np.histogram(a, bins=6, weights=w)[0]


def ranged(a, w):
    return np.histogram(a, 4, range=(0.25, 1.5), weights=w), np.histogram(a, 4, (0.25, 1.5))


def ranged_counts(a, w):
    return ranged(a, w)[0][0], ranged(a, w)[1][0]


def runtime_range(a, lo, hi):
    return np.histogram(a, 3, range=(lo, hi))


def edges_only(a):
    return np.histogram(a, 5)[1]


def default_bins(a):
    return np.histogram(a)


def unsupported(a):
    return np.histogram(a, "auto")[0], np.histogram(a, np.array([0.0, 0.5, 1.0]))[0], \
        np.histogram(a, 4, density=True)[0]


# --- comparison ------------------------------------------------------------------------------------
def outcome(fn, args):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            return fn(*args), None
        except Exception as e:  # noqa: BLE001 - the compiled code must raise the same
            return None, e


def assert_identical(actual, expected):
    """Equal values (NaN where NaN), dtype and shape, through tuples."""
    if isinstance(expected, tuple):
        assert isinstance(actual, tuple) and len(actual) == len(expected)
        for a, e in zip(actual, expected):
            assert_identical(a, e)
        return
    assert np.asarray(actual).dtype == np.asarray(expected).dtype
    assert np.shape(actual) == np.shape(expected)
    assert np.array_equal(actual, expected, equal_nan=True), (actual, expected)


def check(fn, args, level="O2", mode="auto"):
    expected, error = outcome(fn, args)
    actual, compiled_error = outcome(graphjit.jit(fn, jit_level=level, exec_mode=mode), args)
    if error is not None:
        assert type(compiled_error) is type(error) and str(compiled_error) == str(error)
    else:
        assert compiled_error is None, compiled_error
        assert_identical(actual, expected)


def ops_of(graph_text: str) -> list:
    return [line.split("=", 1)[1].split("(", 1)[0].strip() for line in graph_text.splitlines() if " = " in line]


# --- graph text and generated code -----------------------------------------------------------------
def test_two_histograms_share_span_edges_and_bins():
    rng = np.random.default_rng(0)
    graph = str(graphjit.jit(ratio, jit_level="O2").graph(rng.random(50), rng.random(50), 7))
    ops = ops_of(graph)
    assert [ops.count(op) for op in ("hist_range", "hist_edges", "hist_index", "hist_counts")] == [1, 1, 1, 2]
    assert "hist_range(%radius, 7, None) : object" in graph
    assert "hist_edges(%radius, %0, 7) : f64[8]" in graph
    assert "hist_index(%radius, %0, %1) : i64[50]" in graph
    assert "hist_counts(%2, %1) : i64[7]" in graph and "hist_counts(%2, %1, %radius, %data) : f64[7]" in graph


def test_without_cse_each_histogram_has_its_steps():
    rng = np.random.default_rng(0)
    ops = ops_of(str(graphjit.jit(ratio, jit_level="O0").graph(rng.random(50), rng.random(50), 7)))
    assert ops.count("hist_index") == 2 and "call" not in ops


def test_generated_code_bins_once():
    rng = np.random.default_rng(0)
    source = graphjit.jit(ratio, jit_level="O2").source(rng.random(50), rng.random(50), 7)
    assert source.count("_hist.histogram_index(") == 1 and source.count("_hist.histogram_counts(") == 2
    assert "np.histogram(" not in "\n".join(l for l in source.splitlines() if not l.lstrip().startswith("#"))


def test_explicit_range_is_bounded_and_typed_by_the_data():
    a = np.linspace(0, 2, 30, dtype=np.float32)
    graph = str(graphjit.jit(ranged, jit_level="O2").graph(a, a.astype(np.float64)))
    assert "{bounded=True}" in graph and ": f32[5]" in graph
    # both edges reach the caller: two arrays, as eager returns (the span is still computed once)
    assert ops_of(graph).count("hist_edges") == 2 and ops_of(graph).count("hist_range") == 1
    counts_only = str(graphjit.jit(ranged_counts, jit_level="O2").graph(a, a.astype(np.float64)))
    assert ops_of(counts_only).count("hist_index") == 1


def test_edges_alone_need_no_counts():
    graph = str(graphjit.jit(edges_only, jit_level="O2").graph(np.arange(9.0)))
    assert "hist_counts" not in graph and "hist_edges" in graph


def test_other_forms_stay_numpy_calls():
    a = np.random.default_rng(1).random(40)
    ops = ops_of(str(graphjit.jit(unsupported, jit_level="O2").graph(a)))
    assert ops.count("call") == 3 and not any(op.startswith("hist_") for op in ops)
    check(unsupported, (a,))


# --- eager against compiled ------------------------------------------------------------------------
@pytest.mark.parametrize("level,mode", CONFIGS)
def test_kernels_match_numpy(level, mode):
    rng = np.random.default_rng(3)
    a = rng.random(200)
    a[::7] = a[3]                                           # duplicates
    w = rng.standard_normal(200).astype(np.float32)
    check(ratio, (rng.random(200), a, 9), level, mode)
    check(both, (a, w), level, mode)
    check(ranged, (np.append(a * 2, [np.nan, np.inf, -np.inf, 0.25, 1.5]), np.arange(205)), level, mode)
    check(runtime_range, (a, 0.1, 0.7), level, mode)
    check(edges_only, (np.arange(12).reshape(3, 4),), level, mode)
    check(default_bins, (np.array([], dtype=np.float32),), level, mode)
    check(default_bins, (np.full(5, 2.5),), level, mode)


@pytest.mark.parametrize("level,mode", CONFIGS)
def test_errors_match_numpy(level, mode):
    check(ratio, (np.ones(4), np.array([0.0, np.nan, 1.0, 2.0]), 3), level, mode)   # range of NaN
    check(ratio, (np.ones(4), np.array([0.0, np.inf, 1.0, 2.0]), 3), level, mode)
    check(ratio, (np.ones(4), np.arange(4.0), 0), level, mode)                       # bins < 1
    check(ratio, (np.ones(3), np.arange(4.0), 2), level, mode)                       # weights' shape
    check(runtime_range, (np.arange(4.0), 2.0, 1.0), level, mode)                    # max < min
    check(edges_only, (np.array([1.0, np.nextafter(1.0, 2.0)]),), level, mode)       # too many bins


def test_weighted_sums_in_numpy_blocks():
    """More elements than NumPy's block: float32 sums added block by block, as NumPy adds them."""
    rng = np.random.default_rng(5)
    n = 2 * H.BLOCK + 1234
    a = rng.random(n)
    for w in (rng.standard_normal(n).astype(np.float32), rng.standard_normal(n) * 1e8, rng.integers(-9, 9, n)):
        check(both, (a, w))
        check(ranged, (a, w), "O1", "no_sink")


# --- every input NumPy bins, against NumPy ---------------------------------------------------------
SPECIAL = [np.nan, np.inf, -np.inf, 0.0, -0.0, 0.1, 0.2, 0.25, 0.3, 1.0, 1.5, 1 / 3, 2.5, 1e300, 5e-324]


def _steps(a, bins, bounds, weights):
    span = H.histogram_range(a, bins, bounds)
    edges = H.histogram_edges(a, span, bins)
    index = H.histogram_index(a, span, edges, bounded=bounds is not None)
    counts = H.histogram_counts(index, edges) if weights is None else H.histogram_counts(index, edges, a, weights)
    return counts, edges


@st.composite
def histogram_inputs(draw):
    size = draw(st.integers(0, 30))
    dtype = draw(st.sampled_from(["float64", "float32", "int64", "int8", "uint8", "bool"]))
    if dtype.startswith("float"):
        values = draw(st.lists(st.sampled_from(SPECIAL) | st.floats(-4, 4, width=32), min_size=size, max_size=size))
        if draw(st.booleans()):
            values = [v if np.isfinite(v) else 0.5 for v in values]
    else:
        values = draw(st.lists(st.integers(-3, 5) if dtype != "uint8" else st.integers(0, 255),
                               min_size=size, max_size=size))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        a = np.array(values, dtype=np.float64).astype(dtype) if dtype != "bool" else np.array(values) > 1
    bins = draw(st.integers(1, 9))
    bounds = draw(st.sampled_from([None, (0.0, 1.0), (-0.5, 2.5), (0.1, 0.3), (0, 4), (1.0, 1.0), (2.0, 1.0),
                                   (0.0, np.inf)]))
    wdtype = draw(st.sampled_from([None, "float64", "float32", "float16", "int64", "int8", "bool", "complex128"]))
    weights = None
    if wdtype is not None:
        raw = np.array(draw(st.lists(st.sampled_from([0.5, -1.0, 3.0, 0.1, 1e4, -0.0]), min_size=size,
                                     max_size=size)), dtype=np.float64)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")                # 1e4 wraps around in int8, as NumPy casts it
            weights = raw.astype(wdtype) if wdtype != "bool" else raw > 0
    return a, bins, bounds, weights


@settings(max_examples=150, deadline=None, derandomize=True, database=None, suppress_health_check=QUIET)
@given(histogram_inputs())
def test_steps_equal_numpy(inputs):
    a, bins, bounds, weights = inputs
    expected, error = outcome(lambda: np.histogram(a, bins, range=bounds, weights=weights), ())
    actual, own_error = outcome(lambda: _steps(a, bins, bounds, weights), ())
    if error is not None:
        assert type(own_error) is type(error) and str(own_error) == str(error)
    else:
        assert own_error is None, own_error
        assert_identical(actual, expected)


def hist_unweighted(a, bins):
    return np.histogram(a, bins)


def hist_weighted(a, w):
    counts = np.histogram(a, 4)[0]
    return counts, np.histogram(a, 4, weights=w)


def hist_bounded(a, w):
    return np.histogram(a, 5, range=(-0.5, 2.5), weights=w)


@settings(max_examples=24, deadline=None, derandomize=True, database=None, suppress_health_check=QUIET)
@given(histogram_inputs(), st.sampled_from(CONFIGS))
def test_compiled_equals_numpy(inputs, config):
    a, bins, _, weights = inputs
    level, mode = config
    check(hist_unweighted, (a, bins), level, mode)
    if weights is not None:
        check(hist_weighted, (a, weights), level, mode)
        check(hist_bounded, (a, weights), level, mode)


@pytest.mark.parametrize("dtype", ["float64", "float32", "float16"])
def test_values_on_and_beside_every_edge(dtype):
    """Each edge, and the floats either side of it: where the scaled index rounds to a neighbour."""
    rng = np.random.default_rng(11)
    for bins, low, high in [(7, -0.3, 0.9), (1000, 0.0, 1.0), (97, -1e3, 3.7), (10, 0.1, 0.3)]:
        edges = np.linspace(low, high, bins + 1).astype(dtype)
        a = np.concatenate([edges, np.nextafter(edges, np.inf, dtype=dtype), np.nextafter(edges, -np.inf, dtype=dtype)])
        a = a[np.isfinite(a)]
        w = rng.standard_normal(a.size).astype(dtype)
        for bounds in (None, (low, high)):
            expected = np.histogram(a, bins, range=bounds, weights=w)
            assert_identical(_steps(a, bins, bounds, w), expected)
            assert_identical(_steps(a, bins, bounds, None), np.histogram(a, bins, range=bounds))
    check(hist_bounded, (a, w), "O2", "no_sink")


def test_generated_module_imports_the_steps(tmp_path):
    """`graphjit transpile` writes a module that runs alone: it imports graph/histogram.py as `_hist`."""
    import importlib.util
    from graphjit.cli import parse_inputs, transpile_file
    source = tmp_path / "kernel.py"
    source.write_text("import numpy as np\nimport graphjit as ms\n\n\n@ms.jit\n"
                      "def ratio(data, radius):\n"
                      "    return np.histogram(radius, 8, weights=data)[0] / np.histogram(radius, 8)[0]\n")
    text = transpile_file(str(source), parse_inputs(("data=f64[40]", "radius=f64[40]")), jit_level="O2").module_text
    assert "from graphjit.graph import histogram as _hist" in text and text.count("histogram_index(") == 1
    out = tmp_path / "generated.py"
    out.write_text(text)
    spec = importlib.util.spec_from_file_location("generated_histogram", out)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    rng = np.random.default_rng(4)
    d, r = rng.random(40), rng.random(40)
    assert_identical(module.ratio(d, r), np.histogram(r, 8, weights=d)[0] / np.histogram(r, 8)[0])
