"""The public surface: `jit`, the jitted-function objects users hold, seeds (`Tensor`: tensor.py).

    @graphjit.jit
    def f(x):
        return np.tanh(x) * 2.0

`f(x)` compiles once per input signature (array dtypes and shapes, values of other arguments)
and then calls the generated NumPy function directly. Compiled entries are cached in memory (a
per-function `EntryCache`, backends/cache_policy.py, reached through a generated `__call__`:
backends/dispatch.py) and on disk (backends/disk_cache.py), keyed by `backends.cache_key.cache_key`
and guarded by the compile-time objects the graph read (graph/guards.py). A miss compiles through
the driver, compiler.py (transpiler → graph passes → backends).
"""

from __future__ import annotations

import functools
import inspect
import os
from typing import Any, Callable, Optional

import numpy as np

from . import compiler
from . import context as _ctx
from . import jit_options
from .backends import dispatch as _dispatch
from .backends.cache_policy import Entry, EntryCache, map_entry_error
from .context import JitConfig


class JitFunction:
    """A function compiled to a static graph on first call for each input signature."""

    def __init__(self, fn: Callable, jit_config: Optional[JitConfig] = None, jit_level: Optional[str] = None,
                 exec_mode: Optional[str] = None, fullgraph: Optional[bool] = None, *, cache: Optional[bool] = None,
                 static_argnums=None, static_argnames=None, dynamic=None, transform: Optional[Callable] = None,
                 input_signature=None):
        self.fn = fn
        self.transform = transform        # a graph transform after lowering (graphjit.grad gives one)
        self.__graphjit_fn__ = _unwrap(fn)
        functools.update_wrapper(self, fn)
        self.jit_config = jit_config
        self.overrides = {k: v for k, v in (("jit_level", jit_level), ("exec_mode", exec_mode)) if v}
        self.fullgraph = fullgraph
        self.cache = True if cache is None else bool(cache)
        plain = self.__graphjit_fn__
        self._sig = inspect.signature(plain)
        self._names = list(self._sig.parameters)
        self.static_argnums = _as_tuple(static_argnums)
        self.static_argnames = _as_tuple(static_argnames)
        self._static = _static_names(self._names, self.static_argnums, self.static_argnames)
        self.input_signature = jit_options.InputSignature.build(input_signature, self._names, dynamic)
        if self.input_signature is not None:
            dynamic = self.input_signature.dynamic
        self.dynamic = _dynamic_spec(self._names, dynamic)
        self._kinds = ["static" if n in self._static else ("dynamic", self.dynamic[n]) if n in self.dynamic
                       else None for n in self._names]
        self.entries = EntryCache(plain, self._names, self._kinds,
                                  dict(static_argnums=self.static_argnums, static_argnames=self.static_argnames,
                                       static=tuple(self._static), dynamic=self.dynamic),
                                  self.cache, self._install_call, share_variants=transform is None)
        # a class of its own, whose generated `__call__` knows this function's recent entries
        self.__class__ = type("JitFunction", (JitFunction,), {"__module__": __name__})
        self._install_call()

    # --- calling ---------------------------------------------------------------------------
    def __get__(self, obj, objtype=None):
        if obj is None:
            return self
        return BoundJitFunction(self, obj)

    def __call__(self, *args, **kwargs):  # replaced per instance by the generated dispatcher
        return self._slow(self._bind(args, kwargs))

    def _install_call(self) -> None:
        recent = list(reversed(self.entries.order[-_dispatch.MAX_INLINE:]))
        try:
            call = _dispatch.build_call(self._sig, recent, getattr(self.__graphjit_fn__, "__globals__", {}),
                                        map_entry_error, self.entries.hits, self.__graphjit_fn__)
        except (ValueError, SyntaxError):
            call = JitFunction.__call__
        type(self).__call__ = call

    def _slow(self, args: tuple):
        if _ctx.disabled() and self.transform is None:   # a gradient is no plain call: it always compiles
            return self._call_eager(args)
        entry = self._entry(args)
        try:
            return entry.run(*args)
        except Exception as e:
            raise map_entry_error(e, entry)

    def _call_eager(self, args: tuple):
        positional, keywords = _dispatch.call_arguments(self._sig, args)
        return self.fn(*positional, **keywords)

    def _bind(self, args: tuple, kwargs: dict) -> tuple:
        try:
            bound = self._sig.bind(*args, **kwargs)
        except TypeError as e:
            raise TypeError(f"{self.__graphjit_fn__.__qualname__}(): {e}") from None
        given = bound.arguments
        return tuple(given[name] if name in given else _dispatch.live_default(self.__graphjit_fn__, name)
                     if p.default is not inspect.Parameter.empty else _empty_of(p)
                     for name, p in self._sig.parameters.items())

    def config(self, owner: Any = None) -> JitConfig:
        """The JitConfig in force, with `jit_syntax_level` resolved by precedence (lowest first):
        `set_context(jit_syntax_level=...)`, a JitConfig (given to `jit`, `Cell.set_jit_config` or
        `set_context(jit_config=...)`), `jit(fullgraph=True/False)`, `GRAPHJIT_JIT_SYNTAX_LEVEL`.
        """
        config = self.jit_config or getattr(owner, "_jit_config", None) or _ctx.get_context("jit_config")
        if self.overrides:
            config = config.replace(**self.overrides)
        level = config.jit_syntax_level or _ctx.get_context("jit_syntax_level")
        if self.fullgraph is not None:
            level = _ctx.STRICT if self.fullgraph else _ctx.LAX
        env = os.environ.get("GRAPHJIT_JIT_SYNTAX_LEVEL", "")
        if env:
            level = _ctx.normalize_level(env)
        return config.replace(jit_syntax_level=level)

    def _entry(self, args: tuple) -> Entry:
        """The entry for these arguments: found (guards re-checked), reused, loaded or compiled."""
        if self.input_signature is not None:   # entries are made only for matching calls: the fast path needs no check
            self.input_signature.check(args, self.__graphjit_fn__.__qualname__)
        return self.entries.entry(args, self.config(args[0] if args else None), self._front_end)

    def _front_end(self, args: tuple, config: JitConfig):
        """Lower (arrays with dynamic dimensions as their types), run the passes, emit, compile."""
        return compiler.compile_call(self.__graphjit_fn__, self._sig, args, self._kinds, tuple(self._static), config,
                                     self.transform)

    # --- inspection ------------------------------------------------------------------------
    def entry_for(self, *args, **kwargs) -> Entry:
        return self._entry(self._bind(args, kwargs))

    def source(self, *args, **kwargs) -> str:
        """The generated NumPy code for this call signature."""
        return self.entry_for(*args, **kwargs).source

    def graph(self, *args, **kwargs):
        """The optimized graph for this call signature (prints as graph text).

        An entry loaded from disk has no graph: the front end runs now to rebuild it.
        """
        entry = self.entry_for(*args, **kwargs)
        if entry.variant.graph is None:
            entry.variant.graph = self._front_end(self._bind(args, kwargs), entry.config).graph
        return entry.variant.graph

    def pass_report(self, *args, **kwargs):
        """What the pass pipeline did for this call signature: per-pass time and rounds."""
        return self.entry_for(*args, **kwargs).variant.passes

    def cache_info(self) -> dict:
        """hits, misses, compiles, disk_loads, compile_seconds (total), entries and more."""
        return self.entries.info()


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


