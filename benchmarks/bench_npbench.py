"""NPBench, measured: every kernel eager, graphjit at O2 (LAX) and, optionally, graphjit O1, graphjit O2
with its loops compiled by Numba, and NPBench's Numba version.

    python benchmarks/bench_npbench.py /path/to/npbench                 # every kernel, preset S
    python benchmarks/bench_npbench.py /path/to/npbench --only gemm lu --rounds 3 --numba --o1
    python benchmarks/bench_npbench.py /path/to/npbench --preset M --numba
    python benchmarks/bench_npbench.py /path/to/npbench --only hdiff --control  # + eager against itself
    python benchmarks/bench_npbench.py /path/to/npbench --preset M --jobs 2     # kernels in 2 processes
    python benchmarks/bench_npbench.py --quick                          # a smoke run on a built-in sample

NPBench (github spcl/npbench, BSD) is not part of graphjit: pass the path of a checkout. Its layout
is read by benchmarks/npbench_layout.py: `bench_info/*.json` name each kernel's files, its init
function and its arguments; the kernel is `<module>_numpy.py`, the Numba version `<module>_numba_n.py`.

For each kernel, correctness first: the first call of each variant (its compile, timed and reported
separately) and its second call must equal eager NumPy, returned values and every array argument
afterwards, within NPBench's own tolerance. Every call gets fresh copies of the inputs. Then the
variants that agree are timed in rounds in which they take turns call by call (eager, graphjit,
numba, graphjit, numba, eager, ...), with BLAS pinned to one thread; the table shows the medians over
rounds of each variant's mean CPU time per call (`time.process_time`: on a shared machine, waiting
for a core is not the kernel's time). Numba is optional (`--numba`, when importable): it
adds `graphjit O2+numba` (loops that stay loops run as Numba kernels, docs/numba.md; `graphjit O2`
is then measured with `numba=False`) and NPBench's `numba_n`. The geomeans are given over the
kernels every variant runs and equals eager. Each kernel runs in a fresh process of its own, as
NPBench's run_framework.py runs each benchmark (otherwise what earlier kernels left in the C
allocator decides whether eager NumPy pays page faults for its big temporaries); `--jobs N` measures
N kernels at a time (one BLAS thread each; with CPU time per call, a kernel's variants still compare
among themselves), `--same-process` all of them in this process. Numba's cache of graphjit's kernels persists across
runs (in graphjit's cache directory), so a later run's compile column shows loading them.
"""

from __future__ import annotations

import argparse
import math
import os
import signal
import statistics
import sys
import tempfile
import time
import warnings
from dataclasses import dataclass, field
from typing import Callable

if __name__ == "__main__":  # run as a script; imported (by its test) it leaves the environment alone
    # One BLAS thread: multi-threaded BLAS on a small shared machine swings by 100x, and Numba's
    # nopython versions are single-threaded too. Must be set before NumPy is imported.
    for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS", "NUMBA_NUM_THREADS"):
        os.environ.setdefault(_var, "1")
    # The compile column measures compiling: code cached on disk by an earlier run would load instead.
    os.environ.setdefault("GRAPHJIT_CACHE", "0")

import numpy as np  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import graphjit  # noqa: E402
import npbench_layout as layout  # noqa: E402

KERNELS = "graphjit O2+numba"   # O2 with loops that stay loops compiled by Numba (docs/numba.md)
SLOW = 0.95  # a kernel whose speed-up over eager is below this is listed as slower than eager


@dataclass
class Variant:
    """One way of running a kernel, and what its first calls showed."""

    label: str
    fn: Callable | None = None
    compile_seconds: float | None = None
    problem: str | None = None  # why it did not compile or run, or its first difference from eager
    median: float | None = None

    @property
    def ok(self) -> bool:
        """It compiled and equals eager (a variant measured in a worker process comes back without
        its function, but with its median)."""
        return self.problem is None and (self.fn is not None or self.median is not None)


