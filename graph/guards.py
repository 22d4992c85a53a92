"""Guards: the compile-time facts a compiled entry depends on, re-checked before it runs again.

While lowering, the front end reads compile-time objects: a global `model`, `self.has_bias`, the
sub-cells of a `SequentialCell`, the shape of a weight. Each read becomes a `Guard` — where the
value was found (an access `Path`), what kind of fact it is, and what was seen:

    obj      the object itself: identical (`is`) in this process; across processes, of the same
             kind (`("instance", "samples.network", "Network")`, `("function", mod, qualname)`, ...)
    value    a literal (int, float, str, bool, None, and tuples, lists, dicts and sets of them): equal,
             and of the same type (a dict's items in the same order)
    len      `len(...)` of a container the front end iterated over
    keys     the keys of a dict (the items of a set) the front end iterated over, in order
    array    a weight read at run time: its dtype and shape (not its values: weights are not guarded)
    hasattr  whether an attribute exists

`per_call` guards are checked on every call (a module's globals, a closure variable, a plain
object's attribute: anything that can change without graphjit noticing). The others hang off
`Cell`s, whose assignments bump the context epoch (see context.py), or off immutable containers
and objects built at compile time; they are checked again only after an epoch bump.

    guard failed: global 'model' was replaced
    guard failed: self.dense_relu_sequential[0].has_bias changed True → False
"""

from __future__ import annotations

import json
import math
import types
from dataclasses import dataclass, field
from typing import Any, Callable, Optional

import numpy as np

from .paths import MISSING, Path, resolve_shared

# Reads of attributes of these modules (and of classes and functions defined in them) are not
# guarded: `np.exp` is not going to be rebound under a running program.
TRUSTED_MODULES = frozenset({"numpy", "math", "cmath", "builtins", "operator", "functools", "itertools",
                             "collections", "typing", "graphjit", "abc", "types"})
# The classes of arrays a guard reads by dtype and shape: NumPy's, and `graphjit.Parameter` (a thin
# subclass naming a weight), which registers itself here when it is defined.
ARRAY_CLASSES = {np.ndarray}
WATCHED = "_graphjit_watched"  # nn/cell.py: a watched Cell bumps the epoch when it changes
_MISSING = MISSING   # no parent object (GuardRecorder.read), or a path that no longer resolves
VALUE_TYPES = (bool, int, float, complex, str, type(None))
MUTABLE_VALUES = (list, dict, set)   # literal containers that can change in place


@dataclass(frozen=True)
class Guard:
    path: Path
    kind: str          # obj | value | len | keys | array | hasattr
    expected: Any      # portable: a descriptor, a literal, a length, (dtype, shape), (name, bool)
    per_call: bool

    def where(self) -> str:
        return describe_path(self.path)

    def to_json(self) -> list:
        return [path_to_json(self.path), self.kind, encode_value(self.expected), self.per_call]

    @staticmethod
    def from_json(data: list) -> "Guard":
        path, kind, expected, per_call = data
        return Guard(path_from_json(path), kind, decode_value(expected), bool(per_call))


