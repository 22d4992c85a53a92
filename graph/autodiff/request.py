"""What a gradient function was asked for: MindSpore's `grad_position`, `weights`, `has_aux`,
`return_ids` and `sens_param`, as compile-time facts (no graph machinery: `import graphjit` loads
this without networkx)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional


@dataclass(frozen=True)
class GradRequest:
    """What the caller of a gradient function asked for (all compile-time facts)."""

    positions: Optional[tuple]          # argument positions, None for none
    position_is_int: bool               # `grad_position=0` gives one gradient, `(0,)` a tuple of one
    weight_names: Optional[tuple]       # None: no `weights`; else the name of each weight
    weights_is_single: bool = False     # `weights=param` (not a list) gives one gradient
    has_aux: bool = False
    with_value: bool = False
    return_ids: bool = False
    sens: bool = False                  # the last argument is the sensitivity (`sens_param=True`)

    def key(self) -> tuple:
        return (self.positions, self.position_is_int, self.weight_names, self.weights_is_single, self.has_aux,
                self.with_value, self.return_ids, self.sens)
