"""The cache key: what a compiled entry depends on, spelled out in one function (`cache_key`).

    function        samples.network:Network.construct @ /abs/path/samples/network.py
    source          sha256 of the function's own `def` text
    syntax_level    STRICT | COMPATIBLE | LAX (the effective level)
    jit_level       O0 | O1 | O2
    pipeline        the descriptions of that level's passes, in order
    exec_mode       auto | sink | no_sink
    signature       per argument: dtype and shape of arrays (`?` for dimensions marked dynamic),
                    values of non-array arguments, the type of other objects
    static_argnums, static_argnames, dynamic   the jit options that shape the signature
    versions        graphjit (with a digest of its compiler sources), NumPy, Python
    namespace       for Dask, CuPy or array-API inputs only: the namespace the code calls and its
                    library's version (`array_api_compat.dask.array (dask 2025.1.0)`)

Two more things decide whether a stored entry may be reused, and are checked after the lookup:
the text of every function, method and Cell `construct` the entry inlined (`inlined_changed`,
so editing a helper in another module invalidates it), and its guards (graph/guards.py) on the
compile-time objects it read. Weights are in neither: they are read at each call.

Nothing here imports the front end, the passes or networkx: a process whose entries all come
from the disk cache computes keys without them.
"""

from __future__ import annotations

import ast
import hashlib
import linecache
import os
import sys
from dataclasses import dataclass
from typing import Any, Optional

import numpy as np

from ..graph.guards import encode_value, is_value
from .namespaces import array_key, call_namespace, foreign_arrays, is_foreign_array, namespace_name


class Unportable(Exception):
    """This call cannot have a key another process could compute (the entry stays in memory)."""


@dataclass(frozen=True)
class CacheKey:
    function: str
    source: str
    syntax_level: str
    jit_level: str
    pipeline: tuple
    exec_mode: str
    signature: tuple
    static_argnums: tuple
    static_argnames: tuple
    dynamic: str
    versions: tuple
    namespace: str = ""

    def lines(self) -> list:
        """`name: value` lines, the header of a stored entry (NumPy's keys have no namespace line)."""
        return [f"function: {self.function}", f"source: {self.source}",
                f"syntax_level: {self.syntax_level}", f"jit_level: {self.jit_level}",
                f"pipeline: {', '.join(self.pipeline) or '(no passes)'}", f"exec_mode: {self.exec_mode}",
                f"signature: ({', '.join(self.signature)})",
                f"static_argnums: {self.static_argnums}", f"static_argnames: {self.static_argnames}",
                f"dynamic: {self.dynamic or 'none'}", f"versions: {', '.join(self.versions)}"] + \
            ([f"namespace: {self.namespace}"] if self.namespace else [])

    def digest(self) -> str:
        return hashlib.sha256("\n".join(self.lines()).encode()).hexdigest()[:32]


def cache_key(fn, arg_names: list, args: tuple, *, jit_level: str, exec_mode: str, syntax_level: str,
              static_argnums: tuple = (), static_argnames: tuple = (), static: tuple = (),
              dynamic: Optional[dict] = None, kernels: bool = False) -> CacheKey:
    """The key of `fn` called with `args` (bound, in parameter order) under this configuration.

    `static` names the parameters that are compile-time values (their value is keyed); `dynamic`
    maps a parameter name to the dimensions keyed by rank only (True: all of them); `kernels`: loops
    may go to Numba (compiler.kernels_on), which changes the generated code.
    Raises `Unportable` when some part has no stable text form (the entry then stays in memory).
    """
    code = getattr(fn, "__code__", None)
    if code is None:
        raise Unportable(f"{fn!r} is not a Python function")
    module = getattr(fn, "__module__", None) or "?"
    signature = tuple(f"{name}: {arg_text(value, name in static, (dynamic or {}).get(name))}"
                      for name, value in zip(arg_names, args))
    return CacheKey(
        function=f"{module}:{fn.__qualname__} @ {os.path.abspath(code.co_filename)}",
        source=function_digest(fn),
        syntax_level=syntax_level,
        jit_level=jit_level,
        pipeline=pipeline_descriptions(jit_level) + (("loops that stay loops may go to Numba",) if kernels else ()),
        exec_mode=exec_mode,
        signature=signature,
        static_argnums=tuple(static_argnums or ()),
        static_argnames=tuple(static_argnames or ()),
        dynamic=dynamic_text(dynamic),
        versions=versions(),
        namespace=namespace_text(args),
    )