@dataclass
class GuardSet:
    """The guards of one compiled entry, bound to the live objects they saw in this process."""

    guards: list = field(default_factory=list)
    live: list = field(default_factory=list)   # per guard: the object seen (for `obj` guards)

    @property
    def portable(self) -> bool:
        """Can these guards be written to disk and checked in another process?"""
        return all(g.expected is not None or g.kind != "obj" for g in self.guards) and \
            all(g.path.root_kind in ("arg", "globals", "closure", "const", "module") for g in self.guards)

    def per_call(self) -> list:
        return [(g, live) for g, live in zip(self.guards, self.live) if g.per_call]

    def check(self, roots: Callable[[str, Any], Any]) -> Optional[str]:
        """None if every guard holds for these roots (identity for objects), else why not."""
        seen: dict = {}
        for guard, live in zip(self.guards, self.live):
            value = resolve_shared(guard.path, roots, seen)
            reason = _mismatch(guard, value, live, portable=False)
            if reason:
                return reason
        _watch(seen)
        return None

    def bind(self, roots: Callable[[str, Any], Any]) -> tuple[Optional[str], Optional["GuardSet"]]:
        """Check the portable expectations (another process's guards) and bind to the live objects."""
        seen: dict = {}
        live = []
        for guard in self.guards:
            value = resolve_shared(guard.path, roots, seen)
            reason = _mismatch(guard, value, None, portable=True)
            if reason:
                return reason, None
            live.append(value if guard.kind == "obj" else None)
        _watch(seen)
        return None, GuardSet(list(self.guards), live)

    def require_identity(self, path: Path, obj: Any) -> None:
        """At every call, `path` must hold this very object (see GuardRecorder.identity)."""
        self.guards.append(Guard(path, "obj", None, True))
        self.live.append(obj)

    def to_json(self) -> list:
        return [g.to_json() for g in self.guards]

    @staticmethod
    def from_json(data: list) -> "GuardSet":
        guards = [Guard.from_json(g) for g in data]
        return GuardSet(guards, [None] * len(guards))


class GuardRecorder:
    """Collects the compile-time reads of one lowering (deduplicated by path and kind)."""

    def __init__(self):
        self._guards: dict = {}
        # ids of the containers the compiled code itself changes and reads at call time: their
        # contents are not folded, so they are guarded by identity only
        self.read_at_call_time: set = set()

    def read(self, path: Optional[Path], value: Any, parent: Any = _MISSING) -> None:
        """`value` was read at `path`; `parent` is the object it was read from (if a step)."""
        if path is None or (path.root_kind in ("arg", "const") and not path.steps):
            return  # arguments are in the key; compile-time built objects are rebuilt
        per_call = _per_call(path, parent)
        if per_call is None:
            return
        if isinstance(value, (types.MethodType, types.BuiltinMethodType)) and parent is not _MISSING \
                and getattr(value, "__self__", None) is parent:
            # resolved through the parent (`np.add.outer`: a new bound method at each access), which
            # its own guard pins
            return
        if type(value) in ARRAY_CLASSES:
            self._add(Guard(path, "array", (value.dtype.str, value.shape), per_call), None)
        elif is_value(value) and id(value) not in self.read_at_call_time:  # a list, dict or set can change in place, unseen by any epoch: check it every call
            self._add(Guard(path, "value", _copy(value), per_call or _holds_mutable(value)), None)
        else:
            self._add(Guard(path, "obj", describe_object(value), per_call), value)

    def length(self, path: Optional[Path], obj: Any) -> None:
        """`len(obj)` (and so the number of items) was used at compile time."""
        if path is None or is_value(obj):
            return
        per_call = _per_call_container(path, obj)
        if per_call is None:
            return
        self._add(Guard(path, "len", len(obj), per_call), None)

    def keys(self, path: Optional[Path], obj: Any) -> None:
        """The keys of dict `obj` (the items of a set) were iterated at compile time, in this order."""
        keys = tuple(obj)
        if path is None or is_value(obj) or not is_value(keys):
            self.length(path, obj)   # a literal container is guarded whole where it was read
            return
        per_call = _per_call_container(path, obj)
        if per_call is not None:
            self._add(Guard(path, "keys", keys, True), None)

    def has(self, path: Optional[Path], name: str, result: bool, obj: Any) -> None:
        if path is None:
            return
        per_call = _per_call_container(path, obj)
        if per_call is None:
            return
        self._add(Guard(path, "hasattr", (name, bool(result)), per_call), None)

    def identity(self, path: Path, obj: Any) -> None:
        """At every call, `path` must hold this very object: a gradient's weights are found by identity
        at compile time, so an array put in a weight's place (or a weight put in another array's
        place) needs a new compile, where eager differentiation would see the change."""
        self._add(Guard(path, "obj", None, True), obj)

    def _add(self, guard: Guard, live: Any) -> None:
        key = (str(guard.path), guard.kind, guard.expected if guard.kind == "hasattr" else None)
        if key not in self._guards:
            self._guards[key] = (guard, live)

    def result(self) -> GuardSet:
        items = list(self._guards.values())
        # a literal guarded whole on every call covers the reads of its items (`CFG` covers `CFG['k']`)
        whole = {g.path for g, _ in items if g.kind == "value" and g.per_call}
        items = [(g, live) for g, live in items if not (g.kind != "obj" and _under(g.path, whole))]
        return GuardSet([g for g, _ in items], [live for _, live in items])


