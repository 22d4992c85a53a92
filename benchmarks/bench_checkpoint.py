"""Benchmark: checkpoints, saved and loaded (graphjit/checkpoint.py), and loading one into a net.

1. A model-sized checkpoint (float32 tensors, 64 MB in all; 4 MB with --quick): save and load
   throughput, and the peak memory of `load_checkpoint` (tracemalloc) as a multiple of the file's
   size. Reading goes straight into the arrays, so the target is a peak <= 1.1x the file.
2. `load_param_into_net` against the shape of issue 23's attack: a net of 400 parameters, half of
   them with no value (every prefix search scans them again), the other half each under a prefix of
   its own, and junk entries up to 10 000 (20 000 to show the growth). The quadratic search took
   47 s here; the target is <= 1 s. A plain load (every name matches) is timed beside it.

Each figure is the best of a few runs (the machine is shared).

    python benchmarks/bench_checkpoint.py            # full run, a few seconds
    python benchmarks/bench_checkpoint.py --quick    # smoke run for tests
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
import tracemalloc
import warnings

import numpy as np

import graphjit as ms
from graphjit import nn

PARAMS = 400
ENTRIES = 10_000
TARGET_SECONDS = 1.0
TARGET_PEAK = 1.1


class Many(nn.Cell):
    """A net of `count` one-element Parameters named layer<k>.weight."""

    def __init__(self, count: int):
        super().__init__()
        for k in range(count):
            setattr(self, f"p{k}", ms.Parameter(np.zeros(1, np.float32), name=f"layer{k}.weight"))

    def construct(self, x):
        return x


def prefix_attack(params: int, entries: int) -> dict:
    values = {f"q{k}.layer{k}.weight": ms.Parameter(np.ones(1, np.float32)) for k in range(params // 2, params)}
    for k in range(entries - len(values)):
        values[f"junk{k}.bias"] = ms.Parameter(np.zeros(0, np.float32))
    return values


def best(fn, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def round_trip(folder: str, megabytes: int, repeat: int) -> None:
    rng = np.random.default_rng(0)
    count = 64
    per = megabytes * 2 ** 20 // 4 // count
    tensors = {f"layer{k}.weight": rng.standard_normal(per, dtype=np.float32) for k in range(count)}
    path = os.path.join(folder, "model.ckpt")
    save = best(lambda: ms.save_checkpoint(tensors, path), repeat)
    load = best(lambda: ms.load_checkpoint(path), repeat)
    size = os.path.getsize(path)
    tracemalloc.start()
    loaded = ms.load_checkpoint(path)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert all(loaded[n].tobytes() == t.tobytes() for n, t in tensors.items())
    mb = size / 2 ** 20
    print(f"{count} float32 tensors, {mb:.0f} MB: save {save * 1e3:.0f} ms ({mb / save:.0f} MB/s), "
          f"load {load * 1e3:.0f} ms ({mb / load:.0f} MB/s)")
    print(f"  load_checkpoint peak memory {peak / size:.2f}x the file (target <= {TARGET_PEAK}x: "
          f"{'met' if peak / size <= TARGET_PEAK else 'MISSED'})")


def into_net(params: int, entries: int, repeat: int) -> float:
    values = prefix_attack(params, entries)
    nets = [Many(params) for _ in range(repeat)]
    times = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for net in nets:
            start = time.perf_counter()
            not_loaded, unused = ms.load_param_into_net(net, values)
            times.append(time.perf_counter() - start)
    assert len(not_loaded) == params // 2 and len(unused) == entries - params // 2
    return min(times)


def plain(params: int, repeat: int) -> float:
    net = Many(params)
    values = {f"layer{k}.weight": ms.Parameter(np.ones(1, np.float32)) for k in range(params)}
    return best(lambda: ms.load_param_into_net(net, values), repeat)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="a smoke run (small sizes, one run each)")
    opts = parser.parse_args(argv)
    repeat, megabytes = (1, 4) if opts.quick else (5, 64)
    with tempfile.TemporaryDirectory() as folder:
        round_trip(folder, megabytes, repeat)
    print(f"load_param_into_net, {PARAMS} parameters, every name in the checkpoint: "
          f"{plain(PARAMS, repeat) * 1e3:.1f} ms")
    for entries in (ENTRIES, 2 * ENTRIES):
        seconds = into_net(PARAMS, entries, repeat)
        verdict = f" (target <= {TARGET_SECONDS:.0f} s: {'met' if seconds <= TARGET_SECONDS else 'MISSED'})" \
            if entries == ENTRIES else ""
        print(f"load_param_into_net, {PARAMS} parameters, {entries} entries (the prefix attack): "
              f"{seconds * 1e3:.1f} ms{verdict}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
