"""NPBench's layout read without importing NPBench, and the check that two runs of a kernel agree.

An NPBench checkout (github spcl/npbench) describes each kernel in `bench_info/<name>.json`:
`relative_path` and `module_name` say where its files are (`npbench/benchmarks/<relative_path>/`),
`func_name` names the kernel in every implementation file (`<module>_numpy.py`, `<module>_numba_n.py`,
...), `init` names the function of `<module>.py` that builds the inputs from a preset's parameters,
and `input_args` lists the kernel's arguments. `bench_npbench.py` measures kernels through this
module; its test builds a two-kernel layout with `write_sample_layout`.

Kernels write into their array arguments, so every run gets fresh copies of the inputs and its
outputs are the returned values followed by the state of every array argument after the call.
"""

from __future__ import annotations

import importlib.util
import json
import pathlib
import sys
from dataclasses import dataclass
from typing import Any, Callable

import numpy as np

# NPBench validates with np.allclose(rtol=1e-5, atol=1e-8) and then accepts a relative norm error
# under 1e-5; a kernel's json may loosen these (durbin: rtol/atol 1e-3, mandelbrot: norm_error).
DEFAULT_TOLERANCE = {"rtol": 1e-5, "atol": 1e-8, "norm_error": 1e-5}


@dataclass
class Kernel:
    """One NPBench kernel: its name (the bench_info file's stem) and its json description."""

    name: str
    info: dict
    root: pathlib.Path

    @property
    def directory(self) -> pathlib.Path:
        return self.root / "npbench" / "benchmarks" / self.info["relative_path"]

    def implementation(self, postfix: str) -> Callable | None:
        """The kernel function of `<module>_<postfix>.py`, or None when the kernel has no such file."""
        path = self.directory / f"{self.info['module_name']}_{postfix}.py"
        if not path.exists():
            return None
        return getattr(load_module(path, f"npbench_{self.name}_{postfix}"), self.info["func_name"])

    def tolerance(self) -> dict:
        return {key: self.info.get(key, default) for key, default in DEFAULT_TOLERANCE.items()}

    def make_inputs(self, preset: str) -> dict:
        """The preset's parameters plus what the kernel's `initialize` builds from them, by name."""
        if preset not in self.info["parameters"]:
            raise KeyError(f"{self.name} has no preset {preset!r}")
        data = dict(self.info["parameters"][preset])
        init = self.info.get("init")
        if init:
            module = load_module(self.directory / f"{self.info['module_name']}.py", f"npbench_{self.name}_init")
            made = getattr(module, init["func_name"])(*(data[name] for name in init["input_args"]))
            names = init["output_args"]
            if len(names) == 1:
                made = (made,)
            data.update(zip(names, made))
        return data

    def arguments(self, data: dict) -> list:
        """The kernel's arguments in order, every array a fresh copy."""
        return [fresh_copy(data[name]) for name in self.info["input_args"]]


def fresh_copy(value: Any) -> Any:
    return value.copy() if isinstance(value, np.ndarray) else value


def load_module(path: pathlib.Path, name: str):
    """Import the file at `path` as module `name` (registered, so that `inspect` finds its source)."""
    if name in sys.modules and getattr(sys.modules[name], "__file__", None) == str(path):
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def find_kernels(root: str | pathlib.Path, only: list[str] | None = None) -> list[Kernel]:
    """Every kernel of the checkout at `root`, sorted by name; `only` picks kernels by file stem or
    NPBench's short name. Raises ValueError for a directory that is not an NPBench checkout or a
    name in `only` that matches no kernel."""
    root = pathlib.Path(root)
    info_dir = root / "bench_info"
    if not info_dir.is_dir():
        raise ValueError(f"{root} is not an NPBench checkout: it has no bench_info/ directory")
    kernels = [Kernel(path.stem, json.loads(path.read_text())["benchmark"], root)
               for path in sorted(info_dir.glob("*.json"))]
    if only:
        unknown = [name for name in only if not any(name in (k.name, k.info.get("short_name")) for k in kernels)]
        if unknown:
            raise ValueError(f"no NPBench kernel named {', '.join(unknown)}")
        kernels = [k for k in kernels if k.name in only or k.info.get("short_name") in only]
    return kernels


def run_once(fn: Callable, kernel: Kernel, data: dict) -> list[tuple[str, Any]]:
    """Call `fn` on fresh copies of the inputs; the outputs, labelled: returned values, then every
    array argument as the call left it."""
    args = kernel.arguments(data)
    result = fn(*args)
    outputs = []
    if isinstance(result, (tuple, list)):
        outputs += [(f"return[{i}]", value) for i, value in enumerate(result)]
    elif result is not None:
        outputs.append(("return", result))
    for name, value in zip(kernel.info["input_args"], args):
        if isinstance(value, np.ndarray):
            outputs.append((f"argument {name}", value))
    return outputs