# --- the argument signature -------------------------------------------------------------------
def arg_text(value: Any, static: bool = False, dynamic: Any = None) -> str:
    """`array float32 (64, 784)`, `array float32 (?, 784)`, `int 3`, `object pkg.mod.Network`."""
    if static:
        try:
            return f"static {type(value).__qualname__} {encode_value(value)!r}"
        except TypeError:
            raise Unportable(f"static argument {value!r} has no stable text form") from None
    t = type(value)
    foreign = is_foreign_array(value)
    if isinstance(value, np.ndarray) or foreign:
        _, _, dtype, shape = array_key(value) if foreign else (None, t, value.dtype, value.shape)
        if dynamic is True:
            shape = (None,) * len(shape)
        elif dynamic:
            shape = tuple(None if k in dynamic or k - len(shape) in dynamic else d for k, d in enumerate(shape))
        kind = "array" if t is np.ndarray else f"array[{t.__module__}.{t.__qualname__}]"
        dims = ", ".join("?" if d is None else str(d) for d in shape)
        dtype_text = dtype if foreign else f"{dtype.name} {dtype.str}"
        return f"{kind} {dtype_text} ({dims}{',' if len(shape) == 1 else ''})"
    if isinstance(value, np.generic):
        return f"scalar {value.dtype.str}"
    if t in (set, frozenset) and is_value(value):   # in encode_value's fixed order, not hash order
        return f"{t.__name__} {encode_value(value)[t.__name__]!r}"
    if is_value(value) and t not in (tuple, list, dict):
        return f"{t.__name__} {value!r}"
    if t in (tuple, list):
        return f"{t.__name__}({', '.join(arg_text(v) for v in value)})"
    if t is dict:
        return "dict(" + ", ".join(f"{k!r}: {arg_text(v)}" for k, v in value.items()) + ")"
    if "<locals>" in t.__qualname__:
        raise Unportable(f"an argument of local class {t.__qualname__}")
    return f"object {t.__module__}.{t.__qualname__}"


def namespace_text(args: tuple) -> str:
    """The namespace non-NumPy arrays among `args` make the code call, with its library's version."""
    xp = call_namespace(args)
    if xp is None:
        return ""
    library = sys.modules.get(type(foreign_arrays(args)[0]).__module__.split(".")[0])
    return f"{namespace_name(xp)} ({library.__name__ if library else '?'} {getattr(library, '__version__', '?')})"


def dynamic_text(dynamic: Optional[dict]) -> str:
    if not dynamic:
        return ""
    return "; ".join(f"{name}: {'all' if dims is True else ','.join(map(str, sorted(dims)))}"
                     for name, dims in sorted(dynamic.items()))


# --- source text ------------------------------------------------------------------------------
def function_digest(fn) -> str:
    """sha256 of the lines of `fn`'s definition (decorators included), read without parsing."""
    code = fn.__code__
    first, last = code.co_firstlineno, _last_line(code)
    lines = _file_lines(code.co_filename)
    if not lines or last > len(lines):
        raise Unportable(f"the source of {fn.__qualname__} is not available")
    return _digest(lines[first - 1:last])


def _last_line(code) -> int:
    last = code.co_firstlineno
    for _, _, line in code.co_lines():
        if line is not None and line > last:
            last = line
    for const in code.co_consts:
        if hasattr(const, "co_lines"):
            last = max(last, _last_line(const))
    return last


def _file_lines(filename: str) -> list:
    linecache.checkcache(filename)
    return linecache.getlines(filename)


def _digest(lines: list) -> str:
    return hashlib.sha256("".join(lines).encode()).hexdigest()[:20]


