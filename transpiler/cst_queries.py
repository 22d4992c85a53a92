"""Questions the front end asks of LibCST syntax trees, answered in one place (no lowering here).

`target_names(target)`: the names an assignment target binds. The lowering, the fallback blocks
and `graphjit check`'s module reader all ask it.
"""

from __future__ import annotations

import libcst as cst


def target_names(target) -> list:
    """The names an assignment target binds (`a`, `a, (b, *c)`); none for `x.attr` or `x[i]`."""
    if isinstance(target, cst.Name):
        return [target.value]
    if isinstance(target, (cst.Tuple, cst.List)):
        return [name for element in target.elements for name in target_names(element.value)]
    if isinstance(target, cst.StarredElement):
        return target_names(target.value)
    return []
