"""Benchmark: what the optimizer's jit_levels buy, measured side by side in one process.

1. The seed Network (samples/network.py; batch 64, float32) compiled at O1 and O2 against a
   hand-written NumPy forward pass that uses the same in-place tricks
   (`t = x @ w.T; t += b; np.maximum(t, 0, out=t)`), with the same weights.
   Target: O1 and O2 steady state <= 1.1x the hand-written in-place pass.
2. Elementwise-heavy kernels on a 2048x2048 float32 array, written as chains of array
   expressions: GELU (tanh form) and a layer norm. O0 (translation only: one new array per
   operation, as eager NumPy) against O2 (the chain runs tile by tile, and memory planning
   computes into dead temporaries), and O2 with tiling switched off (memory planning alone).
   Target: O2 at least 1.3x faster than O0 on GELU; peak memory (tracemalloc, plus the buffers a
   compiled function keeps between calls) lower at O2.

Timing: interleaved rounds (each round runs every variant, the starting variant rotating), GC off
while timing, medians over rounds of the per-call time; ratios are ratios of medians. Outputs are
checked against each other first. Peak memory: one call per variant under tracemalloc, counting
only what the call allocates (the input is allocated before tracing starts).

BLAS threading is left as the environment sets it, unless `--blas-threads N` is given (it sets
OPENBLAS_NUM_THREADS, OMP_NUM_THREADS and MKL_NUM_THREADS before NumPy is imported). On a shared
2-core machine a multi-threaded BLAS is at the mercy of other processes (spin-waiting threads make
single matmuls 10x slower at random); `--blas-threads 1` gives stable Network figures there.

Run:

    python benchmarks/bench_optimizer.py                    # full run, a few minutes
    python benchmarks/bench_optimizer.py --blas-threads 1   # single-threaded BLAS
    python benchmarks/bench_optimizer.py --quick            # smoke run, a few seconds
"""

from __future__ import annotations

import argparse
import gc
import os
import platform
import statistics
import sys
import tracemalloc
from pathlib import Path

if "--blas-threads" in sys.argv[:-1]:  # before NumPy loads its BLAS
    _threads = sys.argv[sys.argv.index("--blas-threads") + 1]
    for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ[_var] = _threads

import numpy as np  # noqa: E402

import graphjit as ms  # noqa: E402
from graphjit.graph.passes import tile  # noqa: E402

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import bench_network as bn  # noqa: E402  (shared timing helpers and the sample loader)

NETWORK_TARGET = 1.10   # compiled / hand-written in-place, at most
SPEEDUP_TARGET = 1.30   # O0 / O2 on the GELU kernel, at least
SIZE = 2048


def gelu(x):
    return 0.5 * x * (1.0 + np.tanh(0.7978845608028654 * (x + 0.044715 * x * x * x)))


def layer_norm(x):
    mu = x.mean(axis=-1, keepdims=True)
    d = x - mu
    var = (d * d).mean(axis=-1, keepdims=True)
    return d / np.sqrt(var + 1e-5) * 1.5 + 0.25


def compile_untiled(fn, x):
    """`fn` at O2 with the tiling pass switched off (memory planning alone)."""
    saved = tile.MIN_ELEMENTS
    tile.MIN_ELEMENTS = 1 << 62
    try:
        jitted = ms.jit(fn, jit_level="O2")
        jitted(x)
    finally:
        tile.MIN_ELEMENTS = saved
    return jitted


def plain(fn):
    return lambda setup=None: None, fn


def peak_mib(fn, x) -> float:
    """Peak memory (MiB) allocated during one call of fn(x), by tracemalloc."""
    fn(x)
    gc.collect()
    tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        base, _ = tracemalloc.get_traced_memory()
        out = fn(x)
        _, peak = tracemalloc.get_traced_memory()
        del out
    finally:
        tracemalloc.stop()
    return (peak - base) / 2 ** 20


