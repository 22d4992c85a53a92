"""A loop-style kernel on more data than a worker can hold: graphjit on a dask.distributed cluster.

    python benchmarks/bench_dask.py            # 4 workers x 1 GiB limit, 6 GiB of input data, 3 rounds
    python benchmarks/bench_dask.py --quick    # 2 workers, 16 MiB of data: a smoke run for the tests

A `LocalCluster` of single-threaded worker processes, each with a memory limit, computes a loop-style
kernel of benchmarks/kernels.py or tests/vector_programs.py (written with `for i in range(len(x))`, as a scientist first writes it)
on Dask arrays several times larger than one worker's limit (larger than all workers' memory together
in the full run). The inputs are generated on the workers, chunk by chunk (`da.random`), so no machine
ever holds the whole array; the kernel's result is summed, so only a number comes back.

Rows, timed side by side in interleaved rounds (medians over rounds; one wall-clock time per round is
generate + kernel + sum, computed on the cluster):

  (a) graphjit: `jit(loop_style, O2)` called on the Dask arrays. O2 vectorizes the loop and the
      variant for Dask arrays calls dask.array; the call is lazy, `.compute()` runs it.
  (b) hand-written dask.array: the same kernel written with `da.` functions by hand. For elem_chain,
      a hand writes `da.minimum(x, y)` and `da.maximum(0.0, t)`; graphjit keeps Python's `min`/`max`
      exactly (their NaN rules differ from NumPy's), as `where(y < x, y, x)`, which costs NumPy more.
  (c) the loop run eagerly (no jit) on a small slice of the Dask arrays: every `x[i]` is a task and
      every `min(x[i], y[i])` or `if x[i] > ...` computes one element on the cluster. Its time per
      element, extrapolated to the whole array, is why compiling matters.
  (-) the data source alone (generate and sum the inputs): the part of every row that is not the kernel.

Peak worker memory is the highest resident set size (RSS) any worker process reached during a row,
sampled every 50 ms from this process (psutil; the workers are local processes). A worker killed
for exceeding its limit (the nanny restarts it under a new process id) fails the run.

Target: (a) within 1.3x of (b). BLAS is pinned to one thread in every process.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import threading
import time

for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")   # inherited by the worker processes
os.environ.setdefault("GRAPHJIT_CACHE", "0")

import dask.array as da  # noqa: E402
import numpy as np  # noqa: E402
import psutil  # noqa: E402
from dask.distributed import Client, LocalCluster  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import graphjit  # noqa: E402
import kernels as K  # noqa: E402

TARGET = 1.3
MIB = 2 ** 20
GIB = 2 ** 30


def elem_chain_dask(x, y):
    """vector_programs.elem_chain (kernels.V.elem_chain), written by hand with dask.array."""
    return da.exp(-x) * da.sin(y) + da.sqrt(da.fabs(x)) - da.minimum(x, y) + da.maximum(0.0, y - 0.5)


def cond_dask(x):
    """kernels.cond_loop, written by hand with dask.array."""
    return da.where(x > 1.0, 1.0, da.where(x > 0.0, x, 0.01 * x))


# name -> (loop-style kernel, hand-written dask.array kernel, number of array inputs, leading scalars)
KERNELS = {
    "elem_chain": (K.V.elem_chain, elem_chain_dask, 2, ()),
    "conditional": (K.cond_loop, cond_dask, 1, ()),
}


class PeakRSS:
    """Samples the workers' resident set sizes in a thread; `peak` is the highest seen since `start`."""

    def __init__(self, pids, interval=0.05):
        self.procs = [psutil.Process(pid) for pid in pids]
        self.interval = interval
        self.peak = 0
        self._stop = threading.Event()
        self._thread = None

    def __enter__(self):
        self.peak = 0
        self._stop.clear()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc):
        self._stop.set()
        self._thread.join()
        self._sample()

    def _sample(self):
        for proc in self.procs:
            try:
                self.peak = max(self.peak, proc.memory_info().rss)
            except psutil.NoSuchProcess:
                pass

    def _run(self):
        while not self._stop.is_set():
            self._sample()
            self._stop.wait(self.interval)


def worker_pids(client):
    return sorted(client.run(os.getpid).values())


def make_inputs(n_arrays, n, chunk):
    rng = da.random.default_rng(20261203)
    return tuple(rng.standard_normal(n, chunks=chunk) for _ in range(n_arrays))


def human_bytes(b):
    return f"{b / GIB:.2f} GiB" if b >= GIB else f"{b / MIB:.0f} MiB"


def human_seconds(s):
    for unit, size in (("days", 86400), ("h", 3600), ("min", 60)):
        if s >= size:
            return f"{s / size:.1f} {unit}"
    return f"{s:.2f} s"


def spread(times):
    return f"{min(times):.2f}-{max(times):.2f} s"


