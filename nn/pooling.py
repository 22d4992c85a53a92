"""Pooling layers (`MaxPool2d`, `AvgPool2d`): whole-array NumPy construct methods."""

__all__: list[str] = []
