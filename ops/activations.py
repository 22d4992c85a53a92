"""Activation functions (`ops.relu`, `ops.softmax`, ...): plain NumPy, inlined into graphs by `jit`."""

__all__: list[str] = []
