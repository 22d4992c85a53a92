"""The public surface: `jit`, `Tensor`, seeds; composes transpiler → graph passes → backends.

    @graphjit.jit
    def f(x):
        return np.tanh(x) * 2.0

`f(x)` compiles once per input signature (array dtypes and shapes, values of other arguments)
and then calls the generated NumPy function directly. Compiled entries are cached in memory (a
per-function table, reached through a generated `__call__`: backends/dispatch.py) and on disk
(backends/disk_cache.py), keyed by `backends.cache_key.cache_key` and guarded by the
compile-time objects the graph read (graph/guards.py).
"""

from __future__ import annotations

import functools
import inspect
import os
import sys
import threading
import time
import warnings
from dataclasses import dataclass, field
from typing import Any, Callable, Optional

import numpy as np

from . import context as _ctx
from . import log
from .backends import dispatch as _dispatch
from .context import JitConfig
from .graph.guards import GuardSet, encode_value, decode_value
from .graph.diagnostics import user_stacklevel

_ARRAY = np.ndarray
_GENERIC = np.generic


def signature_key(args: tuple, kinds: Optional[list] = None) -> tuple:
    """What the compiled code depends on: dtypes and shapes of arrays, values of everything else.

    The in-memory projection of `backends.cache_key.cache_key` (which also names the function's
    source, the configuration and the versions: fixed for one JitFunction in one process).
    """
    kinds = kinds or [None] * len(args)
    return tuple(_dispatch.arg_key(a, k) for a, k in zip(args, kinds))


@dataclass
class CompiledEntry:
    """One compiled specialization: the runnable, its graph and source, and what it keeps alive."""

    run: Callable
    graph: Any
    source: str
    keep_alive: tuple
    compile_seconds: float
    diagnostics: list = field(default_factory=list)
    eager: bool = False    # nothing compiled: the original function runs
    name: str = ""
    line_table: dict = field(default_factory=dict)
    consts: list = field(default_factory=list)
    lowered: Any = None
    report: Any = None


class Variant:
    """A compiled artifact: generated code and what it needs, shared by entries that match it."""

    __slots__ = ("run", "source", "name", "filename", "line_table", "inlined", "guards", "consts",
                 "recipes", "graph", "compile_seconds", "origin", "pipeline", "path", "passes")

    def __init__(self, run, source, name, line_table, inlined, guards, consts, recipes, graph,
                 compile_seconds, origin, pipeline=(), path=""):
        from .backends.compile import synthetic_filename
        self.run, self.source, self.name = run, source, name
        self.filename = synthetic_filename(name, source)
        self.line_table, self.inlined, self.guards = line_table, inlined, guards
        self.consts, self.recipes, self.graph = consts, recipes, graph
        self.compile_seconds, self.origin, self.pipeline, self.path = compile_seconds, origin, pipeline, path
        self.passes = None   # the PassReport of a compile (None when loaded from disk)


class Entry:
    """A variant bound to one call signature and configuration, with its guards on live objects."""

    __slots__ = ("variant", "run", "guards", "epoch", "key", "config", "desc", "keep_alive", "fast")

    def __init__(self, variant: Variant, guards: GuardSet, key: tuple, config: JitConfig, desc: list,
                 keep_alive: tuple):
        self.variant, self.run, self.guards = variant, variant.run, guards
        self.epoch = _ctx.EPOCH[0]
        self.key, self.config, self.desc, self.keep_alive = key, config, desc, keep_alive
        self.fast = None

    @property
    def source(self) -> str:
        return self.variant.source

    @property
    def graph(self):
        return self.variant.graph

    @property
    def compile_seconds(self) -> float:
        return self.variant.compile_seconds


def _map_error(exc: BaseException, entry: Entry) -> BaseException:
    from .backends.compile import map_error
    v = entry.variant
    return map_error(exc, v.filename, v.line_table, v.inlined)


