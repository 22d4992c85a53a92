"""Convolution layers (`Conv2d`): whole-array NumPy construct methods, compiled like user code."""

__all__: list[str] = []
