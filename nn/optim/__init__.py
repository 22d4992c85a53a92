"""Optimizers (`nn.SGD`, `nn.Momentum`, `nn.Adam`, `nn.AdamW`): updates written in NumPy, state kept in Parameters."""

__all__: list[str] = []
