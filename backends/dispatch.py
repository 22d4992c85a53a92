"""The in-memory table's fast path: a generated `__call__` per jitted function.

A jitted function's `__call__` is Python source generated from its signature and its most recent
entries, so that a cache hit costs a handful of attribute reads and comparisons (no `*args`
packing, no hashing of dtypes, no loop over guards):

    def __call__(_gj_self, x):
        if _gj_env(_gj_DK) is None:                  # GRAPHJIT_DISABLE unset
            _gj_ep = _gj_epoch[0]
            try:
                _gj_ok = _gj_e0.epoch == _gj_ep and x.__class__ is _gj_nd and x.dtype is _gj_c0_0 \\
                    and x.shape == _gj_c0_1 and _gj_g.get('np', _gj_M) is _gj_c0_2
            except Exception:
                _gj_ok = False
            if _gj_ok:
                _gj_next(_gj_hits)
                try:
                    return _gj_r0(x)
                except Exception as _gj_x:
                    raise _gj_map(_gj_x, _gj_e0)
        return _gj_self._slow((x,))

Everything else (other signatures, an epoch bump, a guard that needs more than an identity test)
goes to the slow path, which looks the call up in the table and checks every guard.

`arg_key` (the table's key for one argument) and `arg_condition` (the inline test for it) are
written side by side: they must agree on what makes two calls the same.
"""

from __future__ import annotations

import inspect
import itertools
import keyword
from typing import Any, Callable, Optional

import numpy as np

from .. import context as _ctx
from ..graph.guards import ARRAY_CLASSES, VALUE_TYPES, Guard, same_keys, same_value
from ..graph.paths import default_slot
from .namespaces import array_key, is_foreign_array, known_shape, numpy_dtype

_ND = np.ndarray
_LITERALS = (int, float, bool, str, type(None), complex)
MAX_INLINE = 4
PREFIX = "_gj_"


# --- one argument ------------------------------------------------------------------------------
def dynamic_shape(shape: tuple, dims) -> tuple:
    n = len(shape)
    return tuple(None if dims is True or k in dims or k - n in dims else d for k, d in enumerate(shape))


def arg_key(a: Any, kind: Any = None):
    """The table key of one argument. `kind`: None, "static", or ("dynamic", True | dims)."""
    t = type(a)
    if kind == "static":
        try:
            hash(a)
        except TypeError:
            raise TypeError(f"a static argument must be hashable, not {t.__name__}") from None
        return ("static", t, a)
    if t is _ND:
        return (a.dtype, a.shape if kind is None else dynamic_shape(a.shape, kind[1]))
    if t in _LITERALS:
        return (t, a)
    if isinstance(a, _ND):
        return (t, a.dtype, a.shape if kind is None else dynamic_shape(a.shape, kind[1]))
    if isinstance(a, np.generic):
        return ("scalar", t)
    if t is tuple or t is list:
        return (t, tuple(arg_key(v) for v in a))
    if t is dict:
        return (dict, tuple((k, arg_key(v)) for k, v in a.items()))
    if t is set or t is frozenset:   # by value: a set changed in place is another key
        return (t, tuple(arg_key(v) for v in a))
    if is_foreign_array(a):   # a Dask, CuPy, array-API array: keyed as an array (backends/namespaces.py)
        key = array_key(a)
        return key if kind is None else key[:3] + (dynamic_shape(key[3], kind[1]),)
    return ("object", id(a))