def run(opts):
    loop_fn, dask_fn, n_arrays, scalars = KERNELS[opts.kernel]
    n = int(opts.data_mib * MIB / 8 / n_arrays)
    chunk = int(opts.chunk_mib * MIB / 8)
    limit = int(opts.memory_limit_mib * MIB)
    cluster = LocalCluster(n_workers=opts.workers, threads_per_worker=1, processes=True,
                           memory_limit=limit, dashboard_address=None)
    client = Client(cluster)
    try:
        pids = worker_pids(client)
        sampler = PeakRSS(pids)
        jitted = graphjit.jit(loop_fn, jit_config=graphjit.JitConfig(jit_level="O2"))
        inputs = make_inputs(n_arrays, n, chunk)
        args = scalars + inputs

        lazy = jitted(*args)           # compiles the Dask variant (and checks it stays lazy)
        assert isinstance(lazy, da.Array), f"graphjit returned {type(lazy).__name__}, not a lazy Dask array"
        variants = {   # each builds its lazy sum from the arguments (scalars first, then the arrays)
            "graphjit jit(loop), O2": lambda *a: jitted(*a).sum(),
            "hand-written dask.array": lambda *a: dask_fn(*a).sum(),
            "data source alone": lambda *a: sum(x.sum() for x in a[len(scalars):]),
        }
        warm = scalars + tuple(x[:opts.eager_elements] for x in inputs)
        for build in variants.values():   # the workers' first tasks (imports, first allocations) are not timed
            build(*warm).compute()
        times = {label: [] for label in variants}
        peaks = dict.fromkeys(variants, 0)
        results = {}
        for r in range(opts.rounds):
            order = list(variants)
            order = order[r % len(order):] + order[:r % len(order)]
            for label in order:
                with sampler:
                    t0 = time.perf_counter()
                    results[label] = float(variants[label](*args).compute())
                    times[label].append(time.perf_counter() - t0)
                peaks[label] = max(peaks[label], sampler.peak)
                if worker_pids(client) != pids:
                    raise SystemExit(f"a worker was restarted during '{label}' (memory limit exceeded?)")
        want = results["hand-written dask.array"]
        got = results["graphjit jit(loop), O2"]
        if not np.isclose(got, want, rtol=1e-9):
            raise SystemExit(f"graphjit's result {got!r} differs from the hand-written one {want!r}")

        # (c) the loop, uncompiled, on a small slice: one compute per element on the cluster
        with sampler:
            t0 = time.perf_counter()
            eager_small = float(loop_fn(*warm).sum().compute())
            eager = time.perf_counter() - t0
        compiled_small = float(jitted(*warm).sum().compute())
        if not np.isclose(eager_small, compiled_small, rtol=1e-9):
            raise SystemExit(f"the eager loop's result {eager_small!r} differs from graphjit's {compiled_small!r}")
        per_element = eager / opts.eager_elements
    finally:
        client.close()
        cluster.close()

    data = n * n_arrays * 8
    medians = {label: statistics.median(t) for label, t in times.items()}
    ratio = medians["graphjit jit(loop), O2"] / medians["hand-written dask.array"]
    source = medians["data source alone"]
    net = (medians["graphjit jit(loop), O2"] - source) / max(medians["hand-written dask.array"] - source, 1e-9)
    print(f"kernel '{opts.kernel}', {opts.workers} worker processes x 1 thread, "
          f"chunks of {human_bytes(chunk * 8)}, medians of {opts.rounds} rounds, one BLAS thread")
    header = (f"| {'variant':<40} | {'data':>9} | {'worker limit':>12} | {'time':>11} | {'rounds min-max':>17} "
              f"| {'peak worker RSS':>15} |")
    print(header)
    print("|" + "|".join("-" * (len(c)) for c in header.split("|")[1:-1]) + "|")
    limit_text = human_bytes(limit)
    for label in variants:
        print(f"| {label:<40} | {human_bytes(data):>9} | {limit_text:>12} | "
              f"{human_seconds(medians[label]):>11} | {spread(times[label]):>17} | {human_bytes(peaks[label]):>15} |")
    eager_label = f"eager loop, {opts.eager_elements} elements, extrapolated"
    print(f"| {eager_label:<40} | {human_bytes(data):>9} | {limit_text:>12} | "
          f"{human_seconds(per_element * n):>11} | {'1 run':>17} | {human_bytes(sampler.peak):>15} |")
    print(f"graphjit / hand-written dask.array: {ratio:.2f}x (target <= {TARGET}x: "
          f"{'met' if ratio <= TARGET else 'MISSED'}); eager loop: {per_element * 1e3:.1f} ms per element; "
          f"no worker restarted; data = {data / limit:.1f}x one worker's limit")
    print(f"the kernels alone (each time minus the data source's): graphjit / hand-written {net:.2f}x")
    return 0


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="2 workers and 16 MiB of data: a smoke run")
    parser.add_argument("--kernel", choices=sorted(KERNELS), default="elem_chain")
    parser.add_argument("--workers", type=int, default=4)
    parser.add_argument("--memory-limit-mib", type=float, default=1024, help="per worker")
    parser.add_argument("--data-mib", type=float, default=6 * 1024, help="all input arrays together")
    parser.add_argument("--chunk-mib", type=float, default=32)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--eager-elements", type=int, default=20)
    opts = parser.parse_args(argv)
    if opts.quick:
        opts.workers, opts.memory_limit_mib, opts.data_mib, opts.chunk_mib = 2, 512, 16, 2
        opts.rounds, opts.eager_elements = 1, 5
    return run(opts)


if __name__ == "__main__":
    sys.exit(main())