class JitFunction:
    """A function compiled to a static graph on first call for each input signature."""

    def __init__(self, fn: Callable, jit_config: Optional[JitConfig] = None, jit_level: Optional[str] = None,
                 exec_mode: Optional[str] = None, fullgraph: Optional[bool] = None, *, cache: Optional[bool] = None,
                 static_argnums=None, static_argnames=None, dynamic=None):
        self.fn = fn
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
        self.dynamic = _dynamic_spec(self._names, dynamic)
        self._kinds = ["static" if n in self._static else ("dynamic", self.dynamic[n]) if n in self.dynamic
                       else None for n in self._names]
        self._table: dict[tuple, list] = {}
        self._order: list = []            # every entry, oldest first
        self._variants: dict[str, list] = {}
        self._lock = threading.RLock()
        self._hits = _dispatch.new_counter()
        self._warned_recompiles = False
        self.transform = None             # a graph transform after lowering (graphjit.grad sets one)
        self.stats = {"misses": 0, "compiles": 0, "disk_loads": 0, "reuses": 0, "recompiles": 0,
                      "disk_writes": 0, "compile_seconds": 0.0, "load_seconds": 0.0}
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
        recent = list(reversed(self._order[-_dispatch.MAX_INLINE:]))
        try:
            call = _dispatch.build_call(self._sig, recent, getattr(self.__graphjit_fn__, "__globals__", {}),
                                        _map_error, self._hits, self.__graphjit_fn__)
        except (ValueError, SyntaxError):
            call = JitFunction.__call__
        type(self).__call__ = call

    def _slow(self, args: tuple):
        if _ctx.disabled():
            return self._call_eager(args)
        entry = self._entry(args)
        try:
            return entry.run(*args)
        except Exception as e:
            raise _map_error(e, entry)

    def _call_eager(self, args: tuple):
        positional, keywords = _call_arguments(self._sig, args)
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

    def _memory_key(self, args: tuple, config: JitConfig) -> tuple:
        level = config.jit_syntax_level or _ctx.get_context("jit_syntax_level")
        return (config.jit_level, config.exec_mode, level) + signature_key(args, self._kinds)

    # --- the table -------------------------------------------------------------------------
    def _entry(self, args: tuple) -> Entry:
        """The entry for these arguments: found (guards re-checked), reused, loaded or compiled."""
        config = self.config(args[0] if args else None)
        key = self._memory_key(args, config)
        failure = None
        for entry in self._table.get(key, ()):
            reason = entry.guards.check(self._roots(entry, args))
            if reason is None:
                entry.epoch = _ctx.EPOCH[0]
                next(self._hits)
                return entry
            failure = failure or reason
            log.info("guards", "%s: %s", self.__graphjit_fn__.__qualname__, reason)
        return self._miss(args, config, key, failure)

    def _miss(self, args: tuple, config: JitConfig, key: tuple, failure: Optional[str]) -> Entry:
        with self._lock:
            for entry in self._table.get(key, ()):  # another thread may have just made it
                if entry.guards.check(self._roots(entry, args)) is None:
                    entry.epoch = _ctx.EPOCH[0]
                    next(self._hits)
                    return entry
            log.refresh()
            self.stats["misses"] += 1
            reason = self._explain(args, config, key, failure)
            ckey, why = self._cache_key(args, config)
            store = None
            if self.cache and ckey is not None and config.exec_mode != "no_sink":
                from .backends import disk_cache
                store = disk_cache.current()
            skey = key[:3] + tuple(_dispatch.structure_key(a, k) for a, k in zip(args, self._kinds))
            how = " (compiled code reused: same structure)"
            entry = self._reuse(skey, args, config, key)
            if entry is None and store is not None:
                how = " (loaded from disk)"
                entry = self._load(ckey, skey, store, args, config, key)
            if entry is None:
                how = ""
                entry = self._compile(args, config, key, ckey, skey, store, why)
            first = not self._order
            self._table.setdefault(key, []).insert(0, entry)
            self._order.append(entry)
            self._install_call()
            self._report(entry, reason, first, how)
            return entry

    def _roots(self, entry: Entry, args: tuple):
        return _make_roots(self._names, args, getattr(self.__graphjit_fn__, "__globals__", {}),
                           _closure_of(self.__graphjit_fn__), entry.variant.consts)

    def _new_entry(self, variant: Variant, guards: GuardSet, args: tuple, config: JitConfig, key: tuple) -> Entry:
        keep = tuple(a for a in args if not isinstance(a, (np.ndarray, np.generic)))
        entry = Entry(variant, guards, key, config, [_dispatch.describe_arg(a) for a in args], keep)
        roots = _make_roots(self._names, args, getattr(self.__graphjit_fn__, "__globals__", {}),
                            _closure_of(self.__graphjit_fn__), variant.consts)
        entry.fast = _dispatch.fast_spec(self._names, args, self._kinds, guards, roots)
        return entry

    def _cache_key(self, args: tuple, config: JitConfig):
        from .backends.cache_key import Unportable, cache_key
        try:
            return cache_key(self.__graphjit_fn__, self._names, args, jit_level=config.jit_level,
                             exec_mode=config.exec_mode,
                             syntax_level=config.jit_syntax_level or _ctx.get_context("jit_syntax_level"),
                             static_argnums=self.static_argnums, static_argnames=self.static_argnames,
                             static=tuple(self._static), dynamic=self.dynamic), None
        except Unportable as e:
            return None, str(e)

    def _reuse(self, skey, args, config, key) -> Optional[Entry]:
        """An entry compiled for another object of the same structure (another instance of a Cell)."""
        from .backends.cache_key import inlined_changed
        for variant in list(self._variants.get(skey, ())):
            if variant.recipes is None or any(isinstance(r, dict) and "new" in r for r in variant.recipes):
                continue  # objects built at compile time are not shared between entries
            if inlined_changed(variant.inlined):  # a helper was edited (and its module reloaded)
                self._variants[skey].remove(variant)
                continue
            roots = _make_roots(self._names, args, getattr(self.__graphjit_fn__, "__globals__", {}),
                                _closure_of(self.__graphjit_fn__), variant.consts)
            reason, bound = variant.guards.bind(roots)
            if reason is None:
                self.stats["reuses"] += 1
                return self._new_entry(variant, bound, args, config, key)
        return None

    def _load(self, ckey, skey, store, args, config, key) -> Optional[Entry]:
        """An entry another process (or an earlier JitFunction) stored on disk: no front end."""
        from .backends.cache_key import inlined_changed
        from .backends.compile import compile_source
        from .graph.spans import SourceSpan
        start = time.perf_counter()
        fn = self.__graphjit_fn__
        name = fn.__qualname__
        for stored in store.load(ckey):
            stale = inlined_changed(stored.inlined)
            if stale:
                log.info("cache", "%s: stored entry %s is stale: %s", name, stored.path, stale)
                store._remove(stored.path)
                continue
            guards = GuardSet.from_json(stored.guards)
            consts = _LazyConsts(stored.consts)
            roots = _make_roots(self._names, args, fn.__globals__, _closure_of(fn), consts)
            try:
                reason, bound = guards.bind(roots)
                built = consts.build_all()
            except Exception as e:  # a class that moved, a constructor that now fails
                log.info("cache", "%s: cannot rebuild the objects of %s: %s: %s", name, stored.path,
                         type(e).__name__, e)
                continue
            if reason is not None:
                log.info("guards", "%s: stored entry %s does not apply: %s", name, stored.path, reason)
                continue
            try:
                run = compile_source(stored.name, stored.source, fn.__globals__, _closure_of(fn), built)
            except SyntaxError:
                continue
            table = {int(row[0]): SourceSpan(*row[1:]) for row in stored.line_table}
            variant = Variant(run, stored.source, stored.name, table, stored.inlined, guards, built,
                              stored.consts, None, stored.compile_seconds, "disk", stored.pipeline, stored.path)
            store.touch(stored)
            seconds = time.perf_counter() - start
            self.stats["disk_loads"] += 1
            self.stats["load_seconds"] += seconds
            self._variants.setdefault(skey, []).append(variant)
            log.info("cache", "%s: loaded from disk (%s) in %.2f ms", name, stored.path, seconds * 1e3)
            return self._new_entry(variant, bound, args, config, key)
        return None

    def _compile(self, args, config, key, ckey, skey, store, unportable: Optional[str]) -> Entry:
        compiled = self._front_end(args, config)
        self.stats["compiles"] += 1
        self.stats["compile_seconds"] += compiled.compile_seconds
        lowered = compiled.lowered
        guards = lowered.guards if lowered is not None else GuardSet()
        variant = Variant(compiled.run, compiled.source, compiled.name, compiled.line_table,
                          list(lowered.inlined) if lowered is not None else [], guards, compiled.consts,
                          None, compiled.graph, compiled.compile_seconds, "compiled",
                          _pipeline_of(config.jit_level))
        variant.passes = compiled.report
        entry = self._new_entry(variant, guards, args, config, key)
        guards.check(self._roots(entry, args))  # marks the Cells it read as watched
        name = self.__graphjit_fn__.__qualname__
        if compiled.report is not None:
            log.info("passes", "%s: %s, %d round(s): %s", name, config.jit_level, compiled.report.rounds,
                     ", ".join(f"{d} {t * 1e3:.2f} ms" for d, t in compiled.report.timings.items()) or "no passes")
        why_not = _why_not_on_disk(config, guards, lowered, compiled, self.cache) or unportable
        if lowered is not None and guards.portable and self.transform is None:
            try:
                variant.recipes = const_recipes(compiled.consts, lowered.consts, lowered.recipes)
                self._variants.setdefault(skey, []).append(variant)
            except TypeError as e:
                why_not = why_not or str(e)
        if why_not is None and ckey is not None:
            if store is not None:
                from .backends.disk_cache import StoredEntry
                stored = StoredEntry(variant.name, variant.source,
                                     [[n, s.file, s.line, s.col, s.end_line, s.end_col]
                                      for n, s in sorted(variant.line_table.items())],
                                     [list(i) for i in variant.inlined], guards.to_json(), variant.recipes,
                                     list(variant.pipeline), variant.compile_seconds)
                path = store.store(ckey, stored)
                if path:
                    self.stats["disk_writes"] += 1
                    variant.path = path
                    log.info("cache", "%s: stored %s", name, path)
        elif why_not is not None and self.cache:
            log.info("cache", "%s: not stored on disk: %s", name, why_not)
        return entry

    # --- reporting -------------------------------------------------------------------------
    def _explain(self, args: tuple, config: JitConfig, key: tuple, failure: Optional[str]) -> Optional[str]:
        if not self._order:
            return None
        if failure:
            return failure
        last = self._order[-1]
        parts = []
        for k, what in enumerate(("jit_level", "exec_mode", "jit_syntax_level")):
            if last.key[k] != key[k]:
                parts.append(f"{what} changed {last.key[k]} → {key[k]}")
        desc = [_dispatch.describe_arg(a) for a in args]
        for name, old, new, kind in zip(self._names, last.desc, desc, self._kinds):
            if kind == "static":
                if old != new:
                    parts.append(f"static argument {name} changed")
                continue
            if isinstance(kind, tuple) and old[0] == new[0] == "array" and old[1] == new[1] and \
                    len(old[2]) == len(new[2]):
                fixed = [ax for ax, (a, b) in enumerate(zip(old[2], new[2])) if a != b and
                         _dispatch.dynamic_shape(old[2], kind[1])[ax] is not None]
                if fixed:
                    parts.append(f"{name}.shape changed {old[2]} → {new[2]} (axes {fixed} are not dynamic)")
                continue
            parts += _dispatch.diff_arg(name, old, new)
        return "; ".join(parts) or "another combination of arguments (see cache_info)"

    def _front_end(self, args: tuple, config: JitConfig) -> CompiledEntry:
        """Lower (arrays with dynamic dimensions as their types), run the passes, emit, compile."""
        positional, keywords = _call_arguments(
            self._sig, [_abstract(value, kind) for value, kind in zip(args, self._kinds)])
        options = {"static": tuple(self._static)}
        if keywords:
            options["kwargs"] = keywords
        if self.transform is not None:
            options["transform"] = self.transform
        return compile_for(self.__graphjit_fn__, tuple(positional), config, **options)

    def _report(self, entry: Entry, reason: Optional[str], first: bool, how: str = "") -> None:
        name = self.__graphjit_fn__.__qualname__
        if first:
            log.info("cache", "%s: first entry%s", name, how or " (compiled)")
            return
        self.stats["recompiles"] += 1
        log.info("recompiles", "recompiling %s: %s%s", name, reason, how)
        limit = _recompile_limit()
        if limit and self.stats["recompiles"] >= limit and not self._warned_recompiles:
            self._warned_recompiles = True
            warnings.warn(self._recompile_advice(limit, reason), _warning_class(), stacklevel=user_stacklevel())

    def _recompile_advice(self, limit: int, reason: Optional[str]) -> str:
        name = self.__graphjit_fn__.__qualname__
        varying: dict = {}
        values = set()
        for k, pname in enumerate(self._names):
            descs = [e.desc[k] for e in self._order if k < len(e.desc)]
            arrays = [d for d in descs if d[0] == "array"]
            if len(arrays) == len(descs) and arrays and len({len(d[2]) for d in arrays}) == 1:
                dims = [ax for ax in range(len(arrays[0][2])) if len({d[2][ax] for d in arrays}) > 1]
                if dims:
                    varying[pname] = dims
            elif descs and all(d[0] == "value" for d in descs) and len({repr(d[2]) for d in descs}) > 1:
                values.add(pname)
        text = f"{name} has been recompiled {self.stats['recompiles']} times (last: {reason})."
        if varying:
            spec = ", ".join(f"{k!r}: {v}" for k, v in varying.items())
            text += (f" If a dimension varies from call to call, mark it dynamic: jit({name.split('.')[-1]}, "
                     f"dynamic=True) or per argument jit(..., dynamic={{{spec}}}).")
        if values:
            text += (f" Arguments {', '.join(sorted(values))} take new values: values of non-array arguments "
                     "are compile-time constants; pass a NumPy scalar or array to make them run-time values.")
        if not varying and not values:
            text += " Mark varying dimensions dynamic (jit(..., dynamic=True)) or check the recompile log " \
                    "(GRAPHJIT_LOG=recompiles)."
        return text

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

    @property
    def _entries(self) -> dict:
        return {id(e): e for e in self._order}

    def pass_report(self, *args, **kwargs):
        """What the pass pipeline did for this call signature: per-pass time and rounds."""
        return self.entry_for(*args, **kwargs).variant.passes

    def cache_info(self) -> dict:
        """hits, misses, compiles, disk_loads, compile_seconds (total), entries and more."""
        return dict(self.stats, hits=_dispatch.hit_count(self._hits), entries=len(self._order))


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


