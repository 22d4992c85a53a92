"""benchmarks/bench_npbench.py with Numba: the `graphjit O2+numba` variant (loops that stay loops run as
Numba kernels) is checked against eager like the others and gets its own columns and geomean."""

import sys

import pytest

from locations import BENCHMARKS

numba = pytest.importorskip("numba")
sys.path.insert(0, str(BENCHMARKS))

import bench_npbench  # noqa: E402
import npbench_layout as layout  # noqa: E402


@pytest.fixture(autouse=True)
def _numba_on(monkeypatch):
    monkeypatch.setenv("GRAPHJIT_NUMBA", "1")


def test_the_kernels_variant_equals_eager_and_is_tabled(tmp_path, capsys):
    kernels = {k.name: k for k in layout.find_kernels(layout.write_sample_layout(tmp_path))}
    kernel = kernels["running_sum"]
    data = kernel.make_inputs("S")
    eager = kernel.implementation("numpy")
    reference = layout.run_once(eager, kernel, data)
    variants = bench_npbench.make_variants(kernel, eager, "O2", numba, with_o1=True)
    assert [v.label for v in variants] == ["eager", "graphjit O2", "graphjit O1", bench_npbench.KERNELS, "numba"]
    for variant in variants[1:4]:
        bench_npbench.check_variant(variant, kernel, data, reference, timeout=120)
        assert variant.ok, variant.problem
    assert bench_npbench.main([str(tmp_path), "--quick", "--numba", "--o1"]) == 0
    out = capsys.readouterr().out
    assert f"| {bench_npbench.KERNELS} / eager |" in out
    assert "geomeans on the 2 kernels every graphjit variant runs and equals eager" in out
    assert "geomeans on the 0 kernels every variant (numba_n included)" in out   # the sample has no numba_n
