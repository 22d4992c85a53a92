"""The exceptions lowering raises to steer itself: a block ends, a loop must unroll, a value must be compile-time."""

from __future__ import annotations

from ...graph.diagnostics import LoweringError


class Return(Exception):
    """Internal: a `return` reached on every path of the block being lowered."""

    def __init__(self, value, span=None):
        self.value = value
        self.span = span


class Stop(Exception):
    """Internal: the rest of the current block is dead (after break/continue/return/raise in a loop)."""


class NeedsUnroll(Exception):
    """A run-time range loop found its index needed at compile time: the loop unrolls instead."""


class NeedsStatic(LoweringError):
    """A run-time value was used where the compiler needs a compile-time one (e.g. a list index).

    `instead`: the error to report when no enclosing loop can unroll to make the value compile-time.
    """

    code = "GJ001"  # a lowering error, as LoweringError itself reports

    def __init__(self, message, span=None, hint="", instead=None):
        super().__init__(message, span, hint)
        self.instead = instead


class ContainerChanged(NeedsStatic):
    """A compile-time list or dict changes in a loop body: the loop must unroll, or cannot compile."""


class Poisoned(LoweringError):
    """A name whose defining statement already failed: reported once, not again at each use."""