def run_variants(variants, x, rounds, round_seconds, inner_cap):
    inner = bn.calibrate_inner(variants, x, round_seconds, inner_cap)
    bn.interleaved(variants, x, 1, inner)   # warm-up round, discarded
    per_round = bn.interleaved(variants, x, rounds, inner)
    us = {k: [v * 1e6 for v in vals] for k, vals in per_round.items()}
    return {k: statistics.median(v) for k, v in us.items()}, us, inner


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="smoke run: few rounds")
    parser.add_argument("--rounds", type=int, default=None, help="interleaved rounds (default 15, quick 3)")
    parser.add_argument("--blas-threads", type=int, default=None, help="BLAS threads (default: environment)")
    args = parser.parse_args(argv)
    rounds = args.rounds or (3 if args.quick else 15)
    round_seconds = 0.01 if args.quick else 0.15
    inner_cap = 3 if args.quick else 200

    def ok(flag):
        return "PASS" if flag else "FAIL"

    print("# graphjit optimizer benchmark")
    print()
    print(f"- python {platform.python_version()}, numpy {np.__version__}, graphjit {ms.__version__}, "
          f"{os.cpu_count()} CPUs, OPENBLAS_NUM_THREADS={os.environ.get('OPENBLAS_NUM_THREADS', '(unset)')}; "
          f"{rounds} interleaved rounds per table, medians{' [--quick]' if args.quick else ''}")
    print()

    # --- 1. the seed Network ---------------------------------------------------------------------------
    Network = bn.load_network_class()
    ms.set_seed(0)
    model = Network()
    x = np.random.default_rng(0).standard_normal((bn.BATCH, 1, 28, 28)).astype(np.float32)
    numpy_forward, numpy_inplace = bn.make_numpy_forward(model)
    compiled = {level: ms.jit(model, jit_level=level) for level in ("O0", "O1", "O2")}
    reference = numpy_forward(x)
    for level, fn in compiled.items():
        np.testing.assert_allclose(fn(x), reference, rtol=1e-5, atol=1e-6, err_msg=level)
    np.testing.assert_allclose(numpy_inplace(x), reference, rtol=1e-5, atol=1e-6)
    assert "np.maximum(x, 0, out=x)" in compiled["O2"].source(x)
    variants = {"numpy_inplace": plain(numpy_inplace), "numpy": plain(numpy_forward),
                **{level: plain(fn) for level, fn in compiled.items()}}
    med, us, inner = run_variants(variants, x, rounds, round_seconds, inner_cap)
    ref = med["numpy_inplace"]
    print(f"## Seed Network, batch {bn.BATCH}, float32 ({inner} calls per variant per round)")
    print()
    print("| variant | median us/call | min | max | vs hand-written in-place | target | |")
    print("|---|---:|---:|---:|---:|---|---|")
    rows = [("hand-written NumPy, in-place (`t += b; np.maximum(t, 0, out=t)`)", "numpy_inplace", "reference", ""),
            ("hand-written NumPy, plain", "numpy", "", ""),
            ("graphjit O0", "O0", "", ""),
            ("graphjit O1", "O1", f"<= {NETWORK_TARGET:.2f}x", ok(med["O1"] / ref <= NETWORK_TARGET)),
            ("graphjit O2", "O2", f"<= {NETWORK_TARGET:.2f}x", ok(med["O2"] / ref <= NETWORK_TARGET))]
    for label, key, target, verdict in rows:
        print(f"| {label} | {med[key]:.1f} | {min(us[key]):.1f} | {max(us[key]):.1f} | {med[key] / ref:.3f}x "
              f"| {target} | {verdict} |")
    print()

    # --- 2. elementwise kernels ------------------------------------------------------------------------
    big = np.random.default_rng(1).standard_normal((SIZE, SIZE)).astype(np.float32)
    for kernel, target in ((gelu, SPEEDUP_TARGET), (layer_norm, None)):
        o0, o2 = ms.jit(kernel, jit_level="O0"), ms.jit(kernel, jit_level="O2")
        o2_untiled = compile_untiled(kernel, big)
        expected = kernel(big)
        for fn in (o0, o2, o2_untiled):
            out = fn(big)
            np.testing.assert_allclose(out, expected, rtol=1e-6, atol=1e-6)
            assert out.dtype == np.float32
        variants = {"eager": plain(kernel), "O0": plain(o0), "O2": plain(o2), "O2 untiled": plain(o2_untiled)}
        med, us, inner = run_variants(variants, big, rounds, round_seconds * 4, inner_cap)
        peaks = {name: peak_mib(fn, big) for name, (_, fn) in variants.items()}
        # what a compiled function keeps between calls (graph/passes/scratch.py): the peak of one
        # call does not see it, an earlier call made it
        kept = {"eager": 0.0, **{name: fn.cache_info()["workspace_bytes"] / 2 ** 20
                                 for name, fn in (("O0", o0), ("O2", o2), ("O2 untiled", o2_untiled))}}
        total = {name: peaks[name] + kept[name] for name in peaks}
        speedup = med["O0"] / med["O2"]
        print(f"## {kernel.__name__} on a {SIZE}x{SIZE} float32 array ({inner} calls per variant per round)")
        print()
        print("| variant | median ms/call | min | max | peak memory of a call (MiB, tracemalloc) "
              "| kept between calls (MiB) |")
        print("|---|---:|---:|---:|---:|---:|")
        for name in ("eager", "O0", "O2", "O2 untiled"):
            print(f"| {name} | {med[name] / 1e3:.2f} | {min(us[name]) / 1e3:.2f} | {max(us[name]) / 1e3:.2f} "
                  f"| {peaks[name]:.1f} | {kept[name]:.1f} |")
        print()
        verdict = f" (target >= {target:.2f}x: {ok(speedup >= target)})" if target else ""
        print(f"- O0 / O2 time: {speedup:.2f}x{verdict}; O0 / O2 untiled: {med['O0'] / med['O2 untiled']:.2f}x")
        print(f"- peak memory O2 / O0, a call's and what is kept between calls together: {total['O2']:.1f} / "
              f"{total['O0']:.1f} MiB ({ok(total['O2'] < total['O0'])} lower at O2)")
        print()
        if kernel is gelu:
            print("O2 code:")
            print()
            print("```python")
            print(o2.source(big).rstrip())
            print("```")
            print()
    return 0


if __name__ == "__main__":
    sys.exit(main())
