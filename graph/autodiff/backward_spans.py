"""Where a backward node comes from: the span of the forward code it differentiates, marked as
backward, so graph text and the generated code say `# grad of f.py:3`."""

from __future__ import annotations


def backward_span(span):
    """The span of `span`'s code, for the nodes computing its gradient (None stays None)."""
    return span.of_backward() if span is not None else None