@dataclass
class Row:
    kernel: str
    variants: dict = field(default_factory=dict)  # label -> Variant
    problem: str | None = None  # the eager run itself failed
    pid: int | None = None      # the process that measured it

    def speedup(self, label: str) -> float | None:
        eager, other = self.variants.get("eager"), self.variants.get(label)
        if not (eager and other and other.ok and eager.median and other.median):
            return None
        return eager.median / other.median


class CompileTimeout(Exception):
    pass


def one_line(error: BaseException) -> str:
    text = str(error).strip().splitlines()
    return f"{type(error).__name__}: {text[0][:140]}" if text else type(error).__name__


def call_with_timeout(fn: Callable, seconds: float):
    """fn(), stopped by CompileTimeout after `seconds` (where SIGALRM exists)."""
    if not hasattr(signal, "SIGALRM") or seconds <= 0:
        return fn()

    def expire(signum, frame):
        raise CompileTimeout(f"no result after {seconds:.0f} s")

    previous = signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        return fn()
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def check_variant(variant: Variant, kernel: layout.Kernel, data: dict, reference: list, timeout: float) -> Variant:
    """Make the variant's first call (timed: the compile) and a second one; both must equal eager."""
    if variant.fn is None:
        return variant
    tolerance = kernel.tolerance()
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # LAX fallback notes; the result is what is checked
            start = time.perf_counter()
            first = call_with_timeout(lambda: layout.run_once(variant.fn, kernel, data), timeout)
            variant.compile_seconds = time.perf_counter() - start
            second = layout.run_once(variant.fn, kernel, data)
    except graphjit.GraphjitError as error:
        variant.problem = f"does not compile: {one_line(error)}"
        return variant
    except Exception as error:  # noqa: BLE001 - any failure is reported, one line per kernel
        variant.problem = f"first calls raise {one_line(error)}"
        return variant
    for call, outputs in (("first call", first), ("second call", second)):
        difference = layout.first_difference(reference, outputs, **tolerance)
        if difference:
            variant.problem = f"differs from eager ({call}): {difference}"
            break
    return variant


def measure(variants: list[Variant], kernel: layout.Kernel, data: dict, rounds: int, budget: float) -> None:
    """Set each variant's median seconds per call over `rounds` rounds. The variants take turns call by
    call (the first one rotating), so that a change of the machine's load during a round hits every
    variant alike; a round makes as many turns as fill `budget` seconds for the slowest variant (at
    least one). Only the calls are timed, not the copies of the inputs each call gets."""
    slowest = max(timed_call(variant.fn, kernel, data) for variant in variants)
    turns = max(1, int(budget / max(slowest, 1e-7)))
    samples = {variant.label: [] for variant in variants}
    first = 0   # which variant starts the turn: rotates from turn to turn, across rounds too
    for _ in range(rounds):
        total = {variant.label: 0.0 for variant in variants}
        for _ in range(turns):
            first += 1
            for k in range(len(variants)):
                variant = variants[(first + k) % len(variants)]
                total[variant.label] += timed_call(variant.fn, kernel, data)
        for label, seconds in total.items():
            samples[label].append(seconds / turns)
    for variant in variants:
        variant.median = statistics.median(samples[variant.label])


def timed_call(fn: Callable, kernel: layout.Kernel, data: dict) -> float:
    """The call's CPU time (this process's, user and system): on a machine shared by other work, the
    time a call waits for a core is the neighbours', not the variant's. BLAS runs one thread, so
    CPU time is the call's own time."""
    args = kernel.arguments(data)
    start = time.process_time()
    fn(*args)
    return time.process_time() - start


CONTROL = "eager again"   # eager NumPy measured a second time: its ratio to eager is the noise floor