def _under(path: Path, whole: set) -> bool:
    """Is `path` strictly inside one of the paths in `whole`?"""
    return bool(whole) and any(Path(path.root_kind, path.root, path.steps[:k]) in whole
                               for k in range(len(path.steps)))


# --- classification ------------------------------------------------------------------------
def is_value(value: Any) -> bool:
    """A literal guarded by equality: numbers, strings, None, and tuples/lists of them."""
    t = type(value)
    if t in VALUE_TYPES or isinstance(value, np.dtype):
        return True
    if t in (tuple, list, set, frozenset):
        return len(value) <= 64 and all(is_value(v) for v in value)
    if t is dict:
        return len(value) <= 64 and all(is_value(k) and is_value(v) for k, v in value.items())
    return False


def _holds_mutable(value: Any) -> bool:
    """Is `value` (a literal) or something in it a list, dict or set, changeable in place?"""
    t = type(value)
    if t in MUTABLE_VALUES:
        return True
    return t in (tuple, frozenset) and any(_holds_mutable(v) for v in value)


def _copy(value: Any) -> Any:
    """A snapshot of a literal (its mutable containers copied)."""
    t = type(value)
    if not _holds_mutable(value):
        return value
    if t is list:
        return [_copy(v) for v in value]
    if t is dict:
        return {k: _copy(v) for k, v in value.items()}
    if t is tuple:
        return tuple(_copy(v) for v in value)
    return set(value) if t is set else value


def is_cell(obj: Any) -> bool:
    return getattr(type(obj), "__graphjit_cell__", False) and not isinstance(obj, type)


def _trusted(obj: Any) -> bool:
    name = obj.__name__ if isinstance(obj, types.ModuleType) else getattr(obj, "__module__", None)
    return isinstance(name, str) and name.partition(".")[0] in TRUSTED_MODULES


def _per_call(path: Path, parent: Any) -> Optional[bool]:
    """True: check on every call; False: after an epoch bump only; None: do not guard."""
    if path.root_kind == "const":
        # built at compile time, private to the entry; but a helper's closure cell can be rebound
        return path.steps[:1] == (("attr", "cell_contents"),)
    if not path.steps:
        return True   # a global, a closure variable, a module attribute
    return _per_call_container(path, parent)


def _per_call_container(path: Path, parent: Any) -> Optional[bool]:
    if path.root_kind == "const" or parent is _MISSING:
        return False
    if isinstance(parent, (types.ModuleType, type)):
        return None if _trusted(parent) else True
    if is_cell(parent) or isinstance(parent, (tuple, frozenset, str, bytes)):
        return False
    return True


def describe_object(obj: Any) -> Optional[tuple]:
    """What an object is, in terms another process can check (None: cannot be described)."""
    if isinstance(obj, types.ModuleType):
        return ("module", obj.__name__)
    if isinstance(obj, type):
        return _named("class", obj)
    if isinstance(obj, types.FunctionType):
        return _named("function", obj)
    if isinstance(obj, (types.BuiltinFunctionType, np.ufunc)):
        name = getattr(obj, "__qualname__", None) or getattr(obj, "__name__", "")
        return ("callable", getattr(obj, "__module__", None) or "numpy" * isinstance(obj, np.ufunc), name)
    if isinstance(obj, (types.MethodType, types.BuiltinMethodType)):
        return None
    cls = type(obj)
    if "<locals>" in cls.__qualname__:
        return None
    return ("instance", cls.__module__, cls.__qualname__)


