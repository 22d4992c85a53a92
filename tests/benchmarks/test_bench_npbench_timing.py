"""How the NPBench harness times: variants take turns call by call, and `--control` times eager a second
time so the table shows the noise floor next to graphjit's ratios (benchmarks/bench_npbench.py)."""

import os
import sys

from locations import BENCHMARKS

sys.path.insert(0, str(BENCHMARKS))

import bench_npbench  # noqa: E402
import npbench_layout as layout  # noqa: E402


def test_control_variant_reports_the_noise_floor(tmp_path, capsys):
    root = layout.write_sample_layout(tmp_path)
    assert bench_npbench.main([str(root), "--quick", "--control"]) == 0
    out = capsys.readouterr().out
    assert "| eager again / eager |" in next(line for line in out.splitlines() if line.startswith("| kernel"))
    assert "noise floor: eager against itself ranges" in out
    assert "coverage: 2/2 kernels compile at O2 and equal eager" in out
    assert "eager again " not in out.split("noise floor")[1].split("\n", 1)[1]   # not among the geomeans


def test_every_variant_is_called_equally_often_in_turns(tmp_path):
    kernel = layout.find_kernels(layout.write_sample_layout(tmp_path))[0]
    calls = []

    def counting(label):
        def fn(*args):
            calls.append(label)
        return fn

    variants = [bench_npbench.Variant(label, counting(label)) for label in ("a", "b", "c")]
    bench_npbench.measure(variants, kernel, kernel.make_inputs("S"), rounds=3, budget=0.0)
    timed = calls[3:]                       # after one call of each to size the rounds
    assert [timed.count(label) for label in "abc"] == [3, 3, 3]
    assert [timed[k * 3] for k in range(3)] == ["b", "c", "a"]   # the first of each turn rotates
    assert all(variant.median is not None for variant in variants)


def test_jobs_measure_kernels_in_processes_of_their_own_and_keep_their_order(tmp_path, capsys):
    root = layout.write_sample_layout(tmp_path)
    assert bench_npbench.main([str(root), "--quick", "--jobs", "2"]) == 0
    out = capsys.readouterr().out
    rows = [line.split(" | ")[0] for line in out.splitlines() if line.startswith("| ") and "---" not in line]
    assert rows == ["| kernel", "| running_sum", "| scale_rows"]
    assert "coverage: 2/2 kernels compile at O2 and equal eager" in out
    assert "geomean speed-up over eager, graphjit O2:" in out and "× on 2 kernels" in out


def test_each_kernel_is_measured_in_a_fresh_process_of_its_own(tmp_path):
    # as NPBench's run_framework.py does: no kernel inherits what an earlier one left in the allocator
    root = layout.write_sample_layout(tmp_path)
    kernels = layout.find_kernels(root)
    args = bench_npbench.parse_args([str(root), "--quick"])
    rows = bench_npbench.run_kernels(str(root), kernels, args)
    pids = [row.pid for row in rows]
    assert len(set(pids)) == len(kernels) and os.getpid() not in pids
    assert [row.kernel for row in rows] == [k.name for k in kernels]


def test_same_process_measures_every_kernel_here(tmp_path):
    root = layout.write_sample_layout(tmp_path)
    kernels = layout.find_kernels(root)
    args = bench_npbench.parse_args([str(root), "--quick", "--same-process"])
    rows = bench_npbench.run_kernels(str(root), kernels, args)
    assert all(row.pid is None for row in rows) and all(row.problem is None for row in rows)