def compile_for(fn: Callable, args: tuple, config: JitConfig, static: tuple = (),
                kwargs: Optional[dict] = None, transform: Optional[Callable] = None) -> CompiledEntry:
    """Front end, passes and backend for one call signature; errors point at the user's code."""
    from .backends.compile import compile_emitted
    from .backends.emit_numpy import emit_function
    from .backends.interpreter import Interpreter
    from .graph.diagnostics import GraphjitError
    from .graph.passes.manager import dump_directory_from_env, format_report, run_pipeline
    from .transpiler.lower import lower_function

    from .graph.diagnostics import GraphSyntaxError

    start = time.perf_counter()
    level = config.jit_syntax_level or _ctx.LAX
    try:
        lowered = lower_function(fn, args, kwargs or {}, static=static, level=level)
        graph = lowered.graph
        dump = dump_directory_from_env(graph.name)
        if transform is not None:
            if dump is not None:
                dump.write("before_transform.txt", str(graph))
            transform(lowered, args, _make_roots(lowered.arg_names, args, lowered.globals, lowered.closure,
                                                 lowered.consts))
        report = run_pipeline(graph, config.jit_level, dump=dump)
        emitted = emit_function(graph, consts=lowered.consts)
        if dump is not None:
            dump.write("emitted.py", emitted.source)
            dump.write("passes.txt", format_report(report, config.jit_level))
    except GraphSyntaxError as e:
        raise e.with_traceback(None) from None
    except GraphjitError as e:
        raise e.with_traceback(None) from None
    keep = tuple(a for a in args if not isinstance(a, (np.ndarray, np.generic)))
    if lowered.eager or _only_fallbacks(graph):
        if not lowered.eager:
            import warnings
            code = fn.__code__
            warnings.warn_explicit(f"graphjit: nothing in {fn.__qualname__} compiles into a graph; it runs eagerly",
                                   UserWarning, code.co_filename, code.co_firstlineno)
        return CompiledEntry(fn, graph, emitted.source, keep, time.perf_counter() - start,
                             lowered.diagnostics, True, emitted.name, emitted.line_table, emitted.consts, lowered,
                             report)
    if config.exec_mode == "no_sink":
        roots = _roots(lowered.globals, lowered.closure, emitted.consts)
        run = Interpreter(graph, roots, lowered.globals)
    else:
        run = compile_emitted(emitted, lowered.globals, lowered.closure)
    return CompiledEntry(run, graph, emitted.source, keep, time.perf_counter() - start, lowered.diagnostics,
                         False, emitted.name, emitted.line_table, emitted.consts, lowered, report)