def _named(kind: str, obj: Any) -> Optional[tuple]:
    module, qualname = getattr(obj, "__module__", None), getattr(obj, "__qualname__", None)
    if not isinstance(module, str) or not isinstance(qualname, str) or "<locals>" in qualname:
        return None
    return (kind, module, qualname)


# --- checking ------------------------------------------------------------------------------
def _watch(seen: dict) -> None:
    """Mark every Cell a guard passed through, so that changing it bumps the epoch."""
    for obj in seen.values():
        if is_cell(obj) and WATCHED not in obj.__dict__:
            object.__setattr__(obj, WATCHED, True)


def same_value(a: Any, b: Any) -> bool:
    if type(a) is not type(b):
        return False
    if isinstance(a, (tuple, list)):
        return len(a) == len(b) and all(same_value(x, y) for x, y in zip(a, b))
    if isinstance(a, dict):   # in order: iterating it gives its keys in that order
        return same_value(tuple(a), tuple(b)) and all(same_value(a[k], b[k]) for k in a)
    if isinstance(a, float) and math.isnan(a) and math.isnan(b):
        return True
    try:
        return bool(a == b)
    except Exception:
        return False


def _keys(value: Any) -> Optional[tuple]:
    return tuple(value) if isinstance(value, (dict, set, frozenset)) else None


def same_keys(value: Any, expected: tuple) -> bool:
    """Does dict `value` have these keys in this order (set `value` these items)?"""
    return same_value(_keys(value), expected)


def _mismatch(guard: Guard, value: Any, live: Any, portable: bool) -> Optional[str]:
    where = guard.where()
    kind = guard.kind
    if value is _MISSING:
        return f"guard failed: {where} no longer exists" if kind != "hasattr" else \
            f"guard failed: {where} no longer exists"
    if kind == "obj":
        if portable:
            found = describe_object(value)
            if guard.expected is None or found != guard.expected:
                return f"guard failed: {where} is {_show_descriptor(found)} (was {_show_descriptor(guard.expected)})"
            return None
        return None if value is live else f"guard failed: {where} was replaced"
    if kind == "value":
        return None if same_value(value, guard.expected) else \
            f"guard failed: {where} changed {guard.expected!r} → {value!r}"
    if kind == "len":
        try:
            n = len(value)
        except TypeError:
            n = None
        return None if n == guard.expected else f"guard failed: len({where}) changed {guard.expected} → {n}"
    if kind == "array":
        dtype, shape = guard.expected
        if isinstance(value, np.ndarray) and value.dtype.str == dtype and value.shape == tuple(shape):
            return None
        now = array_text(value.dtype.str, value.shape) if isinstance(value, np.ndarray) else type(value).__name__
        return f"guard failed: {where} changed {array_text(dtype, shape)} → {now}"
    if kind == "keys":
        return None if same_keys(value, tuple(guard.expected)) else \
            f"guard failed: the keys of {where} changed {tuple(guard.expected)!r} → {_keys(value)!r}"
    if kind == "hasattr":
        name, expected = guard.expected
        found = hasattr(value, name)
        return None if found == expected else \
            f"guard failed: hasattr({where}, {name!r}) changed {expected} → {found}"
    return f"guard failed: unknown guard kind {kind!r}"


def array_text(dtype: str, shape) -> str:
    from .types import array_type
    return str(array_type(np.dtype(dtype), tuple(shape)))


def _show_descriptor(d) -> str:
    if d is None:
        return "an object of unknown kind"
    kind = d[0]
    if kind == "module":
        return f"module {d[1]}"
    if kind == "instance":
        return f"a {d[2]}"
    return f"{kind} {d[1]}.{d[2]}" if len(d) > 2 else f"{kind} {d[1]}"


