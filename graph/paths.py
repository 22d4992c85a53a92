"""Access paths: how a graph parameter (a weight) is found at each call.

A path is text such as `self.layers[0].weight`, `globals['model'].fc.bias`,
`closure['net'].w`, `const[0].weight` or `bound['fc_weight']`: a root (an argument by name, a
global of the function's module, a closure variable, an object the compiler built, or a value
stored with an exported graph) followed by attribute and item steps with literal keys (an attribute
that is not a name, set with `setattr(self, "layer-1", ...)`, is spelled `getattr(self, 'layer-1')`).
Paths are read with `ast`, never evaluated as code.

`Roots` is the one map from a root to its object, used by everything that follows a path at run
time: the cache's guard checks, the dispatcher, the interpreter, export and load. (The emitter and
the dispatcher also spell paths as Python text; they name the same roots.) Where a parameter's
default lives (`default_slot`) is here too: defaults are read at call time, like roots.
"""

from __future__ import annotations

import ast
import keyword
import sys
from dataclasses import dataclass
from typing import Any, Callable, Optional, Tuple, Union

Step = Tuple[str, Union[str, int, Any]]  # ("attr", name) | ("item", literal key)
MISSING = object()   # what `resolve_shared` finds where a root or a step does not exist


@dataclass(frozen=True)
class Path:
    """A root and the attribute and item steps taken from it (see the module docstring)."""

    root_kind: str      # arg | globals | closure | const | bound
    root: Union[str, int]
    steps: Tuple[Step, ...] = ()

    def attr(self, name: str) -> "Path":
        return Path(self.root_kind, self.root, self.steps + (("attr", name),))

    def item(self, key: Any) -> "Path":
        return Path(self.root_kind, self.root, self.steps + (("item", key),))

    def __str__(self) -> str:
        return self.to_python(lambda kind, root: root if kind == "arg" else f"{kind}[{root!r}]")

    def to_python(self, root_expr: Callable[[str, Any], str]) -> str:
        text = root_expr(self.root_kind, self.root)
        for kind, key in self.steps:
            if kind == "attr":   # `setattr(self, "layer-1", ...)`: not a name, read with getattr
                text = f"{text}.{key}" if is_name(key) else f"getattr({text}, {key!r})"
            else:
                text += f"[{key!r}]"
        return text

    def flat_name(self) -> str:
        """`layers_0_weight`: a readable variable name for the value at this path."""
        parts = [str(k) for _, k in self.steps] or [str(self.root)]
        name = "_".join(parts)
        return "".join(ch if ch.isalnum() or ch == "_" else "_" for ch in name).strip("_") or "param"

    def resolve(self, roots: Callable[[str, Any], Any]) -> Any:
        """The object at this path now; raises what the failing root or step raises."""
        value = roots(self.root_kind, self.root)
        for step in self.steps:
            value = follow(value, step)
        return value


def follow(value: Any, step: Step) -> Any:
    """One step of a path: an attribute or an item."""
    kind, key = step
    return getattr(value, key) if kind == "attr" else value[key]


def resolve_shared(path: Path, roots: Callable[[str, Any], Any], seen: dict) -> Any:
    """`path.resolve(roots)`, or MISSING where it fails, reusing the prefixes in `seen` (many guards
    of one entry start with the same steps; each object is read once per check)."""
    key: tuple = (path.root_kind, path.root)
    if key in seen:
        value = seen[key]
    else:
        try:
            value = roots(path.root_kind, path.root)
        except (KeyError, ValueError, IndexError, AttributeError, LookupError):
            value = MISSING
        seen[key] = value
    for step in path.steps:
        key = key + (step,)
        if key in seen:
            value = seen[key]
            continue
        if value is not MISSING:
            try:
                value = follow(value, step)
            except Exception:
                value = MISSING
        seen[key] = value
    return value