def arg_condition(expr: str, a: Any, kind: Any, bind: Callable[[Any], str]) -> Optional[str]:
    """Python text true exactly when an argument spelled `expr` has the same key as `a`."""
    t = type(a)
    if kind == "static":
        return f"{expr}.__class__ is {bind(t)} and {expr} == {bind(a)}" if a is not None else f"{expr} is None"
    if isinstance(a, _ND):
        parts = [f"{expr}.__class__ is {bind(t)}", f"{expr}.dtype is {bind(a.dtype)}"]
        if kind is None:
            parts.append(f"{expr}.shape == {bind(a.shape)}")
        else:
            shape = dynamic_shape(a.shape, kind[1])
            parts.append(f"{expr}.ndim == {a.ndim}")
            parts += [f"{expr}.shape[{k}] == {d}" for k, d in enumerate(shape) if d is not None]
        return " and ".join(parts)
    if a is None or t is bool:
        return f"{expr} is {a!r}"
    if t in _LITERALS:
        return f"{expr}.__class__ is {bind(t)} and {expr} == {bind(a)}"
    if isinstance(a, np.generic):
        return f"{expr}.__class__ is {bind(t)}"
    if t is tuple or t is list:
        parts = [f"{expr}.__class__ is {t.__name__}", f"{PREFIX}len({expr}) == {len(a)}"]
        for k, v in enumerate(a):
            inner = arg_condition(f"{expr}[{k}]", v, None, bind)
            if inner is None:
                return None
            parts.append(f"({inner})")
        return " and ".join(parts)
    if t is dict or t is set or t is frozenset:
        return None
    if is_foreign_array(a):
        shape = known_shape(a.shape)
        if None in shape:   # Dask's unknown dimensions: the slow path keys them
            return None
        if kind is not None:
            shape = dynamic_shape(shape, kind[1])
            return " and ".join([f"{expr}.__class__ is {bind(t)}", f"{expr}.dtype == {bind(a.dtype)}",
                                 f"{expr}.ndim == {len(shape)}"] +
                                [f"{expr}.shape[{k}] == {d}" for k, d in enumerate(shape) if d is not None])
        return f"{expr}.__class__ is {bind(t)} and {expr}.dtype == {bind(a.dtype)} and {expr}.shape == {bind(shape)}"
    return f"{expr} is {bind(a)}"


def describe_arg(a: Any) -> tuple:
    """What the recompile report compares between two calls."""
    t = type(a)
    if isinstance(a, _ND):
        return ("array", a.dtype, a.shape, t)
    if t in _LITERALS:
        return ("value", t, a)
    if isinstance(a, np.generic):
        return ("scalar", t)
    if t is tuple or t is list:
        return ("seq", t, tuple(describe_arg(v) for v in a))
    if is_foreign_array(a):
        return ("array", numpy_dtype(a.dtype), known_shape(a.shape), t)
    return ("object", t, id(a))


def structure_key(a: Any, kind: Any = None):
    """`arg_key` with objects known by their type: entries compiled for one object may serve
    another of the same type once its guards (checked structurally) pass."""
    t = type(a)
    if kind != "static" and t not in _LITERALS and not isinstance(a, (_ND, np.generic)):
        if t is tuple or t is list:
            return (t, tuple(structure_key(v) for v in a))
        if t not in (dict, set, frozenset) and not is_foreign_array(a):   # containers: by their contents
            return ("object-of-type", t)
    return arg_key(a, kind)


def diff_arg(name: str, old: tuple, new: tuple) -> list:
    """`x.shape changed (64, 784) → (32, 784)` and the like; [] if nothing differs."""
    if old == new:
        return []
    if old[0] == "array" and new[0] == "array":
        out = []
        if old[1] != new[1]:
            out.append(f"{name}.dtype changed {old[1]} → {new[1]}")
        if old[2] != new[2]:
            out.append(f"{name}.shape changed {old[2]} → {new[2]}")
        if old[3] is not new[3]:
            out.append(f"{name} changed type {old[3].__name__} → {new[3].__name__}")
        return out
    if old[0] == "value" and new[0] == "value":
        return [f"{name} changed {old[2]!r} → {new[2]!r}"]
    if old[0] == "object" and new[0] == "object" and old[1] is new[1]:
        return [f"{name} is a different {old[1].__name__} object"]
    if old[0] == "seq" and new[0] == "seq" and old[1] is new[1] and len(old[2]) == len(new[2]):
        out = []
        for k, (o, n) in enumerate(zip(old[2], new[2])):
            out += diff_arg(f"{name}[{k}]", o, n)
        return out
    return [f"{name} changed {_kind_text(old)} → {_kind_text(new)}"]


def _kind_text(d: tuple) -> str:
    if d[0] == "array":
        return f"array {d[1]} {d[2]}"
    if d[0] == "value":
        return repr(d[2])
    if d[0] == "scalar":
        return d[1].__name__
    return d[1].__name__


# --- guards checked on every call -----------------------------------------------------------
def path_expr(guard: Guard, arg_names: set, roots: Callable[[str, Any], Any], bind: Callable[[Any], str]) \
        -> Optional[str]:
    path = guard.path
    kind, root = path.root_kind, path.root
    if kind == "arg":
        if root not in arg_names:
            return None
        text = root
    elif kind == "globals":
        text = f"{PREFIX}g.get({root!r}, {PREFIX}M)"
    elif kind == "closure":
        text = f"{bind(roots('closure_cell', root))}.cell_contents"
    elif kind == "module":
        text = bind(roots("module", root))
    elif kind == "const":
        text = bind(roots("const", root))   # an object built at compile time (a helper's closure cell)
    else:
        return None
    for step, key in path.steps:
        if step == "attr":
            text += f".{key}" if key.isidentifier() and not keyword.iskeyword(key) else \
                f"{PREFIX}getattr({text}, {key!r})"
        else:
            text += f"[{key!r}]"
    return text


