"""Cache policy: which compiled entry serves a call, and where a missing one comes from.

Each jitted function has an `EntryCache`. A call's arguments and configuration give its memory key
(`signature_key`); the entries under that key are tried in turn, their guards re-checked on the
live objects (graph/guards.py). On a miss the entry comes from, in order:

    reuse     a variant compiled for another object of the same structure (another Cell instance)
    disk      an entry another process stored (backends/disk_cache.py; no front end runs)
    compile   the driver's `compile` callable (graphjit/compiler.py), then stored on disk if it can be

Counts of each (`stats`), the recompile log and the recompile warning are kept here too. The
in-memory fast path in front of all this is the generated `__call__` of backends/dispatch.py.
"""

from __future__ import annotations

import os
import threading
import time
import warnings
from dataclasses import dataclass, field
from typing import Any, Callable, Optional

import numpy as np

from .. import context as _ctx
from .. import log
from ..context import JitConfig
from ..graph.diagnostics import GraphjitWarning, user_stacklevel
from ..graph.guards import GuardSet
from ..graph.paths import Roots
from . import dispatch
from .const_recipes import StoredConsts, builds_objects, const_recipes
from .namespaces import is_foreign_array


def signature_key(args: tuple, kinds: Optional[list] = None) -> tuple:
    """What the compiled code depends on: dtypes and shapes of arrays, values of everything else.

    The in-memory projection of `backends.cache_key.cache_key` (which also names the function's
    source, the configuration and the versions: fixed for one JitFunction in one process).
    """
    kinds = kinds or [None] * len(args)
    return tuple(dispatch.arg_key(a, k) for a, k in zip(args, kinds))


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
        from .compile import synthetic_filename
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


def map_entry_error(exc: BaseException, entry: Entry) -> BaseException:
    """A run-time error of an entry's generated code, pointed at the user's line."""
    from .compile import map_error
    v = entry.variant
    return map_error(exc, v.filename, v.line_table, v.inlined)