def describe_path(path: Path) -> str:
    """`global 'model'`, `self.dense.has_bias`, `closure variable 'w'`, `helpers.FACTOR`."""
    if path.root_kind == "globals" and not path.steps:
        return f"global {path.root!r}"
    if path.root_kind == "closure" and not path.steps:
        return f"closure variable {path.root!r}"
    if path.root_kind == "module":
        text = str(path.root)
    elif path.root_kind == "const":
        text = f"<object built at compile time #{path.root}>"
    else:
        text = str(path.root)
    for kind, key in path.steps:
        text += f".{key}" if kind == "attr" else f"[{key!r}]"
    return text


# --- portable (JSON) form --------------------------------------------------------------------
def path_to_json(path: Path) -> list:
    return [path.root_kind, path.root, [[k, encode_value(v)] for k, v in path.steps]]


def path_from_json(data: list) -> Path:
    kind, root, steps = data
    return Path(kind, root, tuple((k, decode_value(v)) for k, v in steps))


def encode_value(value: Any) -> Any:
    """A JSON-able form of a literal, a dtype, a NumPy scalar type, a class or a module reference.

    Raises TypeError for anything else.
    """
    if value is None or isinstance(value, (bool, str)):
        return value
    if isinstance(value, int) and type(value) is int:
        return value
    if type(value) is float:
        return value if math.isfinite(value) else {"float": repr(value)}
    if type(value) is complex:
        return {"complex": [encode_value(value.real), encode_value(value.imag)]}
    if type(value) is tuple:
        return {"tuple": [encode_value(v) for v in value]}
    if type(value) is list:
        return [encode_value(v) for v in value]
    if type(value) is dict and all(type(k) is str for k in value):
        return {"dict": {k: encode_value(v) for k, v in value.items()}}
    if type(value) is dict:
        return {"pairs": [[encode_value(k), encode_value(v)] for k, v in value.items()]}
    if type(value) in (set, frozenset):   # in a fixed order: string hashes differ from process to process
        items = [encode_value(v) for v in value]
        return {type(value).__name__: sorted(items, key=lambda item: json.dumps(item, sort_keys=True))}
    if isinstance(value, np.dtype):
        return {"dtype": value.str}
    if isinstance(value, np.generic):
        return {"scalar": [value.dtype.str, encode_value(value.item())]}
    if isinstance(value, type):
        named = _named("class", value)
        if named is None:
            raise TypeError(f"class {value!r} cannot be found by name")
        return {"class": [named[1], named[2]]}
    if isinstance(value, types.ModuleType):
        return {"module": value.__name__}
    if value is Ellipsis:
        return {"ellipsis": True}
    if type(value) is slice:
        return {"slice": [encode_value(value.start), encode_value(value.stop), encode_value(value.step)]}
    raise TypeError(f"{type(value).__name__} has no portable form")


def decode_value(data: Any) -> Any:
    if isinstance(data, list):
        return [decode_value(v) for v in data]
    if not isinstance(data, dict):
        return data
    (tag, body), = data.items()
    if tag == "float":
        return float(body)
    if tag == "complex":
        return complex(decode_value(body[0]), decode_value(body[1]))
    if tag == "tuple":
        return tuple(decode_value(v) for v in body)
    if tag == "dict":
        return {k: decode_value(v) for k, v in body.items()}
    if tag == "pairs":
        return {decode_value(k): decode_value(v) for k, v in body}
    if tag in ("set", "frozenset"):
        return (set if tag == "set" else frozenset)(decode_value(v) for v in body)
    if tag == "dtype":
        return np.dtype(body)
    if tag == "scalar":
        return np.dtype(body[0]).type(decode_value(body[1]))
    if tag == "class":
        return find_by_name(body[0], body[1])
    if tag == "module":
        import importlib
        return importlib.import_module(body)
    if tag == "ellipsis":
        return Ellipsis
    if tag == "slice":
        return slice(*(decode_value(v) for v in body))
    raise ValueError(f"unknown portable value tag {tag!r}")


def find_by_name(module: str, qualname: str) -> Any:
    """The object `module.qualname` (importing the module if needed)."""
    import importlib
    import sys
    obj = sys.modules.get(module) or importlib.import_module(module)
    for part in qualname.split("."):
        obj = getattr(obj, part)
    return obj
