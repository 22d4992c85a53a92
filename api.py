"""The public surface: `jit`, `Tensor`, seeds; composes transpiler → graph passes → backends.

    @graphjit.jit
    def f(x):
        return np.tanh(x) * 2.0

`f(x)` compiles once per input signature (array dtypes and shapes, values of other arguments)
and then calls the generated NumPy function directly.
"""

from __future__ import annotations

import functools
import inspect
import threading
import time
from dataclasses import dataclass
from typing import Any, Callable, Optional

import numpy as np

from . import context as _ctx
from .context import JitConfig

_ARRAY = np.ndarray
_GENERIC = np.generic


def signature_key(args: tuple) -> tuple:
    """What the compiled code depends on: dtypes and shapes of arrays, values of everything else."""
    return tuple(_key(a) for a in args)


def _key(a: Any):
    t = type(a)
    if t is _ARRAY:
        return (a.dtype, a.shape)
    if t in (int, float, bool, str, type(None), complex):
        return (t, a)
    if isinstance(a, _ARRAY):
        return (t, a.dtype, a.shape)
    if isinstance(a, _GENERIC):
        return ("scalar", a.dtype)
    if t in (tuple, list):
        return (t, tuple(_key(v) for v in a))
    return ("object", id(a))


@dataclass
class CompiledEntry:
    """One compiled specialization: the runnable, its graph and source, and what it keeps alive."""

    run: Callable
    graph: Any
    source: str
    keep_alive: tuple
    compile_seconds: float
    passes: Any = None       # the PassReport: per-pass time, rounds


class JitFunction:
    """A function compiled to a static graph on first call for each input signature."""

    def __init__(self, fn: Callable, jit_config: Optional[JitConfig] = None, jit_level: Optional[str] = None,
                 exec_mode: Optional[str] = None, fullgraph: Optional[bool] = None):
        from .transpiler.source import unwrap
        self.fn = fn
        self.__graphjit_fn__ = unwrap(fn)
        functools.update_wrapper(self, fn)
        self.jit_config = jit_config
        self.overrides = {k: v for k, v in (("jit_level", jit_level), ("exec_mode", exec_mode)) if v}
        self.fullgraph = fullgraph
        self._entries: dict[tuple, CompiledEntry] = {}
        self._lock = threading.Lock()
        self._sig = inspect.signature(self.__graphjit_fn__)
        self._simple = all(p.kind is inspect.Parameter.POSITIONAL_OR_KEYWORD and p.default is p.empty
                           for p in self._sig.parameters.values())
        self._nparams = len(self._sig.parameters)
        self.stats = {"hits": 0, "misses": 0, "compiles": 0, "compile_seconds": 0.0}

    def __get__(self, obj, objtype=None):
        if obj is None:
            return self
        return BoundJitFunction(self, obj)

    def __call__(self, *args, **kwargs):
        if _ctx.disabled():
            return self.fn(*args, **kwargs)
        if kwargs or not self._simple or len(args) != self._nparams:
            args = self._bind(args, kwargs)
        entry = self._entries.get(signature_key(args))
        if entry is None:
            entry = self._compile(args)
        return entry.run(*args)

    def _bind(self, args: tuple, kwargs: dict) -> tuple:
        try:
            bound = self._sig.bind(*args, **kwargs)
        except TypeError as e:
            raise TypeError(f"{self.__graphjit_fn__.__qualname__}(): {e}") from None
        bound.apply_defaults()
        return tuple(bound.arguments.values())

    def config(self, owner: Any = None) -> JitConfig:
        config = self.jit_config or getattr(owner, "_jit_config", None) or _ctx.get_context("jit_config")
        if self.overrides:
            config = config.replace(**self.overrides)
        return config

    def _compile(self, args: tuple) -> CompiledEntry:
        key = signature_key(args)
        with self._lock:
            entry = self._entries.get(key)
            if entry is not None:
                return entry
            self.stats["misses"] += 1
            entry = compile_for(self.__graphjit_fn__, args, self.config(args[0] if args else None))
            self.stats["compiles"] += 1
            self.stats["compile_seconds"] += entry.compile_seconds
            self._entries[key] = entry
            return entry

    def entry_for(self, *args, **kwargs) -> CompiledEntry:
        args = self._bind(args, kwargs) if (kwargs or not self._simple or len(args) != self._nparams) else args
        return self._entries.get(signature_key(args)) or self._compile(args)

    def source(self, *args, **kwargs) -> str:
        """The generated NumPy code for this call signature."""
        return self.entry_for(*args, **kwargs).source

    def graph(self, *args, **kwargs):
        """The optimized graph for this call signature (prints as graph text)."""
        return self.entry_for(*args, **kwargs).graph

    def pass_report(self, *args, **kwargs):
        """What the pass pipeline did for this call signature: per-pass time and rounds."""
        return self.entry_for(*args, **kwargs).passes

    def cache_info(self) -> dict:
        return dict(self.stats, entries=len(self._entries))


