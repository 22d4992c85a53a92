"""The NPBench harness without NPBench: kernels loaded from a two-kernel NPBench-like layout written
to tmp_path, checked against eager, and the differences it must report."""

import sys

import numpy as np
import pytest

from locations import BENCHMARKS

sys.path.insert(0, str(BENCHMARKS))

import bench_npbench  # noqa: E402
import npbench_layout as layout  # noqa: E402

TOLERANCE = dict(layout.DEFAULT_TOLERANCE)


@pytest.fixture
def kernels(tmp_path):
    return {kernel.name: kernel for kernel in layout.find_kernels(layout.write_sample_layout(tmp_path))}


def test_kernels_load_from_the_layout(kernels):
    assert sorted(kernels) == ["running_sum", "scale_rows"]
    kernel = kernels["scale_rows"]
    data = kernel.make_inputs("S")
    assert data["A"].shape == (40, 30) and data["w"].shape == (40,) and data["alpha"] == 1.5
    assert kernel.implementation("numpy").__name__ == "kernel"
    assert kernel.implementation("numba_n") is None


def test_outputs_are_returned_values_then_array_arguments_and_inputs_stay_fresh(kernels):
    kernel = kernels["scale_rows"]
    data = kernel.make_inputs("S")
    before = data["A"].copy()
    outputs = layout.run_once(kernel.implementation("numpy"), kernel, data)
    assert [label for label, _ in outputs] == ["argument A", "argument w"]
    assert np.allclose(outputs[0][1], before * 1.5 * data["w"][:, None])
    assert np.array_equal(data["A"], before)  # the kernel wrote into a copy
    returned = layout.run_once(kernels["running_sum"].implementation("numpy"), kernels["running_sum"],
                               kernels["running_sum"].make_inputs("S"))
    assert [label for label, _ in returned] == ["return[0]", "return[1]", "argument x"]


@pytest.mark.parametrize("name", ["scale_rows", "running_sum"])
def test_graphjit_variant_equals_eager(kernels, name):
    kernel = kernels[name]
    data = kernel.make_inputs("S")
    eager = kernel.implementation("numpy")
    reference = layout.run_once(eager, kernel, data)
    variant = bench_npbench.make_variants(kernel, eager, "O2", numba=None)[1]
    bench_npbench.check_variant(variant, kernel, data, reference, timeout=60)
    assert variant.ok, variant.problem
    assert variant.compile_seconds > 0


def test_a_variant_that_writes_wrong_values_is_reported(kernels):
    kernel = kernels["scale_rows"]
    data = kernel.make_inputs("S")
    reference = layout.run_once(kernel.implementation("numpy"), kernel, data)

    def forgets_last_row(alpha, A, w):
        A[:-1] *= alpha * w[:-1, None]

    variant = bench_npbench.check_variant(bench_npbench.Variant("wrong", forgets_last_row), kernel, data,
                                          reference, timeout=60)
    assert variant.problem.startswith("differs from eager (first call): argument A: 30 of 1200 elements differ")


def test_a_variant_that_raises_is_reported_in_one_line(kernels):
    kernel = kernels["running_sum"]
    data = kernel.make_inputs("S")
    reference = layout.run_once(kernel.implementation("numpy"), kernel, data)

    def fails(x):
        return x[len(x)]

    variant = bench_npbench.check_variant(bench_npbench.Variant("fails", fails), kernel, data, reference, timeout=60)
    assert variant.problem.startswith("first calls raise IndexError: index 50 is out of bounds")


@pytest.mark.parametrize("want, got, expected", [
    (np.ones(3), np.ones(3) * (1 + 1e-9), None),
    (np.ones(3), np.ones(4), "shape (4,) instead of (3,)"),
    (np.ones(3), np.ones(3, dtype=np.float32), "dtype float32 instead of float64"),
    (np.array([1.0, np.nan]), np.array([1.0, np.nan]), None),
    (np.array([1.0, 2.0]), np.array([1.0, 3.0]), "1 of 2 elements differ (first at (1,)"),
    (2.0, 2.5, "1 of 1 elements differ (first at ()"),
])
def test_value_difference(want, got, expected):
    problem = layout.value_difference(want, got, **TOLERANCE)
    assert problem == expected if expected is None else problem.startswith(expected)


def test_outputs_missing_or_extra_are_a_difference():
    assert layout.first_difference([("return", 1.0)], [], **TOLERANCE) == "outputs [] instead of ['return']"


def test_unknown_kernel_and_non_checkout_are_errors(tmp_path, capsys):
    with pytest.raises(ValueError, match="no NPBench kernel named nope"):
        layout.find_kernels(layout.write_sample_layout(tmp_path), ["nope"])
    assert bench_npbench.main([str(tmp_path / "missing")]) == 2
    assert "is not an NPBench checkout" in capsys.readouterr().err


def test_summary_counts_coverage_and_slow_kernels(kernels, capsys):
    assert bench_npbench.main([str(next(iter(kernels.values())).root), "--quick"]) == 0
    out = capsys.readouterr().out
    assert "coverage: 2/2 kernels compile at O2 and equal eager" in out
    assert "| running_sum |" in out and "| scale_rows |" in out