def guard_condition(guard: Guard, live: Any, arg_names: set, roots, bind) -> Optional[str]:
    expr = path_expr(guard, arg_names, roots, bind)
    if expr is None:
        return None
    v = f"{PREFIX}v"
    if guard.kind == "obj":
        return f"{expr} is {bind(live)}"
    if guard.kind == "value":
        e = guard.expected
        if e is None or type(e) is bool:
            return f"{expr} is {e!r}"
        # mutable (never trust identity) and equal is not enough (`[2] == [2.0]`): equal, in order
        # (iterating a dict gives its keys in order), each item of the same type
        if type(e) in (list, tuple) and all(type(x) in VALUE_TYPES for x in e):
            same = f"{v} == {bind(e)} and [*map({bind(type)}, {v})] == {bind([type(x) for x in e])}"
            if type(e) is tuple:   # immutable: the very tuple seen needs no more
                return f"(({v} := {expr}) is {bind(e)} or ({v}.__class__ is tuple and {same}))"
            return f"(({v} := {expr}).__class__ is list and {same})"
        if type(e) is dict and all(type(x) in VALUE_TYPES for x in (*e, *e.values())):
            kinds = [type(x) for x in (*e, *e.values())]
            return (f"(({v} := {expr}).__class__ is dict and [*{v}.items()] == {bind(list(e.items()))} "
                    f"and [*map({bind(type)}, [*{v}, *{v}.values()])] == {bind(kinds)})")
        if type(e) in (list, tuple, dict, set):   # nested: compared as the slow path does
            same = f"{bind(same_value)}({v}, {bind(e)})"
            return f"(({v} := {expr}) is {bind(e)} or {same})" if type(e) is tuple else f"({v} := {expr}, {same})[1]"
        return f"(({v} := {expr}) is {bind(e)} or ({v}.__class__ is {bind(type(e))} and {v} == {bind(e)}))"
    if guard.kind == "len":
        return f"{PREFIX}len({expr}) == {guard.expected}"
    if guard.kind == "keys":
        return f"{bind(same_keys)}({expr}, {bind(tuple(guard.expected))})"
    if guard.kind == "array":
        dtype, shape = guard.expected
        return (f"({v} := {expr}).__class__ in {bind(ARRAY_CLASSES)} and {v}.dtype is {bind(np.dtype(dtype))} "
                f"and {v}.shape == {bind(tuple(shape))}")
    if guard.kind == "hasattr":
        name, expected = guard.expected
        return f"{PREFIX}hasattr({expr}, {name!r}) is {expected!r}"
    return None


# --- the generated __call__ -------------------------------------------------------------------
class FastSpec:
    """How to recognise one entry inline: conditions on the arguments and per-call guards."""

    __slots__ = ("conditions", "values")

    def __init__(self, conditions: Optional[list], values: list):
        self.conditions = conditions   # None: this entry is reached through the slow path only
        self.values = values           # the objects the conditions refer to, in order


def fast_spec(arg_names: list, args: tuple, kinds: list, guards, roots) -> FastSpec:
    values: list = []

    def bind(obj):
        values.append(obj)
        return f"{PREFIX}c{{E}}_{len(values) - 1}"

    conditions = []
    for name, a, kind in zip(arg_names, args, kinds):
        cond = arg_condition(name, a, kind, bind)
        if cond is None:
            return FastSpec(None, [])
        conditions.append(cond)
    names = set(arg_names)
    for guard, live in guards.per_call():
        cond = guard_condition(guard, live, names, roots, bind)
        if cond is None:
            return FastSpec(None, [])
        conditions.append(cond)
    return FastSpec(conditions, values)