class BoundJitFunction:
    """A jitted method bound to its object (`@jit` on `construct`)."""

    __slots__ = ("jitted", "obj")

    def __init__(self, jitted: JitFunction, obj: Any):
        self.jitted = jitted
        self.obj = obj

    def __call__(self, *args, **kwargs):
        return self.jitted(self.obj, *args, **kwargs)

    def source(self, *args, **kwargs) -> str:
        return self.jitted.source(self.obj, *args, **kwargs)

    def graph(self, *args, **kwargs):
        return self.jitted.graph(self.obj, *args, **kwargs)

    def pass_report(self, *args, **kwargs):
        return self.jitted.pass_report(self.obj, *args, **kwargs)

    def cache_info(self) -> dict:
        return self.jitted.cache_info()

    @property
    def __graphjit_fn__(self):
        return self.jitted.__graphjit_fn__


def compile_for(fn: Callable, args: tuple, config: JitConfig) -> CompiledEntry:
    """Front end, passes and backend for one call signature; errors point at the user's code."""
    from .backends.compile import compile_emitted
    from .backends.emit_numpy import emit_function
    from .backends.interpreter import Interpreter
    from .graph.diagnostics import GraphjitError
    from .graph.passes.manager import dump_directory_from_env, format_report, run_pipeline
    from .transpiler.lower import lower_function

    start = time.perf_counter()
    try:
        lowered = lower_function(fn, args, {})
        graph = lowered.graph
        dump = dump_directory_from_env(graph.name)
        report = run_pipeline(graph, config.jit_level, dump=dump)
        emitted = emit_function(graph, consts=lowered.consts)
        if dump is not None:
            dump.write("emitted.py", emitted.source)
            dump.write("passes.txt", format_report(report, config.jit_level))
    except GraphjitError as e:
        raise e.with_traceback(None) from None
    if config.exec_mode == "no_sink":
        roots = _roots(lowered.globals, lowered.closure, emitted.consts)
        run = Interpreter(graph, roots)
    else:
        run = compile_emitted(emitted, lowered.globals, lowered.closure)
    keep = tuple(a for a in args if not isinstance(a, (np.ndarray, np.generic)))
    return CompiledEntry(run, graph, emitted.source, keep, time.perf_counter() - start, report)


def _roots(globals_dict: dict, closure: dict, consts: list):
    def root(kind, name):
        if kind == "globals":
            return globals_dict[name]
        if kind == "closure":
            return closure[name].cell_contents
        return consts[name]
    return root


def jit(function: Optional[Callable] = None, *, jit_config: Optional[JitConfig] = None,
        jit_level: Optional[str] = None, exec_mode: Optional[str] = None, fullgraph: Optional[bool] = None,
        **options):
    """Compile a function, method, `Cell.construct` or Cell instance into a static graph.

    Usable as `@jit`, `@jit(jit_config=JitConfig(jit_level="O2"))` and `jit(fn)`.
    """
    if options:
        unknown = ", ".join(sorted(options))
        raise TypeError(f"jit() got unexpected options: {unknown}")

    def wrap(fn):
        if getattr(fn, "__graphjit_cell__", False) and not isinstance(fn, type):
            cell = fn
            jitted = JitFunction(type(cell).construct, jit_config, jit_level, exec_mode, fullgraph)
            return BoundJitFunction(jitted, cell)
        if inspect.ismethod(fn):
            return BoundJitFunction(JitFunction(fn.__func__, jit_config, jit_level, exec_mode, fullgraph),
                                    fn.__self__)
        if not callable(fn):
            raise TypeError(f"jit() needs a function, method or Cell, not {type(fn).__name__}")
        return JitFunction(fn, jit_config, jit_level, exec_mode, fullgraph)

    if function is None:
        return wrap
    return wrap(function)


def Tensor(data: Any = None, dtype: Any = None, shape: Any = None, init: Any = None) -> np.ndarray:
    """MindSpore's `Tensor(...)`: here a NumPy array (a copy, as MindSpore makes)."""
    if data is None and shape is not None:
        return np.zeros(shape, dtype=dtype or np.float32)
    return np.array(data, dtype=dtype)


Tensor.__graphjit_op__ = "array"  # inside a graph, `Tensor(x, dtype)` is `np.array(x, dtype=dtype)`


def set_seed(seed: int) -> None:
    """Seed graphjit's parameter initializers (and NumPy's global generator)."""
    from .nn import init
    init.set_seed(seed)
    np.random.seed(seed)
