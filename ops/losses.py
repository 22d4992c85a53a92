"""Loss functions (`ops.cross_entropy`, `ops.mse_loss`, ...): plain NumPy, inlined into graphs by `jit`."""

__all__: list[str] = []