def inlined_changed(inlined: list) -> Optional[str]:
    """None if every inlined function's text is what it was at compile time, else which one changed."""
    checked: dict = {}
    for qualname, filename, first, last, digest in inlined:
        if filename not in checked:
            checked[filename] = _file_lines(filename)
        lines = checked[filename]
        if not lines or last > len(lines) or _digest(lines[first - 1:last]) != digest:
            return f"the source of {qualname} ({os.path.basename(filename)}:{first}) changed"
    return None


# --- the compiler ------------------------------------------------------------------------------
_PACKAGE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
_PIPELINES: dict = {}
_VERSIONS: list = []


def pipeline_descriptions(level: str) -> tuple:
    """The descriptions of the level's passes, read from graph/passes/manager.py without importing
    it (that would import networkx); the pass code itself is covered by the compiler digest."""
    if level not in _PIPELINES:
        try:
            with open(os.path.join(_PACKAGE, "graph", "passes", "manager.py"), encoding="utf-8") as f:
                tree = ast.parse(f.read())
            _PIPELINES.update(_pipelines_from_ast(tree))
        except (OSError, SyntaxError, ValueError):
            pass
        _PIPELINES.setdefault(level, ("(see compiler digest)",))
    return _PIPELINES[level]


def _pipelines_from_ast(tree: ast.Module) -> dict:
    assigned = {}
    for node in tree.body:
        targets = node.targets if isinstance(node, ast.Assign) else [node.target] \
            if isinstance(node, ast.AnnAssign) and node.value is not None else []
        for t in targets:
            if isinstance(t, ast.Name):
                assigned[t.id] = node.value

    def descriptions(expr) -> list:
        if isinstance(expr, ast.Name) and expr.id in assigned:
            return descriptions(assigned[expr.id])
        if isinstance(expr, ast.BinOp) and isinstance(expr.op, ast.Add):
            return descriptions(expr.left) + descriptions(expr.right)
        if isinstance(expr, (ast.List, ast.Tuple)):
            out = []
            for el in expr.elts:
                if isinstance(el, ast.Starred):
                    out += descriptions(el.value)
                elif isinstance(el, ast.Tuple) and len(el.elts) >= 2 and isinstance(el.elts[1], ast.Constant):
                    out.append(str(el.elts[1].value))
                else:
                    raise ValueError("unrecognised pipeline entry")
            return out
        raise ValueError("unrecognised pipeline")

    table = assigned.get("PIPELINES")
    if not isinstance(table, ast.Dict):
        raise ValueError("PIPELINES is not a dict display")
    out = {}
    for k, v in zip(table.keys, table.values):
        if isinstance(k, ast.Constant):
            out[k.value] = tuple(descriptions(v))
    return out


def versions() -> tuple:
    """graphjit's version and a digest of its compiler's sources, NumPy's, Python's."""
    if not _VERSIONS:
        graphjit = sys.modules.get("graphjit")
        version = getattr(graphjit, "__version__", "?")
        _VERSIONS.extend([f"graphjit {version}+{compiler_digest()}", f"numpy {np.__version__}",
                          f"python {sys.implementation.name} {'.'.join(map(str, sys.version_info[:3]))}"])
    return tuple(_VERSIONS)


def compiler_digest() -> str:
    """sha256 over the sources of transpiler/, graph/ and backends/: a changed compiler (a
    development checkout, a patched install) never reuses entries an older one wrote."""
    h = hashlib.sha256()
    for sub in ("transpiler", "graph", "backends"):
        top = os.path.join(_PACKAGE, sub)
        for dirpath, dirnames, filenames in os.walk(top):
            dirnames[:] = sorted(d for d in dirnames if d != "__pycache__")
            for name in sorted(filenames):
                if name.endswith(".py"):
                    path = os.path.join(dirpath, name)
                    h.update(os.path.relpath(path, _PACKAGE).encode())
                    with open(path, "rb") as f:
                        h.update(f.read())
    return h.hexdigest()[:12]