def _unwrap(fn):
    """The plain function behind a jitted function or a `functools.wraps` chain (as the front end's
    `transpiler.source.unwrap`, without importing LibCST: a disk-cache hit never needs it)."""
    seen = set()
    while id(fn) not in seen:
        seen.add(id(fn))
        inner = getattr(fn, "__graphjit_fn__", None) or getattr(fn, "__wrapped__", None)
        if inner is None:
            break
        fn = inner
    return fn


def _empty_of(p: inspect.Parameter):
    if p.kind is inspect.Parameter.VAR_POSITIONAL:
        return ()
    if p.kind is inspect.Parameter.VAR_KEYWORD:
        return {}
    return None


def _as_tuple(value) -> tuple:
    if value is None:
        return ()
    if isinstance(value, (int, str)):
        return (value,)
    return tuple(value)


def _static_names(names: list, argnums: tuple, argnames: tuple) -> set:
    out = set()
    for k in argnums:
        if not isinstance(k, int) or not -len(names) <= k < len(names):
            raise ValueError(f"static_argnums: {k!r} is not a parameter position (0..{len(names) - 1})")
        out.add(names[k])
    for n in argnames:
        if n not in names:
            raise ValueError(f"static_argnames: {n!r} is not a parameter ({', '.join(names)})")
        out.add(n)
    return out


