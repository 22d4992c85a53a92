"""Benchmark: what the compilation cache costs. Medians; run `python benchmarks/bench_cache.py [--quick]`.

1. Cache-hit dispatch overhead, per call, in microseconds, measured side by side in one process
   (interleaved rounds, garbage collector off): a plain Python call of the function, a direct call
   of graphjit's generated function (`jitted.entries.order[0].run`), `jit(f)(x)`, and Numba's `njit(f)(x)`
   when Numba is installed. Overhead = jit - direct (the dispatcher's own cost) and jit - plain.
   Functions: `ident(x): return x` (pure dispatch: the clean figure) and `tanh2(x)` on a 4x3 array
   (the ufunc's own time varies by a few tenths of a microsecond from run to run). Then the cost
   of reading module-level arrays at call time: `globals4(x)` (4 global arrays, each guarded per call)
   against `args4(x, g1, g2, g3, g4)`, per global read.
2. Cold first call in a new process (the disk cache off): the first `jitted(x)` after imports,
   i.e. LibCST, networkx and the backends imported, the source parsed, lowered, optimized, emitted,
   compiled. Median over fresh processes.
3. Warm-from-disk first call in a new process: the same, with the entry already on disk (no front
   end: the process never imports LibCST or networkx; checked and printed).
Numba is compared where installed: its dispatch, its first call (compile), and its first call
with `cache=True` and a warm cache in a new process.
4. With Numba installed, a loop that stays a loop (`recurrence`, O2) runs as a Numba kernel
   (docs/numba.md). Its first call in a new process with a warm cache: graphjit's default (the
   kernel's ahead-of-time library, Numba never imported), graphjit with `GRAPHJIT_NUMBA_AOT=0`
   (Numba's own cache: Numba starts in the process), and `numba.njit(cache=True)` of the same
   function. Median over fresh processes, BLAS and Numba pinned to one thread, Python's bytecode
   cache on (as in an installed package, whatever PYTHONDONTWRITEBYTECODE says here).
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import statistics
import subprocess
import sys
import tempfile
import timeit
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import numpy as np  # noqa: E402

import graphjit as ms  # noqa: E402
import cache_workload as wl  # noqa: E402

try:
    import numba
except ImportError:  # Numba is optional: only for the comparison
    numba = None


def per_call_us(fn, number: int) -> float:
    return timeit.timeit(fn, number=number) / number * 1e6


def dispatch(rounds: int, number: int) -> list:
    x = np.ones((4, 3))
    rows = []
    for name, fn in (("ident", wl.ident), ("tanh2", wl.tanh2)):
        jitted = ms.jit(fn, cache=False)
        jitted(x)
        jitted(x)
        direct = jitted.entries.order[0].run
        variants = {"plain": lambda: fn(x), "direct": lambda: direct(x), "jit": lambda: jitted(x)}
        if numba is not None:
            nb = numba.njit(fn)
            nb(x)
            variants["numba"] = lambda: nb(x)
        rows.append((name, interleave(variants, rounds, number)))
    return rows


def global_reads(rounds: int, number: int) -> dict:
    """The dispatch cost of reading module-level arrays at call time: 4 globals against 4 arguments.

    Both functions compute the same (x + 4 arrays); each side's overhead is jit - direct, so the
    additions cancel and what is left per global is its guard (dtype and shape, checked each call).
    """
    x = np.ones((4, 3))
    g = (wl.G1, wl.G2, wl.G3, wl.G4)
    with_args, with_globals = ms.jit(wl.args4, cache=False), ms.jit(wl.globals4, cache=False)
    for _ in range(2):
        with_args(x, *g)
        with_globals(x)
    direct_args, direct_globals = with_args.entries.order[0].run, with_globals.entries.order[0].run
    return interleave({"args direct": lambda: direct_args(x, *g), "args jit": lambda: with_args(x, *g),
                       "globals direct": lambda: direct_globals(x), "globals jit": lambda: with_globals(x)},
                      rounds, number)


def interleave(variants: dict, rounds: int, number: int) -> dict:
    samples = {k: [] for k in variants}
    names = list(variants)
    gc.disable()
    try:
        for r in range(rounds):
            for k in names[r % len(names):] + names[:r % len(names)]:
                samples[k].append(per_call_us(variants[k], number))
    finally:
        gc.enable()
    return {k: statistics.median(v) for k, v in samples.items()}


FIRST_CALL = """
import json, sys, time
sys.path.insert(0, {here!r})
import numpy as np
{setup}
import cache_workload as wl
x = {arg}
t0 = time.perf_counter()
out = f(x)
t1 = time.perf_counter()
print(json.dumps({{"ms": (t1 - t0) * 1e3, "libcst": "libcst" in sys.modules, "networkx": "networkx" in sys.modules,
                  "numba": "numba" in sys.modules, "info": {info}}}))