def _only_fallbacks(graph) -> bool:
    """True when the graph does nothing but run fallback blocks (and unpack their results)."""
    kinds = {n.op for n in graph.nodes}
    return "fallback" in kinds and kinds <= {"fallback", "tuple_get", "const", "tuple", "if"} and not any(
        n.op == "if" and any(m.op not in ("const", "tuple_get") for r in n.regions for m in r.nodes)
        for n in graph.nodes)


def _roots(globals_dict: dict, closure: dict, consts: list):
    def root(kind, name):
        if kind == "globals":
            return globals_dict[name]
        if kind == "closure":
            return closure[name].cell_contents
        return consts[name]
    return root


def _make_roots(names: list, args: tuple, globals_dict: dict, closure: dict, consts):
    by_name = dict(zip(names, args))

    def root(kind, name):
        if kind == "arg":
            return by_name[name]
        if kind == "globals":
            return globals_dict[name]
        if kind == "closure":
            return closure[name].cell_contents
        if kind == "closure_cell":
            return closure[name]
        if kind == "const":
            return consts[name]
        if kind == "module":
            return sys.modules[name]
        raise KeyError(kind)
    return root


def _call_arguments(sig: inspect.Signature, args) -> tuple[list, dict]:
    """Bound arguments (one per parameter, `*args` as a tuple, `**kw` as a dict) back into a call."""
    positional, keywords = [], {}
    for p, value in zip(sig.parameters.values(), args):
        if p.kind is inspect.Parameter.VAR_POSITIONAL:
            positional.extend(value)
        elif p.kind is inspect.Parameter.VAR_KEYWORD:
            keywords.update(value)
        elif p.kind is inspect.Parameter.KEYWORD_ONLY:
            keywords[p.name] = value
        else:
            positional.append(value)
    return positional, keywords


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