def make_variants(kernel: layout.Kernel, eager: Callable, level: str, numba, with_o1: bool = False,
                  control: bool = False) -> list[Variant]:
    """eager, graphjit at `level` (its loops in Python: `numba=False`), optionally graphjit O1, and with
    Numba importable: graphjit O2 with its Numba kernels (docs/numba.md) and NPBench's numba_n. With
    `control`, eager once more as a variant of its own: the same code, so any ratio but 1.00x it
    shows is the measurement's noise on this machine at this time."""
    variants = [Variant("eager", eager)] + ([Variant(CONTROL, eager)] if control else [])
    configs = [(f"graphjit {level}", graphjit.JitConfig(jit_level=level, numba=False))]
    if with_o1 and level != "O1":
        configs.append(("graphjit O1", graphjit.JitConfig(jit_level="O1")))
    if numba is not None and level == "O2":
        configs.append((KERNELS, graphjit.JitConfig(jit_level="O2", numba=True)))
    for label, config in configs:
        try:
            variants.append(Variant(label, graphjit.jit(eager, jit_config=config)))
        except Exception as error:  # noqa: BLE001
            variants.append(Variant(label, problem=one_line(error)))
    if numba is not None:
        try:
            fn = kernel.implementation("numba_n")
            variants.append(Variant("numba", fn, problem=None if fn else "no numba_n version"))
        except Exception as error:  # noqa: BLE001 - NPBench's file fails to import or compile
            variants.append(Variant("numba", problem=one_line(error)))
    return variants


def run_kernel(kernel: layout.Kernel, args, numba) -> Row:
    row = Row(kernel.name)
    try:
        data = kernel.make_inputs(args.preset)
        eager = kernel.implementation("numpy")
        reference = layout.run_once(eager, kernel, data)
    except Exception as error:  # noqa: BLE001
        row.problem = f"eager: {one_line(error)}"
        return row
    variants = make_variants(kernel, eager, args.level, numba, args.o1, args.control)
    for variant in variants[1:]:
        check_variant(variant, kernel, data, reference, args.timeout)
    row.variants = {variant.label: variant for variant in variants}
    try:
        measure([v for v in variants if v.ok], kernel, data, args.rounds, args.budget)
    except Exception as error:  # noqa: BLE001 - a later call failed where the first two did not
        row.problem = f"while timing: {one_line(error)}"
    return row


def run_kernel_apart(root: str, name: str, args) -> Row:
    """`run_kernel` in a worker process (`--jobs`): the row comes back without the variants' functions."""
    (kernel,) = layout.find_kernels(root, [name])
    row = run_kernel(kernel, args, import_numba(args.numba))
    for variant in row.variants.values():
        variant.fn = None
    row.pid = os.getpid()
    return row


def warm_up() -> None:
    """A worker's first compile imports the front end (LibCST): paid here, not in a kernel's compile column."""
    graphjit.jit(scaled, jit_config=graphjit.JitConfig(jit_level="O2"))(np.ones(4))


def scaled(x):
    return x * 2.0 + 1.0


def run_kernels(root: str, kernels: list, args) -> list[Row]:
    """Every kernel's row, in the order given: each kernel in a fresh process of its own (spawned:
    NumPy, BLAS, Numba and the C allocator start as they would alone), `args.jobs` at a time, as
    NPBench's own run_framework.py runs a process per benchmark; or, with `--same-process`, one
    after another in this process, where each kernel's timings depend on what the kernels before
    it left in the allocator (a heap that kept big freed blocks spares eager NumPy its page faults)."""
    gj = f"graphjit {args.level}"

    def report(name: str, row: Row, seconds: float) -> None:
        print(f"  {name}: {status(row, gj)} ({seconds:.1f} s)", file=sys.stderr, flush=True)

    if args.same_process:
        numba = import_numba(args.numba)
        rows = []
        for kernel in kernels:
            start = time.perf_counter()
            rows.append(run_kernel(kernel, args, numba))
            report(kernel.name, rows[-1], time.perf_counter() - start)
        return rows
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor, as_completed
    start = time.perf_counter()
    with ProcessPoolExecutor(max(1, args.jobs), mp_context=multiprocessing.get_context("spawn"),
                             initializer=warm_up, max_tasks_per_child=1) as pool:
        futures = {pool.submit(run_kernel_apart, root, kernel.name, args): kernel.name for kernel in kernels}
        done = {}
        for future in as_completed(futures):
            name = futures[future]
            try:
                done[name] = future.result()
            except Exception as error:  # noqa: BLE001 - the worker process itself failed
                done[name] = Row(name, problem=f"worker: {one_line(error)}")
            report(name, done[name], time.perf_counter() - start)
    return [done[kernel.name] for kernel in kernels]


