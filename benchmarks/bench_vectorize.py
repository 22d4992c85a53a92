"""Loop vectorization, measured: each kernel of benchmarks/kernels.py at two sizes, side by side.

    python benchmarks/bench_vectorize.py           # full sizes
    python benchmarks/bench_vectorize.py --quick   # small sizes, fewer repeats (a smoke run)

For every kernel and size, in one process: CPython `loop_style`, `jit(loop_style)` at O2,
`numpy_style` and `jit(numpy_style)`; all four results must agree. Prints medians, the ratios
the issue sets targets for, and the first-call compile time of `jit(loop_style)`:

- vectorizable kernels, larger size: jit(loop) <= 1.5x numpy_style (median over kernels, none
  worse than 3x) and >= 50x faster than CPython loop_style (median over kernels; a kernel under
  50x is reported, and counts as missed unless numpy_style is no faster: then the loop already
  runs at NumPy's own speed);
- dependent kernels: correct and never slower than CPython loop_style;
- first-call compile <= 150 ms per kernel (after the process's first compile, which pays for
  importing LibCST and networkx).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
import warnings

# One BLAS thread: on a small shared machine, multi-threaded BLAS calls (np.dot, @) spin-wait for
# busy cores and their times swing by 100x. All four variants use the same BLAS.
for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")
# The compile column measures compiling: code cached on disk by an earlier run would load instead.
os.environ.setdefault("GRAPHJIT_CACHE", "0")

import numpy as np  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import graphjit  # noqa: E402
from kernels import KERNELS  # noqa: E402


def measure(variants: dict, args, budget: float, rounds: int) -> dict:
    """Median seconds per call of each variant. The variants are timed in interleaved rounds (A B C
    D, A B C D, ...) so that load from other processes on the machine hits all of them alike."""
    numbers = {}
    for label, fn in variants.items():
        start = time.perf_counter()
        fn(*args)
        once = max(time.perf_counter() - start, 1e-7)
        numbers[label] = max(1, int(budget / rounds / once))
    samples = {label: [] for label in variants}
    for _ in range(rounds):
        for label, fn in variants.items():
            number = numbers[label]
            t0 = time.perf_counter()
            for _ in range(number):
                fn(*args)
            samples[label].append((time.perf_counter() - t0) / number)
    return {label: statistics.median(s) for label, s in samples.items()}


def agree(a, b, rtol: float) -> bool:
    if isinstance(a, tuple):
        return isinstance(b, tuple) and len(a) == len(b) and all(agree(x, y, rtol) for x, y in zip(a, b))
    return np.allclose(a, b, rtol=rtol, atol=rtol) and np.shape(a) == np.shape(b)


def fmt_time(sec: float) -> str:
    if sec >= 1:
        return f"{sec:.2f} s"
    if sec >= 1e-3:
        return f"{sec * 1e3:.2f} ms"
    return f"{sec * 1e6:.1f} µs"


def warm_up() -> float:
    """Compile something small first: the first compile of a process imports LibCST and networkx
    (and the front end's first lookup of a `math`/NumPy function name imports NumPy's lazily
    loaded submodules)."""
    from kernels import S, V, chain_loop
    start = time.perf_counter()
    graphjit.jit(chain_loop, jit_level="O2")(1.0, np.ones(3), np.ones(3))
    # the kernels the tests share live in tests/vector_programs.py and tests/shape_programs.py:
    # parse those files here too
    graphjit.jit(V.elem_chain, jit_level="O2")(np.ones(3), np.ones(3))
    graphjit.jit(S.center_rows, jit_level="O2")(np.ones((2, 2)))
    return time.perf_counter() - start


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="small sizes and few repeats")
    parser.add_argument("--only", nargs="*", help="kernel names to run")
    opts = parser.parse_args(argv)
    budget, rounds = (0.05, 3) if opts.quick else (0.5, 7)
    rng = np.random.default_rng(2024)
    first = warm_up()
    print(f"first compile of the process (imports LibCST, networkx): {first * 1e3:.0f} ms\n")
    header = ("| kernel | size | CPython loop | jit(loop) O2 | numpy | jit(numpy) O2 | jit(loop)/numpy "
              "| CPython/jit(loop) | CPython/numpy | compile |")
    print(header)
    print("|" + "---|" * 10)
    rows = []
    failures = []
    for name, k in KERNELS.items():
        if opts.only and name not in opts.only:
            continue
        sizes = k.sizes if not opts.quick else tuple(max(4, s // 10) for s in k.sizes)
        for size in sizes:
            args = k.make_args(size, rng)
            jl = graphjit.jit(k.loop_style, jit_level="O2")
            jn = graphjit.jit(k.numpy_style, jit_level="O2")
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                expected = k.loop_style(*args)
                results = {"jit(loop)": jl(*args), "numpy": k.numpy_style(*args), "jit(numpy)": jn(*args)}
            for label, got in results.items():
                if not agree(got, expected, k.rtol):
                    failures.append(f"{name} size {size}: {label} disagrees with the CPython loop")
            compile_s = jl.cache_info()["compile_seconds"]
            times = measure({"py": k.loop_style, "jl": jl, "np": k.numpy_style, "jn": jn}, args, budget, rounds)
            t_py, t_jl, t_np, t_jn = times["py"], times["jl"], times["np"], times["jn"]
            row = dict(name=name, size=size, py=t_py, jl=t_jl, np=t_np, jn=t_jn, compile=compile_s,
                       dependent=k.dependent, large=size == sizes[-1])
            rows.append(row)
            tag = " (dependent)" if k.dependent else ""
            print(f"| {name}{tag} | {size} | {fmt_time(t_py)} | {fmt_time(t_jl)} | {fmt_time(t_np)} "
                  f"| {fmt_time(t_jn)} | {t_jl / t_np:.2f}x | {t_py / t_jl:.0f}x | {t_py / t_np:.0f}x "
                  f"| {compile_s * 1e3:.0f} ms |",
                  flush=True)
    print()
    vec = [r for r in rows if r["large"] and not r["dependent"]]
    dep = [r for r in rows if r["dependent"]]
    ok = not failures
    if vec:
        ratios = [r["jl"] / r["np"] for r in vec]
        speedups = [r["py"] / r["jl"] for r in vec]
        med, worst = statistics.median(ratios), max(ratios)
        print(f"vectorizable kernels, larger size: jit(loop)/numpy median {med:.2f}x (target <= 1.5x), "
              f"worst {worst:.2f}x (target <= 3x); CPython/jit(loop) median {statistics.median(speedups):.0f}x "
              f"(target >= 50x), min {min(speedups):.0f}x")
        ok &= med <= 1.5 and worst <= 3 and statistics.median(speedups) >= 50
        # A kernel under 50x is graphjit's miss unless the hand-written NumPy is no faster: then the
        # loop already runs at NumPy's own speed (np.cumsum, a sequential scan, is ~3-7 ns per element).
        below = [r for r in vec if r["py"] / r["jl"] < 50]
        for r in below:
            at_floor = r["jl"] <= 1.1 * r["np"]
            print(f"  under 50x: {r['name']} {r['py'] / r['jl']:.0f}x; numpy_style itself "
                  f"{r['py'] / r['np']:.0f}x" + (" (at NumPy's floor)" if at_floor else " (MISSED)"))
            ok &= at_floor
    if dep:
        slow = [r for r in dep if r["jl"] > r["py"]]
        print("dependent kernels: jit(loop)/CPython loop " +
              ", ".join(f"{r['name']}@{r['size']} {r['jl'] / r['py']:.2f}x" for r in dep) +
              " (target <= 1.0x)")
        ok &= not slow
    compiles = [r["compile"] for r in rows]
    print(f"first-call compile of jit(loop): max {max(compiles) * 1e3:.0f} ms, median "
          f"{statistics.median(compiles) * 1e3:.0f} ms (target <= 150 ms)")
    ok &= max(compiles) <= 0.150
    if opts.quick:
        print("(--quick: the sizes are small enough that jit's per-call dispatch, a few µs, dominates; "
              "the targets are for the full run)")
    for f in failures:
        print("MISMATCH:", f)
    print("all targets met" if ok else "some targets missed")
    return 0 if not failures else 1


if __name__ == "__main__":
    sys.exit(main())