def first_difference(expected: list, actual: list, rtol: float, atol: float, norm_error: float) -> str | None:
    """None when `actual` equals `expected` within NPBench's tolerance, else one line on the first
    output that differs."""
    if [label for label, _ in expected] != [label for label, _ in actual]:
        return f"outputs {[label for label, _ in actual]} instead of {[label for label, _ in expected]}"
    for (label, want), (_, got) in zip(expected, actual):
        problem = value_difference(want, got, rtol, atol, norm_error)
        if problem:
            return f"{label}: {problem}"
    return None


def value_difference(want: Any, got: Any, rtol: float, atol: float, norm_error: float) -> str | None:
    want_array, got_array = np.asarray(want), np.asarray(got)
    if want_array.shape != got_array.shape:
        return f"shape {got_array.shape} instead of {want_array.shape}"
    if want_array.dtype != got_array.dtype:
        return f"dtype {got_array.dtype} instead of {want_array.dtype}"
    if want_array.dtype == object:
        return None if _objects_equal(want, got) else f"{got!r:.60} instead of {want!r:.60}"
    if np.allclose(want_array, got_array, rtol=rtol, atol=atol, equal_nan=True):
        return None
    error = _relative_error(want_array, got_array)
    if error < norm_error:
        return None
    wrong = ~np.isclose(want_array, got_array, rtol=rtol, atol=atol, equal_nan=True)
    where = tuple(int(i) for i in np.argwhere(wrong)[0]) if want_array.ndim else ()
    return (f"{int(wrong.sum())} of {want_array.size} elements differ (first at {where}: "
            f"{got_array[where]!r} instead of {want_array[where]!r}), relative error {error:.2e}")


def _relative_error(want: np.ndarray, got: np.ndarray) -> float:
    with np.errstate(all="ignore"):
        scale = np.linalg.norm(want.astype(np.complex128).ravel())
        error = np.linalg.norm((want.astype(np.complex128) - got.astype(np.complex128)).ravel())
    return float(error / scale) if scale else float(error)


def _objects_equal(want: Any, got: Any) -> bool:
    try:
        return bool(np.all(want == got))
    except Exception:  # noqa: BLE001 - values that cannot be compared are not equal
        return False


SAMPLE_KERNELS = {
    # name: (relative_path, files {file name: source}, json fields)
    "scale_rows": ("sample/scale_rows", {
        "scale_rows.py": "import numpy as np\n\n\ndef initialize(N, M):\n"
                         "    A = np.fromfunction(lambda i, j: (i + j) / N, (N, M))\n"
                         "    w = np.linspace(0.5, 2.0, N)\n    return A, w\n",
        "scale_rows_numpy.py": "import numpy as np\n\n\ndef kernel(alpha, A, w):\n"
                               "    for i in range(A.shape[0]):\n        A[i, :] *= alpha * w[i]\n",
    }, {"func_name": "kernel", "parameters": {"S": {"N": 40, "M": 30, "alpha": 1.5}},
        "init": {"func_name": "initialize", "input_args": ["N", "M"], "output_args": ["A", "w"]},
        "input_args": ["alpha", "A", "w"], "array_args": ["A", "w"], "output_args": ["A"]}),
    "running_sum": ("sample/running_sum", {
        "running_sum.py": "import numpy as np\n\n\ndef initialize(N):\n"
                          "    return np.arange(N, dtype=np.float64) % 7\n",
        "running_sum_numpy.py": "import numpy as np\n\n\ndef running_sum(x):\n"
                                "    out = np.empty_like(x)\n    total = 0.0\n"
                                "    for i in range(x.shape[0]):\n        total += x[i]\n        out[i] = total\n"
                                "    return out, total\n",
    }, {"func_name": "running_sum", "parameters": {"S": {"N": 50}},
        "init": {"func_name": "initialize", "input_args": ["N"], "output_args": ["x"]},
        "input_args": ["x"], "array_args": ["x"], "output_args": []}),
}


def write_sample_layout(root: str | pathlib.Path) -> pathlib.Path:
    """Write a two-kernel NPBench-like layout under `root` (for the harness's test and `--quick`):
    one kernel writes into an argument, the other returns a tuple."""
    root = pathlib.Path(root)
    (root / "bench_info").mkdir(parents=True, exist_ok=True)
    for name, (relative_path, files, fields) in SAMPLE_KERNELS.items():
        directory = root / "npbench" / "benchmarks" / relative_path
        directory.mkdir(parents=True, exist_ok=True)
        for file_name, source in files.items():
            (directory / file_name).write_text(source)
        info = {"name": name, "short_name": name, "relative_path": relative_path, "module_name": name, **fields}
        (root / "bench_info" / f"{name}.json").write_text(json.dumps({"benchmark": info}, indent=2))
    return root