def _closure_of(fn) -> dict:
    code = getattr(fn, "__code__", None)
    cells = getattr(fn, "__closure__", None) or ()
    return dict(zip(code.co_freevars, cells)) if code is not None else {}


# --- what a compiled entry needs on disk ---------------------------------------------------------
def const_recipes(consts: list, lowered_consts: list, recipes: dict) -> list:
    """How another process rebuilds each `_k[i]`: import a module, decode a literal, or call a
    class again with the same arguments, in the same order (as compiling would, at the same moment:
    the first call). Raises TypeError for an object that cannot be rebuilt."""
    import types
    out: list = []
    built: dict = {}
    for k, obj in enumerate(consts):
        if k < len(lowered_consts) and k in recipes:
            cls, args, kwargs = recipes[k]
            out.append({"new": [encode_value(cls), _encode_ref(list(args), built),
                                _encode_ref(dict(kwargs), built)]})
        elif isinstance(obj, types.ModuleType):
            out.append({"module": obj.__name__})
        else:
            try:
                out.append({"value": encode_value(obj)})
            except TypeError:
                raise TypeError(f"the compile-time {type(obj).__name__} object _k[{k}] cannot be rebuilt by "
                                "another process") from None
        built[id(obj)] = k
    return out


def _encode_ref(value, built: dict):
    if id(value) in built:
        return {"const": built[id(value)]}
    if type(value) is list:
        return [_encode_ref(v, built) for v in value]
    if type(value) is dict:
        return {"dict": {str(k): _encode_ref(v, built) for k, v in value.items()}}
    if type(value) is tuple:
        return {"tuple": [_encode_ref(v, built) for v in value]}
    return encode_value(value)