class Roots:
    """The objects the roots of paths name, for one call of one function:

        arg           an argument, by parameter name        globals  a global of the function's module
        closure       a closure variable's value            closure_cell  the cell itself
        const         `_k[i]`, an object the compiler built  module   a module, by name (`sys.modules`)
        bound         a value stored with an exported graph

    Call it as `roots(kind, name)`; a root it does not hold raises KeyError.
    """

    __slots__ = ("args", "globals", "closure", "consts", "bound")

    def __init__(self, args: Optional[dict] = None, globals_dict: Optional[dict] = None,
                 closure: Optional[dict] = None, consts: Any = (), bound: Optional[dict] = None):
        self.args = args if args is not None else {}
        self.globals = globals_dict if globals_dict is not None else {}
        self.closure = closure if closure is not None else {}
        self.consts = consts
        self.bound = bound if bound is not None else {}

    @classmethod
    def of_function(cls, fn: Any, names: list, args: tuple, consts: Any = ()) -> "Roots":
        """The roots of a call of `fn` with `args` (one per name in `names`)."""
        return cls(dict(zip(names, args)), getattr(fn, "__globals__", {}), closure_of(fn), consts)

    def with_args(self, args: dict) -> "Roots":
        """These roots with other arguments (one call of a compiled graph)."""
        return Roots(args, self.globals, self.closure, self.consts, self.bound)

    def __call__(self, kind: str, name: Any) -> Any:
        if kind == "arg":
            return self.args[name]
        if kind == "globals":
            return self.globals[name]
        if kind == "closure":
            return self.closure[name].cell_contents
        if kind == "closure_cell":
            return self.closure[name]
        if kind == "const":
            return self.consts[name]
        if kind == "module":
            return sys.modules[name]
        if kind == "bound":
            return self.bound[name]
        raise KeyError(kind)


def closure_of(fn: Any) -> dict:
    """The closure roots of a function: free-variable name → cell ({} for anything else)."""
    code = getattr(fn, "__code__", None)
    cells = getattr(fn, "__closure__", None) or ()
    return dict(zip(code.co_freevars, cells)) if code is not None else {}


def parse_path(text: str) -> Path:
    """Inverse of `str(path)`; raises ValueError on anything that is not a plain access path."""
    try:
        node = ast.parse(text.strip(), mode="eval").body
    except SyntaxError as e:
        raise ValueError(f"bad access path {text!r}") from e
    steps: list[Step] = []
    while True:
        if isinstance(node, ast.Attribute):
            steps.append(("attr", node.attr))
            node = node.value
        elif isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Constant):
            if isinstance(node.value, ast.Name) and node.value.id in ("globals", "closure", "const", "bound"):
                return Path(node.value.id, node.slice.value, tuple(reversed(steps)))
            steps.append(("item", node.slice.value))
            node = node.value
        elif isinstance(node, ast.Name):
            return Path("arg", node.id, tuple(reversed(steps)))
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "getattr" and \
                len(node.args) == 2 and not node.keywords and isinstance(node.args[1], ast.Constant) and \
                isinstance(node.args[1].value, str):
            steps.append(("attr", node.args[1].value))
            node = node.args[0]
        else:
            raise ValueError(f"bad access path {text!r}")


def is_name(text: str) -> bool:
    """Whether `text` can be written as `obj.text` (an identifier, not a keyword)."""
    return text.isidentifier() and not keyword.iskeyword(text)


def default_slot(fn: Any, name: str) -> Union[Tuple[str, Union[int, str]], None]:
    """Where `fn` holds the default of parameter `name` now: `("__defaults__", k)`,
    `("__kwdefaults__", name)`, or None when it has none. Defaults are data the caller may replace
    (`f.__defaults__ = ...`), so the dispatcher and the front end both find them here, at call time.
    """
    code = fn.__code__ if hasattr(fn, "__code__") else fn.__func__.__code__
    if name in (getattr(fn, "__kwdefaults__", None) or {}):
        return "__kwdefaults__", name
    positional = list(code.co_varnames[:code.co_argcount])
    if hasattr(fn, "__self__"):   # a bound method: `self` is not a parameter of the call
        positional = positional[1:]
    defaults = getattr(fn, "__defaults__", None) or ()
    k = len(defaults) - (len(positional) - positional.index(name)) if name in positional else -1
    return ("__defaults__", k) if k >= 0 else None
