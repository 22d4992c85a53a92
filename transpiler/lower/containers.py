"""Compile-time lists and dicts across run-time control flow: snapshots, restores and comparisons."""

from __future__ import annotations

from ..values import Seq, Static, is_static, static_value

# --- compile-time lists and dicts across run-time control flow ----------------------------------
# A list display or a dict built in the function is a compile-time structure (`Seq`, a `Static`
# dict) whose items may be graph values; its methods change it while lowering. Where control flow
# is decided at run time, lowering must not let one branch's (or one loop body's) changes leak.

def containers_in(env: dict) -> list:
    """The compile-time lists and dicts reachable from the names in `env` (each once)."""
    out, seen = [], set()

    def walk(value):
        if id(value) in seen:
            return
        if isinstance(value, Seq):
            seen.add(id(value))
            if value.kind == "list":
                out.append(value)
            for item in value.items:
                walk(item)
        elif isinstance(value, Static) and value.path is None and isinstance(value.value, dict):
            seen.add(id(value))
            out.append(value)
            for item in value.value.values():
                walk(item)

    for v in env.values():
        walk(v)
    return out


def items_of(obj):
    return list(obj.items) if isinstance(obj, Seq) else dict(obj.value)


def snapshot(containers: list) -> list:
    return [(obj, items_of(obj)) for obj in containers]


def restore(saved: list) -> None:
    for obj, items in saved:
        if isinstance(obj, Seq):
            obj.items[:] = items
        else:
            obj.value.clear()
            obj.value.update(items)


def same_items(a, b) -> bool:
    if isinstance(a, dict):
        return list(a) == list(b) and all(a[k] is b[k] for k in a)
    return len(a) == len(b) and all(x is y for x, y in zip(a, b))


def same_value(a, b) -> bool:
    if a is b:
        return True
    return is_static(a) and is_static(b) and same_static([a, b])


def item_setter(items, key):
    def store(value):
        items[key] = value
    return store


def name_of(obj, env: dict) -> str:
    for name, value in env.items():
        if value is obj and not name.startswith("$"):
            return name
    return "..."


def copy_structure(value):
    """A branch's result, detached from lists and dicts the other branch will change."""
    if isinstance(value, Seq):
        return Seq([copy_structure(v) for v in value.items], value.kind)
    if isinstance(value, Static) and value.path is None and isinstance(value.value, dict):
        return Static({k: copy_structure(v) for k, v in value.value.items()})
    return value


def same_static(values) -> bool:
    first = static_value(values[0])
    try:
        return all(type(static_value(v)) is type(first) and static_value(v) == first for v in values[1:]) \
            and not hasattr(first, "shape")
    except Exception:
        return False