class _LazyConsts:
    """`_k` of a stored entry, rebuilt in order on first use (after the other guards passed)."""

    def __init__(self, recipes: list):
        self.recipes = recipes
        self.built: Optional[list] = None

    def __getitem__(self, k):
        return self.build_all()[k]

    def build_all(self) -> list:
        if self.built is None:
            built: list = []
            for recipe in self.recipes:
                (tag, body), = recipe.items()
                if tag == "module":
                    import importlib
                    built.append(importlib.import_module(body))
                elif tag == "value":
                    built.append(decode_value(body))
                else:
                    cls = decode_value(body[0])
                    args = _decode_ref(body[1], built)
                    kwargs = _decode_ref(body[2], built)
                    built.append(cls(*args, **kwargs))
            self.built = built
        return self.built


def _decode_ref(data, built: list):
    if isinstance(data, list):
        return [_decode_ref(v, built) for v in data]
    if isinstance(data, dict) and len(data) == 1:
        (tag, body), = data.items()
        if tag == "const":
            return built[body]
        if tag == "dict":
            return {k: _decode_ref(v, built) for k, v in body.items()}
        if tag == "tuple":
            return tuple(_decode_ref(v, built) for v in body)
    return decode_value(data)


def _why_not_on_disk(config, guards: GuardSet, lowered, compiled, cache: bool) -> Optional[str]:
    if not cache:
        return "jit(cache=False)"
    if config.exec_mode == "no_sink":
        return "exec_mode='no_sink' runs the graph itself"
    if lowered is None:
        return "no lowering information"
    if compiled.eager:
        return "nothing compiled: the function runs eagerly"
    if not guards.portable:
        bad = next((g for g in guards.guards if g.kind == "obj" and g.expected is None), None)
        return f"{bad.where() if bad else 'a guard'} cannot be checked by another process"
    return None