class EntryCache:
    """The compiled entries of one jitted function, most recent last, and the policy that fills them.

    `fn` is the plain function, `names`/`kinds` its parameters (kind None, "static" or
    ("dynamic", dims)), `key_options` the jit options the disk key names (static_argnums,
    static_argnames, static, dynamic), `cache` whether entries go to disk. `on_new_entry` runs
    after each new entry (the jitted function regenerates its dispatcher).
    """

    def __init__(self, fn: Callable, names: list, kinds: list, key_options: dict, cache: bool,
                 on_new_entry: Callable[[], None], share_variants: bool = True):
        self.fn, self.names, self.kinds = fn, names, kinds
        self.share_variants = share_variants   # False: a graph transform made it for these objects only
        self.key_options, self.cache, self.on_new_entry = key_options, cache, on_new_entry
        self.table: dict[tuple, list] = {}
        self.order: list = []            # every entry, oldest first
        self.variants: dict[tuple, list] = {}
        self.lock = threading.RLock()
        self.hits = dispatch.new_counter()
        self.warned_recompiles = False
        self.stats = {"misses": 0, "compiles": 0, "disk_loads": 0, "reuses": 0, "recompiles": 0,
                      "disk_writes": 0, "compile_seconds": 0.0, "load_seconds": 0.0}

    def info(self) -> dict:
        """hits, misses, compiles, disk_loads, compile_seconds (total), entries and more."""
        from .compile import workspace_bytes
        return dict(self.stats, hits=dispatch.hit_count(self.hits), entries=len(self.order),
                    workspace_bytes=sum(workspace_bytes(entry.run) for entry in self.order))

    def roots(self, args: tuple, consts: Any) -> Roots:
        return Roots.of_function(self.fn, self.names, args, consts)

    def memory_key(self, args: tuple, config: JitConfig) -> tuple:
        level = config.jit_syntax_level or _ctx.get_context("jit_syntax_level")
        return (config.jit_level, config.exec_mode, level) + signature_key(args, self.kinds)

    # --- lookup ----------------------------------------------------------------------------
    def entry(self, args: tuple, config: JitConfig, compile: Callable[[tuple, JitConfig], CompiledEntry]) -> Entry:
        """The entry for these arguments: found (guards re-checked), reused, loaded or compiled."""
        key = self.memory_key(args, config)
        failure = None
        for entry in self.table.get(key, ()):
            reason = entry.guards.check(self.roots(args, entry.variant.consts))
            if reason is None:
                entry.epoch = _ctx.EPOCH[0]
                next(self.hits)
                return entry
            failure = failure or reason
            log.info("guards", "%s: %s", self.fn.__qualname__, reason)
        return self.miss(args, config, key, failure, compile)

    def miss(self, args: tuple, config: JitConfig, key: tuple, failure: Optional[str], compile: Callable) -> Entry:
        with self.lock:
            for entry in self.table.get(key, ()):  # another thread may have just made it
                if entry.guards.check(self.roots(args, entry.variant.consts)) is None:
                    entry.epoch = _ctx.EPOCH[0]
                    next(self.hits)
                    return entry
            log.refresh()
            self.stats["misses"] += 1
            reason = self.explain(args, key, failure)
            ckey, why = self.disk_key(args, config)
            store = None
            if self.cache and ckey is not None and config.exec_mode != "no_sink":
                from . import disk_cache
                store = disk_cache.current()
            skey = key[:3] + tuple(dispatch.structure_key(a, k) for a, k in zip(args, self.kinds))
            how = " (compiled code reused: same structure)"
            entry = self.reuse(skey, args, config, key)
            if entry is None and store is not None:
                how = " (loaded from disk)"
                entry = self.load(ckey, skey, store, args, config, key)
            if entry is None:
                how = ""
                entry = self.compile(compile(args, config), args, config, key, ckey, skey, store, why)
            first = not self.order
            self.table.setdefault(key, []).insert(0, entry)
            self.order.append(entry)
            self.on_new_entry()
            self.report(entry, reason, first, how)
            return entry

    def new_entry(self, variant: Variant, guards: GuardSet, args: tuple, config: JitConfig, key: tuple) -> Entry:
        keep = tuple(a for a in args if not isinstance(a, (np.ndarray, np.generic)) and not is_foreign_array(a))
        entry = Entry(variant, guards, key, config, [dispatch.describe_arg(a) for a in args], keep)
        entry.fast = dispatch.fast_spec(self.names, args, self.kinds, guards, self.roots(args, variant.consts))
        return entry

    def disk_key(self, args: tuple, config: JitConfig):
        """(the disk cache key, None), or (None, why this call has none)."""
        from .cache_key import Unportable, cache_key
        from .numba_kernels import kernels_on
        try:
            return cache_key(self.fn, self.names, args, jit_level=config.jit_level,
                             exec_mode=config.exec_mode, kernels=kernels_on(config),
                             syntax_level=config.jit_syntax_level or _ctx.get_context("jit_syntax_level"),
                             **self.key_options), None
        except Unportable as e:
            return None, str(e)

    # --- where a missing entry comes from ----------------------------------------------------
    def reuse(self, skey, args, config, key) -> Optional[Entry]:
        """An entry compiled for another object of the same structure (another instance of a Cell)."""
        from .cache_key import inlined_changed
        for variant in list(self.variants.get(skey, ())):
            if variant.recipes is None or builds_objects(variant.recipes):
                continue  # objects built at compile time are not shared between entries
            if inlined_changed(variant.inlined):  # a helper was edited (and its module reloaded)
                self.variants[skey].remove(variant)
                continue
            reason, bound = variant.guards.bind(self.roots(args, variant.consts))
            if reason is None:
                self.stats["reuses"] += 1
                return self.new_entry(variant, bound, args, config, key)
        return None

    def load(self, ckey, skey, store, args, config, key) -> Optional[Entry]:
        """An entry another process (or an earlier JitFunction) stored on disk: no front end."""
        from ..graph.spans import SourceSpan
        from .cache_key import inlined_changed
        from .compile import compile_source
        start = time.perf_counter()
        fn = self.fn
        name = fn.__qualname__
        for stored in store.load(ckey):
            stale = inlined_changed(stored.inlined)
            if stale:
                log.info("cache", "%s: stored entry %s is stale: %s", name, stored.path, stale)
                store.remove(stored.path)
                continue
            guards = GuardSet.from_json(stored.guards)
            consts = StoredConsts(stored.consts)
            roots = Roots.of_function(fn, self.names, args, consts)
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
                run = compile_source(stored.name, stored.source, fn.__globals__, roots.closure, built)
            except SyntaxError:
                continue
            table = {int(row[0]): SourceSpan(*row[1:]) for row in stored.line_table}
            variant = Variant(run, stored.source, stored.name, table, stored.inlined, guards, built,
                              stored.consts, None, stored.compile_seconds, "disk", stored.pipeline, stored.path)
            store.touch(stored)
            seconds = time.perf_counter() - start
            self.stats["disk_loads"] += 1
            self.stats["load_seconds"] += seconds
            self.variants.setdefault(skey, []).append(variant)
            log.info("cache", "%s: loaded from disk (%s) in %.2f ms", name, stored.path, seconds * 1e3)
            return self.new_entry(variant, bound, args, config, key)
        return None

    def compile(self, compiled: CompiledEntry, args, config, key, ckey, skey, store,
                unportable: Optional[str]) -> Entry:
        """An entry for what the driver just compiled; stored on disk when another process could use it."""
        from .cache_key import pipeline_descriptions
        self.stats["compiles"] += 1
        self.stats["compile_seconds"] += compiled.compile_seconds
        lowered = compiled.lowered
        guards = lowered.guards if lowered is not None else GuardSet()
        variant = Variant(compiled.run, compiled.source, compiled.name, compiled.line_table,
                          list(lowered.inlined) if lowered is not None else [], guards, compiled.consts,
                          None, compiled.graph, compiled.compile_seconds, "compiled",
                          pipeline_descriptions(config.jit_level))
        variant.passes = compiled.report
        entry = self.new_entry(variant, guards, args, config, key)
        guards.check(self.roots(args, variant.consts))  # marks the Cells it read as watched
        name = self.fn.__qualname__
        if compiled.report is not None:
            log.info("passes", "%s: %s, %d round(s): %s", name, config.jit_level, compiled.report.rounds,
                     ", ".join(f"{d} {t * 1e3:.2f} ms" for d, t in compiled.report.timings.items()) or "no passes")
        why_not = why_not_on_disk(config, guards, lowered, compiled, self.cache) or unportable
        if lowered is not None and guards.portable and self.share_variants:
            try:
                variant.recipes = const_recipes(compiled.consts, lowered.consts, lowered.recipes)
                self.variants.setdefault(skey, []).append(variant)
            except TypeError as e:
                why_not = why_not or str(e)
        if why_not is None and ckey is not None:
            if store is not None:
                self.store(store, ckey, variant, guards)
        elif why_not is not None and self.cache:
            log.info("cache", "%s: not stored on disk: %s", name, why_not)
        return entry

    def store(self, store, ckey, variant: Variant, guards: GuardSet) -> None:
        from .disk_cache import StoredEntry
        stored = StoredEntry(variant.name, variant.source,
                             [[n, s.file, s.line, s.col, s.end_line, s.end_col]
                              for n, s in sorted(variant.line_table.items())],
                             [list(i) for i in variant.inlined], guards.to_json(), variant.recipes,
                             list(variant.pipeline), variant.compile_seconds)
        path = store.store(ckey, stored)
        if path:
            self.stats["disk_writes"] += 1
            variant.path = path
            log.info("cache", "%s: stored %s", self.fn.__qualname__, path)

    # --- reporting -------------------------------------------------------------------------
    def explain(self, args: tuple, key: tuple, failure: Optional[str]) -> Optional[str]:
        """Why this call missed: what changed since the last entry (None for the first)."""
        if not self.order:
            return None
        if failure:
            return failure
        last = self.order[-1]
        parts = []
        for k, what in enumerate(("jit_level", "exec_mode", "jit_syntax_level")):
            if last.key[k] != key[k]:
                parts.append(f"{what} changed {last.key[k]} → {key[k]}")
        desc = [dispatch.describe_arg(a) for a in args]
        for name, old, new, kind in zip(self.names, last.desc, desc, self.kinds):
            if kind == "static":
                if old != new:
                    parts.append(f"static argument {name} changed")
                continue
            if isinstance(kind, tuple) and old[0] == new[0] == "array" and old[1] == new[1] and \
                    len(old[2]) == len(new[2]):
                fixed = [ax for ax, (a, b) in enumerate(zip(old[2], new[2])) if a != b and
                         dispatch.dynamic_shape(old[2], kind[1])[ax] is not None]
                if fixed:
                    parts.append(f"{name}.shape changed {old[2]} → {new[2]} (axes {fixed} are not dynamic)")
                continue
            parts += dispatch.diff_arg(name, old, new)
        return "; ".join(parts) or "another combination of arguments (see cache_info)"

    def report(self, entry: Entry, reason: Optional[str], first: bool, how: str = "") -> None:
        name = self.fn.__qualname__
        if first:
            log.info("cache", "%s: first entry%s", name, how or " (compiled)")
            return
        self.stats["recompiles"] += 1
        log.info("recompiles", "recompiling %s: %s%s", name, reason, how)
        limit = recompile_limit()
        if limit and self.stats["recompiles"] >= limit and not self.warned_recompiles:
            self.warned_recompiles = True
            warnings.warn(self.recompile_advice(reason), GraphjitWarning, stacklevel=user_stacklevel())

    def recompile_advice(self, reason: Optional[str]) -> str:
        name = self.fn.__qualname__
        varying: dict = {}
        values = set()
        for k, pname in enumerate(self.names):
            descs = [e.desc[k] for e in self.order if k < len(e.desc)]
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


def why_not_on_disk(config, guards: GuardSet, lowered, compiled, cache: bool) -> Optional[str]:
    """Why a compiled entry cannot be stored for another process (None: it can)."""
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


def recompile_limit() -> int:
    """After how many recompiles a function gets the warning (GRAPHJIT_RECOMPILE_WARNING, else the context)."""
    env = os.environ.get("GRAPHJIT_RECOMPILE_WARNING")
    if env:
        try:
            return int(env)
        except ValueError:
            pass
    return _ctx.get_context("recompile_warning")