def fmt_time(seconds: float | None) -> str:
    if seconds is None:
        return "—"
    if seconds >= 1:
        return f"{seconds:.2f} s"
    if seconds >= 1e-3:
        return f"{seconds * 1e3:.2f} ms"
    return f"{seconds * 1e6:.1f} µs"


def fmt_ratio(ratio: float | None) -> str:
    return "—" if ratio is None else f"{ratio:.2f}×"


def labels_of(rows: list[Row]) -> list[str]:
    """The variant labels after `eager`, in the order they were made."""
    labels = []
    for row in rows:
        for label in row.variants:
            if label != "eager" and label not in labels:
                labels.append(label)
    return labels


def table(rows: list[Row], level: str, with_numba: bool) -> str:
    gj = f"graphjit {level}"
    labels = labels_of(rows) or [gj]
    header = ["kernel", "eager"] + labels + [f"{label} / eager" for label in labels]
    header += [f"{label} compile" for label in labels] + ["status"]
    lines = ["| " + " | ".join(header) + " |", "|---|" + "---:|" * (len(header) - 2) + "---|"]
    for row in rows:
        v = row.variants
        cells = [row.kernel, fmt_time(v["eager"].median if "eager" in v else None)]
        cells += [fmt_time(_median(v, label)) for label in labels]
        cells += [fmt_ratio(row.speedup(label)) for label in labels]
        cells += [_compile_time(v, label) for label in labels]
        cells.append(status(row, gj))
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def _compile_time(variants: dict, label: str) -> str:
    """The first call's seconds (the compile plus one run), for a variant that equals eager."""
    variant = variants.get(label)
    return f"{variant.compile_seconds:.2f} s" if variant and variant.ok else "—"


def _median(variants: dict, label: str) -> float | None:
    variant = variants.get(label)
    return variant.median if variant and variant.ok else None


def status(row: Row, gj: str) -> str:
    if row.problem:
        return row.problem
    variant = row.variants[gj]
    return variant.problem or "ok"


def geomean(values: list[float]) -> float | None:
    return math.exp(sum(math.log(v) for v in values) / len(values)) if values else None


def summary(rows: list[Row], level: str, with_numba: bool) -> str:
    gj = f"graphjit {level}"
    good = [row for row in rows if not row.problem and row.variants[gj].ok]
    lines = [f"coverage: {len(good)}/{len(rows)} kernels compile at {level} and equal eager"]
    for row in rows:
        if row.problem or not row.variants[gj].ok:
            lines.append(f"  {row.kernel}: {status(row, gj)}")
    speedups = [row.speedup(gj) for row in good]
    lines.append(f"geomean speed-up over eager, {gj}: {fmt_ratio(geomean(speedups))} on {len(good)} kernels")
    labels = labels_of(good)
    ours = [label for label in labels if label.startswith("graphjit")]
    if CONTROL in labels:
        spread = sorted(row.speedup(CONTROL) for row in good if row.speedup(CONTROL))
        if spread:
            lines.append(f"noise floor: eager against itself ranges {spread[0]:.2f}x-{spread[-1]:.2f}x "
                         f"(median {statistics.median(spread):.2f}x) over {len(spread)} kernels")
        labels.remove(CONTROL)
    for names, what in ((ours, "graphjit variant"), (labels, "variant (numba_n included)")):
        every = [row for row in good if all(row.variants.get(label) and row.variants[label].ok for label in names)]
        if len(names) > 1 and (names is ours or len(labels) > len(ours)):
            lines.append(f"geomeans on the {len(every)} kernels every {what} runs and equals eager: " + ", ".join(
                f"{label} {fmt_ratio(geomean([row.speedup(label) for row in every]))}" for label in names))
    for row in rows:
        for label in labels:
            if label == gj:
                continue   # its problems are listed with the coverage above
            variant = row.variants.get(label)
            if variant and variant.problem and variant.problem != "no numba_n version":
                lines.append(f"  {label} {row.kernel}: {variant.problem}")
    slow = sorted((row.speedup(gj), row.kernel) for row in good if row.speedup(gj) < SLOW)
    slow_list = ", ".join(f"{name} {ratio:.3f}×" for ratio, name in slow) or "none"
    lines.append(f"slower than {SLOW}× eager: {slow_list}")
    return "\n".join(lines)


