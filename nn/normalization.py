"""Normalization layers (`BatchNorm1d/2d`, `LayerNorm`): NumPy construct methods; moving statistics are Parameters."""

__all__: list[str] = []
