"""Access paths: how a graph parameter (a weight) is found at each call.

A path is text such as `self.layers[0].weight`, `globals['model'].fc.bias`,
`closure['net'].w`, `const[0].weight` or `bound['fc_weight']`: a root (an argument by name, a
global of the function's module, a closure variable, an object the compiler built, or a value
stored with an exported graph) followed by attribute and item steps with literal keys. Paths are
read with `ast`, never evaluated as code.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from typing import Any, Callable, Tuple, Union

Step = Tuple[str, Union[str, int, Any]]  # ("attr", name) | ("item", literal key)


@dataclass(frozen=True)
class Path:
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
            text += f".{key}" if kind == "attr" else f"[{key!r}]"
        return text

    def flat_name(self) -> str:
        """`layers_0_weight`: a readable variable name for the value at this path."""
        parts = [str(k) for _, k in self.steps] or [str(self.root)]
        name = "_".join(parts)
        return "".join(ch if ch.isalnum() or ch == "_" else "_" for ch in name).strip("_") or "param"

    def resolve(self, roots: Callable[[str, Any], Any]) -> Any:
        value = roots(self.root_kind, self.root)
        for kind, key in self.steps:
            value = getattr(value, key) if kind == "attr" else value[key]
        return value


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
        else:
            raise ValueError(f"bad access path {text!r}")


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