"""

GRAPHJIT = ("import graphjit as ms\nimport cache_workload as wl\n"
            "ms.set_seed(0)\n{target}\n")
TARGETS = {
    "tanh2": ("f = ms.jit(wl.tanh2)", "np.ones((4, 3))"),
    "Network": ("f = ms.jit(wl.Network())", "np.ones((64, 1, 28, 28), np.float32)"),
}
KERNEL_TARGET = ("f = ms.jit(wl.recurrence, jit_level='O2')", "np.linspace(0.0, 1.0, 1000)")
ONE_THREAD = {"OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1", "MKL_NUM_THREADS": "1", "NUMBA_NUM_THREADS": "1"}


def first_call(kind: str, target: str, runs: int, cache_dir: str, warm: bool, env_extra: dict | None = None) -> dict:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env.update(ONE_THREAD)
    env.update(env_extra or {})
    setup_target, arg = KERNEL_TARGET if target == "recurrence" else TARGETS[target]
    if kind == "graphjit":
        setup = GRAPHJIT.format(target=setup_target)
        info = "f.cache_info()"
        env["GRAPHJIT_CACHE_DIR"] = cache_dir
        env["GRAPHJIT_CACHE"] = "1" if warm else "0"
    else:
        setup = f"import numba\nimport cache_workload as wl\nf = numba.njit(wl.{target}, cache={warm})"
        info = "None"
        env["NUMBA_CACHE_DIR"] = cache_dir
    code = FIRST_CALL.format(here=str(HERE), setup=setup, arg=arg, info=info)
    fill = None
    if warm:  # fill the cache once
        out = subprocess.run([sys.executable, "-c", code], env=env, check=True, capture_output=True, text=True,
                             timeout=600)
        fill = json.loads(out.stdout.strip().splitlines()[-1])["ms"]
    results = []
    for _ in range(runs):
        out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=300)
        if out.returncode != 0:
            raise RuntimeError(out.stderr)
        results.append(json.loads(out.stdout.strip().splitlines()[-1]))
    return {"ms": statistics.median(r["ms"] for r in results), "libcst": any(r["libcst"] for r in results),
            "networkx": any(r["networkx"] for r in results), "numba": any(r["numba"] for r in results),
            "all": sorted(r["ms"] for r in results), "fill": fill, "info": results[-1]["info"]}


def kernel_first_calls(runs: int) -> None:
    """4.: the first call of a function whose loop runs as a Numba kernel, new processes, warm cache."""
    print(f"\n4. first call of a Numba kernel (`recurrence`, O2) in a new process, warm cache "
          f"(ms, median of {runs} processes; every process in brackets)")
    variants = (("graphjit O2 (ahead-of-time library)", "graphjit", {"GRAPHJIT_NUMBA": "1"}),
                ("graphjit O2, GRAPHJIT_NUMBA_AOT=0", "graphjit", {"GRAPHJIT_NUMBA": "1", "GRAPHJIT_NUMBA_AOT": "0"}),
                ("numba.njit(cache=True)", "numba", {}))
    for label, kind, extra in variants:
        with tempfile.TemporaryDirectory() as warm_dir:
            warm = first_call(kind, "recurrence", runs, warm_dir, warm=True, env_extra=extra)
        every = ", ".join(f"{ms:.0f}" for ms in warm["all"])
        print(f"   {label:<38} first process {warm['fill']:8.1f}   warm {warm['ms']:7.1f}  [{every}]   "
              f"(warm processes imported numba: {warm['numba']})")
    print("   (the first process compiles the kernel; graphjit's default row also compiles Numba's runtime for "
          "ahead-of-time libraries there, once per machine)")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true", help="few repetitions (a smoke run)")
    opts = parser.parse_args()
    rounds, number, runs = (5, 20000, 2) if opts.quick else (15, 100000, 5)
    print(f"graphjit cache benchmark: python {sys.version.split()[0]}, numpy {np.__version__}, "
          f"numba {numba.__version__ if numba else 'not installed'}; medians")
    print("\n1. cache-hit dispatch overhead (us per call)")
    print(f"   {'function':<20}{'plain':>10}{'direct':>10}{'jit':>10}{'numba':>10}   jit-direct  jit-plain  numba-plain")
    over_ident = 0.0
    for name, r in dispatch(rounds, number):
        over_ident = r["jit"] - r["direct"] if name == "ident" else over_ident
        nb = r.get("numba")
        nb_text = f"{nb:10.3f}" if nb else "         -"
        nb_over = f"{nb - r['plain']:11.3f}" if nb else "          -"
        print(f"   {name:<20}{r['plain']:10.3f}{r['direct']:10.3f}{r['jit']:10.3f}{nb_text}"
              f"   {r['jit'] - r['direct']:10.3f} {r['jit'] - r['plain']:10.3f}  {nb_over}")
    r = global_reads(rounds, number)
    over_args, over_globals = r["args jit"] - r["args direct"], r["globals jit"] - r["globals direct"]
    print(f"   {'4 global arrays':<20} dispatch overhead {over_globals:.3f} us vs {over_args:.3f} us for 4 array "
          f"arguments:\n   {'':<20} {(over_globals - over_ident) / 4:.3f} us per global read over `ident`'s dispatch "
          f"({(over_args - over_ident) / 4:.3f} us per array argument), {(over_globals - over_args) / 4:.3f} us more "
          "than an array argument")
    print(f"\n2./3. first call in a new process (ms, median of {runs} processes)")
    for target in TARGETS:
        with tempfile.TemporaryDirectory() as cold_dir, tempfile.TemporaryDirectory() as warm_dir:
            cold = first_call("graphjit", target, runs, cold_dir, warm=False)
            warm = first_call("graphjit", target, runs, warm_dir, warm=True)
        line = (f"   graphjit {target:<8} cold {cold['ms']:8.1f}   warm from disk {warm['ms']:6.1f}"
                f"   (warm process imported libcst: {warm['libcst']}, networkx: {warm['networkx']}; "
                f"disk_loads={warm['info']['disk_loads']}, compiles={warm['info']['compiles']})")
        print(line)
        if numba is not None and target != "Network":
            with tempfile.TemporaryDirectory() as cold_dir, tempfile.TemporaryDirectory() as warm_dir:
                cold = first_call("numba", target, runs, cold_dir, warm=False)
                warm = first_call("numba", target, runs, warm_dir, warm=True)
            print(f"   numba    {target:<8} cold {cold['ms']:8.1f}   warm from disk {warm['ms']:6.1f}   (cache=True)")
    if numba is not None:
        kernel_first_calls(max(runs, 5))


if __name__ == "__main__":
    main()