def _dynamic_spec(names: list, dynamic) -> dict:
    """dynamic=True (every dimension of every array argument), a name or names (all of their
    dimensions), or {name: True | [axes]} -> {name: True | frozenset(axes)}."""
    if dynamic is None or dynamic is False:
        return {}
    if dynamic is True:
        return {n: True for n in names}
    if isinstance(dynamic, str):
        dynamic = [dynamic]
    if not isinstance(dynamic, dict):
        dynamic = {n: True for n in dynamic}
    out = {}
    for n, dims in dynamic.items():
        if n not in names:
            raise ValueError(f"dynamic: {n!r} is not a parameter ({', '.join(names)})")
        if dims is True:
            out[n] = True
        elif dims:
            out[n] = frozenset(int(d) for d in ([dims] if isinstance(dims, int) else dims))
    return out


def jit(function: Optional[Callable] = None, *, jit_config: Optional[JitConfig] = None,
        jit_level: Optional[str] = None, exec_mode: Optional[str] = None, fullgraph: Optional[bool] = None,
        cache: Optional[bool] = None, static_argnums=None, static_argnames=None, dynamic=None,
        capture_mode: str = "ast", backend: str = "", input_signature=None, fn: Optional[Callable] = None,
        mode: str = "PSJit", hash_args=None, compile_once: bool = False, **options):
    """Compile a function, method, `Cell.construct` or Cell instance into a static graph.

    Usable as `@jit`, `@jit(jit_config=JitConfig(jit_level="O2"))` and `jit(fn)`.

    Args:
        cache: False keeps compiled code in memory only (also: GRAPHJIT_CACHE=0).
        static_argnums, static_argnames: arguments that are compile-time values keyed by value
            (hashable), even arrays' neighbours such as NumPy scalars.
        dynamic: True, a parameter name or names, or {name: [axes]}: those dimensions are keyed
            by rank only and the code is generated shape-generic (no recompile when they change).
            MindSpore's `dynamic=1` is `True`, `dynamic=0` the default.
        input_signature: MindSpore 2.2-2.5's Tensors (anything with `shape` and `dtype`) for the
            parameters, in order or by name; their None (or -1) dimensions are dynamic, and a call
            whose array has another dtype or static dimension raises TypeError, as in MindSpore.

    MindSpore's keywords without an effect here (docs/jit-keywords.md) are accepted and, for the
    values that would change what MindSpore does, warn once with a GraphjitWarning saying why:
    `capture_mode` ("ast"; "bytecode" and "trace" warn), `mode` ("PSJit"; "PIJit" warns),
    `backend` ("" or "ms_backend"; "GE" warns), `compile_once=True` (warns), `hash_args` (silent:
    graphjit guards free variables anyway) and the backend `**options` `disable_format_transform`,
    `exec_order`, `ge_options`, `infer_boost` (warn). `fn=` is MindSpore 2.2-2.5's name for
    `function`. Any other keyword is a TypeError.
    """
    function = jit_options.function_argument(function, fn)
    jit_options.check_keywords(dict(capture_mode=capture_mode, mode=mode, backend=backend,
                                    compile_once=compile_once, hash_args=hash_args), options)
    extra = dict(cache=cache, static_argnums=static_argnums, static_argnames=static_argnames,
                 dynamic=jit_options.dynamic_argument(dynamic), input_signature=input_signature)

    def wrap(fn):
        if getattr(fn, "__graphjit_cell__", False) and not isinstance(fn, type):
            cell = fn
            jitted = JitFunction(type(cell).construct, jit_config, jit_level, exec_mode, fullgraph, **extra)
            return BoundJitFunction(jitted, cell)
        if inspect.ismethod(fn):
            return BoundJitFunction(JitFunction(fn.__func__, jit_config, jit_level, exec_mode, fullgraph, **extra),
                                    fn.__self__)
        if not callable(fn):
            raise TypeError(f"jit() needs a function, method or Cell, not {type(fn).__name__}")
        return JitFunction(fn, jit_config, jit_level, exec_mode, fullgraph, **extra)

    if function is None:
        return wrap
    return wrap(function)


def set_seed(seed: int) -> None:
    """Seed graphjit's parameter initializers, NumPy's global generator and the data pipeline's
    shuffles and random transforms (`graphjit.dataset.config.set_seed`), as `mindspore.set_seed` does."""
    from .dataset import config as dataset_config
    from .nn import init
    init.set_seed(seed)
    np.random.seed(seed)
    dataset_config.set_seed(seed)