def import_numba(wanted: bool):
    if not wanted:
        return None
    try:
        import numba
    except ImportError:
        print("numba is not installed: measuring eager and graphjit only", file=sys.stderr)
        return None
    return numba


def parse_args(argv):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("npbench", nargs="?", help="path of an NPBench checkout (github spcl/npbench)")
    parser.add_argument("--preset", default="S", help="NPBench preset: S, M, L or paper (default S)")
    parser.add_argument("--only", nargs="+", metavar="KERNEL", help="kernels to run (bench_info names)")
    parser.add_argument("--rounds", type=int, default=5, help="interleaved timing rounds (default 5)")
    parser.add_argument("--budget", type=float, default=0.05,
                        help="seconds of calls per variant per round, at least one call (default 0.05)")
    parser.add_argument("--level", default="O2", help="graphjit jit_level (default O2)")
    parser.add_argument("--numba", action="store_true",
                        help="also run graphjit O2 with Numba kernels and NPBench's numba_n versions")
    parser.add_argument("--o1", action="store_true", help="also run graphjit O1")
    parser.add_argument("--control", action="store_true",
                        help=f"also time eager NumPy a second time ('{CONTROL}'): the noise floor of the ratios")
    parser.add_argument("--timeout", type=float, default=300.0, help="seconds allowed for one first call")
    parser.add_argument("--jobs", type=int, default=1,
                        help="kernels measured at a time, each in a fresh process of its own (default 1)")
    parser.add_argument("--same-process", action="store_true",
                        help="measure every kernel in this process, one after another (what a kernel's "
                        "figures then depend on includes the kernels before it)")
    parser.add_argument("--quick", action="store_true",
                        help="two rounds; without a checkout path, run on a built-in two-kernel sample")
    args = parser.parse_args(argv)
    if args.quick:
        args.rounds, args.budget = 2, 0.005
    if args.npbench is None and not args.quick:
        parser.error("the path of an NPBench checkout is required (or --quick for the built-in sample)")
    return args


def main(argv=None) -> int:
    args = parse_args(argv)
    numba = import_numba(args.numba)
    with tempfile.TemporaryDirectory() as scratch:
        root = args.npbench or layout.write_sample_layout(scratch)
        try:
            kernels = layout.find_kernels(root, args.only)
        except ValueError as error:
            print(f"bench_npbench: {error}", file=sys.stderr)
            return 2
        rows = run_kernels(root, kernels, args)
    print(f"NPBench preset {args.preset}, median of {args.rounds} rounds of calls taking turns, CPU time, one BLAS thread, "
          f"NumPy {np.__version__}" + (f", Numba {numba.__version__}" if numba else ""))
    print(table(rows, args.level, numba is not None))
    print()
    print(summary(rows, args.level, numba is not None))
    return 0


if __name__ == "__main__":
    sys.exit(main())