def signature_source(sig: inspect.Signature, namespace: dict) -> tuple[str, str]:
    """(parameter list, argument tuple) reproducing `sig`; defaults are bound in `namespace`."""
    params, call = [], []
    saw_star = False
    posonly_done = False
    kinds = [p.kind for p in sig.parameters.values()]
    prologue = []
    namespace[f"{PREFIX}D"] = _OMITTED
    namespace[f"{PREFIX}dflt"] = live_default
    for k, p in enumerate(sig.parameters.values()):
        name = p.name
        if name.startswith(PREFIX):
            raise ValueError("reserved parameter name")
        default = ""
        if p.default is not inspect.Parameter.empty:
            # defaults are data: read from the function at each call, as Python does
            default = f"={PREFIX}D"
            prologue.append(f"    if {name} is {PREFIX}D:\n        {name} = {PREFIX}dflt({PREFIX}fn, {name!r})")
        if p.kind is inspect.Parameter.VAR_POSITIONAL:
            params.append(f"*{name}")
            saw_star = True
        elif p.kind is inspect.Parameter.VAR_KEYWORD:
            params.append(f"**{name}")
        elif p.kind is inspect.Parameter.KEYWORD_ONLY:
            if not saw_star:
                params.append("*")
                saw_star = True
            params.append(name + default)
        else:
            params.append(name + default)
        if p.kind is inspect.Parameter.POSITIONAL_ONLY and not posonly_done and \
                (k + 1 == len(kinds) or kinds[k + 1] is not inspect.Parameter.POSITIONAL_ONLY):
            params.append("/")
            posonly_done = True
        call.append(name)
    args = "(" + ", ".join(call) + ("," if len(call) == 1 else "") + ")"
    return ", ".join(params), args, prologue


def call_arguments(sig: inspect.Signature, args) -> tuple[list, dict]:
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


class _Omitted:
    def __repr__(self) -> str:
        return "<omitted>"


_OMITTED = _Omitted()


def live_default(fn, name: str) -> Any:
    """The default of parameter `name` as `fn` holds it now (`f.__defaults__ = ...` takes effect)."""
    slot = default_slot(fn, name)
    if slot is None:
        raise TypeError(f"{fn.__qualname__}() missing 1 required argument: '{name}'")
    return getattr(fn, slot[0])[slot[1]]


def build_call(sig: inspect.Signature, entries: list, globals_dict: dict, map_error: Callable,
               hits, fn: Callable = None) -> Callable:
    """The `__call__` for a jitted function with these (most recent first) entries inlined."""
    ns: dict[str, Any] = {
        f"{PREFIX}env": _ctx.ENV_GET, f"{PREFIX}DK": _ctx.DISABLE_KEY, f"{PREFIX}epoch": _ctx.EPOCH,
        f"{PREFIX}nd": _ND, f"{PREFIX}M": object(), f"{PREFIX}g": globals_dict, f"{PREFIX}next": next,
        f"{PREFIX}hits": hits, f"{PREFIX}map": map_error, f"{PREFIX}len": len,
        f"{PREFIX}hasattr": hasattr, f"{PREFIX}getattr": getattr,
    }
    ns[f"{PREFIX}fn"] = fn
    params, call, prologue = signature_source(sig, ns)
    if prologue and fn is None:
        raise ValueError("defaults need the function that holds them")
    lines = [f"def __call__({PREFIX}self{', ' if params else ''}{params}):", *prologue,
             f"    if {PREFIX}env({PREFIX}DK) is None:",
             f"        {PREFIX}ep = {PREFIX}epoch[0]"]
    inlined = 0
    for entry in entries:
        spec = entry.fast
        if spec is None or spec.conditions is None or inlined >= MAX_INLINE:
            continue
        e = inlined
        inlined += 1
        ns[f"{PREFIX}e{e}"] = entry
        ns[f"{PREFIX}r{e}"] = entry.run
        for k, value in enumerate(spec.values):
            ns[f"{PREFIX}c{e}_{k}"] = value
        cond = " and ".join([f"{PREFIX}e{e}.epoch == {PREFIX}ep"] + spec.conditions).replace("{E}", str(e))
        lines += [
            "        try:",
            f"            {PREFIX}ok = {cond}",
            "        except Exception:",
            f"            {PREFIX}ok = False",
            f"        if {PREFIX}ok:",
            f"            {PREFIX}next({PREFIX}hits)",
            "            try:",
            f"                return {PREFIX}r{e}{call if call != '()' else '()'}",
            f"            except Exception as {PREFIX}x:",
            f"                raise {PREFIX}map({PREFIX}x, {PREFIX}e{e})",
        ]
    lines.append(f"    return {PREFIX}self._slow({call})")
    source = "\n".join(lines) + "\n"
    code = compile(source, "<graphjit dispatcher>", "exec")
    exec(code, ns)
    fn = ns["__call__"]
    fn.__graphjit_source__ = source
    return fn


def hit_count(counter) -> int:
    """The current value of an `itertools.count` without advancing it."""
    text = repr(counter)
    return int(text[text.index("(") + 1:text.rindex(")")].split(",")[0])


def new_counter():
    return itertools.count()