def _pipeline_of(level: str) -> tuple:
    from .backends.cache_key import pipeline_descriptions
    return pipeline_descriptions(level)


def _abstract(a: Any, kind: Any):
    """The argument as the front end sees it: an array with dynamic dimensions becomes its type."""
    if isinstance(kind, tuple) and isinstance(a, np.ndarray):
        from .graph.types import ArrayType
        from .transpiler.lower import AbstractArray
        return AbstractArray(ArrayType(a.dtype.name, _dispatch.dynamic_shape(a.shape, kind[1])))
    return a


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


def _recompile_limit() -> int:
    env = os.environ.get("GRAPHJIT_RECOMPILE_WARNING")
    if env:
        try:
            return int(env)
        except ValueError:
            pass
    return _ctx.get_context("recompile_warning")


def _warning_class():
    from .graph.diagnostics import GraphjitWarning
    return GraphjitWarning


def jit(function: Optional[Callable] = None, *, jit_config: Optional[JitConfig] = None,
        jit_level: Optional[str] = None, exec_mode: Optional[str] = None, fullgraph: Optional[bool] = None,
        cache: Optional[bool] = None, static_argnums=None, static_argnames=None, dynamic=None, **options):
    """Compile a function, method, `Cell.construct` or Cell instance into a static graph.

    Usable as `@jit`, `@jit(jit_config=JitConfig(jit_level="O2"))` and `jit(fn)`.

    Args:
        cache: False keeps compiled code in memory only (also: GRAPHJIT_CACHE=0).
        static_argnums, static_argnames: arguments that are compile-time values keyed by value
            (hashable), even arrays' neighbours such as NumPy scalars.
        dynamic: True, a parameter name or names, or {name: [axes]}: those dimensions are keyed
            by rank only and the code is generated shape-generic (no recompile when they change).
    """
    if options:
        unknown = ", ".join(sorted(options))
        raise TypeError(f"jit() got unexpected options: {unknown}")
    extra = dict(cache=cache, static_argnums=static_argnums, static_argnames=static_argnames, dynamic=dynamic)

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
