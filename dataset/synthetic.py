"""Synthetic MNIST written as MNIST's own idx files, for samples and tests that must not download:
`write_mnist(directory, train=..., test=...)` makes `directory/train` and `directory/test` laid out
as the tutorials' MNIST_Data (train-images-idx3-ubyte, train-labels-idx1-ubyte, and the t10k- pair).
Each digit is one fixed random 28 x 28 pattern plus noise, so a network can learn it."""

from __future__ import annotations

import os

import numpy as np

from .readers import IDX_IMAGES, IDX_LABELS


def synthetic_mnist(count: int, seed: int = 0) -> tuple:
    """(images (count, 28, 28) uint8, labels (count,) uint8); the digit patterns are the same for
    every seed, the labels and noise differ."""
    patterns = np.random.default_rng(1234).random((10, 28, 28))
    rng = np.random.default_rng(seed)
    labels = rng.integers(0, 10, count)
    images = 0.6 * patterns[labels] + 0.4 * rng.random((count, 28, 28))
    return (images * 255).astype(np.uint8), labels.astype(np.uint8)


def write_idx(path: str, array: np.ndarray) -> None:
    """`array` (uint8) as an idx file: magic number, the dimensions (big-endian int32), the bytes."""
    array = np.ascontiguousarray(array, dtype=np.uint8)
    magic = IDX_IMAGES if array.ndim == 3 else IDX_LABELS
    with open(path, "wb") as f:
        f.write(magic.to_bytes(4, "big"))
        for d in array.shape:
            f.write(int(d).to_bytes(4, "big"))
        f.write(array.tobytes())


def write_mnist(directory: str, train: int = 1024, test: int = 256, seed: int = 0) -> str:
    """Synthetic MNIST of `train` and `test` images in `directory/train` and `directory/test`; the
    directory's path."""
    for usage, prefix, count, offset in (("train", "train", train, 0), ("test", "t10k", test, 1)):
        folder = os.path.join(directory, usage)
        os.makedirs(folder, exist_ok=True)
        images, labels = synthetic_mnist(count, seed * 2 + offset)
        write_idx(os.path.join(folder, f"{prefix}-images-idx3-ubyte"), images)
        write_idx(os.path.join(folder, f"{prefix}-labels-idx1-ubyte"), labels)
    return directory
