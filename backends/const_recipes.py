"""Recipes for compile-time objects: how a process that did not compile an entry rebuilds its `_k`.

The front end records, for each object it built while lowering (`Lowered.recipes`: const index →
(class, args, kwargs)), the call that made it. A compiled entry's `_k` is then written two ways:

    JSON, for the disk cache     {"module": "numpy"}, {"value": 3.0}, {"new": [class, args, kwargs]}
    Python, for `transpile`      samples.network.Dense(784, 512)  →  `_user.Dense(784, 512)`

Rebuilding calls the classes again with the same arguments, in the same order, as compiling did.
"""

from __future__ import annotations

import importlib
import types
from typing import Optional

from ..graph.guards import decode_value, encode_value
from ..graph.literals import format_literal, is_literal


def const_recipes(consts: list, lowered_consts: list, recipes: dict) -> list:
    """How another process rebuilds each `_k[i]`: import a module, decode a literal, or call a
    class again with the same arguments, in the same order (as compiling would, at the same moment:
    the first call). Raises TypeError for an object that cannot be rebuilt."""
    out: list = []
    built: dict = {}
    for k, obj in enumerate(consts):
        if k < len(lowered_consts) and k in recipes:
            cls, args, kwargs = recipes[k]
            out.append({"new": [encode_value(cls), encode_ref(list(args), built),
                                encode_ref(dict(kwargs), built)]})
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


def builds_objects(recipes: Optional[list]) -> bool:
    """Whether rebuilding these `_k` calls a class (such objects are not shared between entries)."""
    return any(isinstance(r, dict) and "new" in r for r in recipes or ())


def encode_ref(value, built: dict):
    """An argument of a recipe: a reference to an earlier `_k[i]`, or a portable value."""
    if id(value) in built:
        return {"const": built[id(value)]}
    if type(value) is list:
        return [encode_ref(v, built) for v in value]
    if type(value) is dict:
        return {"dict": {str(k): encode_ref(v, built) for k, v in value.items()}}
    if type(value) is tuple:
        return {"tuple": [encode_ref(v, built) for v in value]}
    return encode_value(value)


class StoredConsts:
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
                    built.append(importlib.import_module(body))
                elif tag == "value":
                    built.append(decode_value(body))
                else:
                    cls = decode_value(body[0])
                    args = decode_ref(body[1], built)
                    kwargs = decode_ref(body[2], built)
                    built.append(cls(*args, **kwargs))
            self.built = built
        return self.built


def decode_ref(data, built: list):
    """Inverse of `encode_ref`, with the `_k` built so far."""
    if isinstance(data, list):
        return [decode_ref(v, built) for v in data]
    if isinstance(data, dict) and len(data) == 1:
        (tag, body), = data.items()
        if tag == "const":
            return built[body]
        if tag == "dict":
            return {k: decode_ref(v, built) for k, v in body.items()}
        if tag == "tuple":
            return tuple(decode_ref(v, built) for v in body)
    return decode_value(data)


def recipe_code(recipe: tuple, built: dict, namespace: dict) -> str:
    """A recipe as Python text for the generated module: `_user.Dense(784, 512)`; `built` maps the
    ids of the objects written so far to their names (`_k_f[0]`), `namespace` is the user's file."""
    cls, args, kwargs = recipe

    def value(v):
        if id(v) in built:
            return built[id(v)]
        if isinstance(v, list):
            return "[" + ", ".join(value(x) for x in v) + "]"
        if isinstance(v, tuple):
            return "(" + ", ".join(value(x) for x in v) + ("," if len(v) == 1 else "") + ")"
        if is_literal(v):
            return format_literal(v)
        raise ValueError(f"cannot write {type(v).__name__} as code")

    if namespace.get(cls.__name__) is cls and cls.__module__ == "__graphjit_static__":
        callee = f"_user.{cls.__name__}"
    elif cls.__module__.startswith("graphjit"):
        callee = f"graphjit.{cls.__module__.split('.', 1)[1]}.{cls.__qualname__}" if "." in cls.__module__ \
            else f"graphjit.{cls.__qualname__}"
    else:
        callee = f"_user.{cls.__name__}"
    parts = [value(a) for a in args] + [f"{k}={value(v)}" for k, v in kwargs.items()]
    return f"{callee}({', '.join(parts)})"
