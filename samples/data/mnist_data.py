"""MNIST-shaped data for the samples, standing in for `mindspore.dataset` (no downloads).

`MnistDataset(directory)` reads the MNIST idx files in `directory` (`train-images-idx3-ubyte`,
`train-labels-idx1-ubyte`, or the `t10k-` pair with `usage="test"`) when given, else makes
synthetic MNIST-shaped data: one fixed random 28x28 pattern per digit plus noise, so a network
can learn it. `datapipe(dataset, batch_size)` applies the tutorial's transforms (rescale to [0, 1],
normalize with MNIST's mean and std, HWC -> CHW, labels as int32; `resize=32` first resizes the
images bilinearly, as LeNet-5's pipeline does) and batches; the result has the two methods the
tutorials call, `create_tuple_iterator()` and `get_dataset_size()`, and yields `Tensor`s as
MindSpore's datasets do.
"""

from __future__ import annotations

import os

import numpy as np

from graphjit import Tensor

MEAN, STD = 0.1307, 0.3081


class MnistDataset:
    """Images (N, 28, 28, 1) uint8 and labels (N,), from idx files or synthetic."""

    def __init__(self, directory=None, usage: str = "train", num_samples: int = 1024, seed: int = 0):
        if directory:
            prefix = "train" if usage == "train" else "t10k"
            self.images = _read_idx(os.path.join(directory, f"{prefix}-images-idx3-ubyte"))[..., None]
            self.labels = _read_idx(os.path.join(directory, f"{prefix}-labels-idx1-ubyte"))
            if num_samples:
                self.images, self.labels = self.images[:num_samples], self.labels[:num_samples]
        else:
            self.images, self.labels = _synthetic(num_samples, seed + (usage != "train"))


class BatchDataset:
    """Transformed, batched images (float32 Tensors, N x 1 x H x W) and labels (int32 Tensors)."""

    def __init__(self, images: np.ndarray, labels: np.ndarray, batch_size: int):
        self.images, self.labels, self.batch_size = images, labels, batch_size

    def get_dataset_size(self) -> int:
        return -(-len(self.labels) // self.batch_size)

    def create_tuple_iterator(self):
        for start in range(0, len(self.labels), self.batch_size):
            yield (Tensor.from_numpy(self.images[start:start + self.batch_size]),
                   Tensor.from_numpy(self.labels[start:start + self.batch_size]))

    __iter__ = create_tuple_iterator


def datapipe(dataset: MnistDataset, batch_size: int, resize: int | None = None) -> BatchDataset:
    images = dataset.images.astype(np.float32)
    if resize:
        images = _resize_bilinear(images, resize)                         # Resize((resize, resize))
    images = (images / 255.0 - MEAN) / STD                                # Rescale, Normalize
    images = np.ascontiguousarray(images.transpose(0, 3, 1, 2))          # HWC2CHW
    return BatchDataset(images, dataset.labels.astype(np.int32), batch_size)


def _resize_bilinear(images: np.ndarray, size: int) -> np.ndarray:
    """(N, H, W, C) images resized to (N, size, size, C), bilinear with half-pixel centers (OpenCV's)."""
    def axis(old: int):
        pos = np.clip((np.arange(size) + 0.5) * old / size - 0.5, 0, old - 1)
        low = np.floor(pos).astype(int)
        high = np.minimum(low + 1, old - 1)
        return low, high, (pos - low).astype(np.float32)
    (r0, r1, fr), (c0, c1, fc) = axis(images.shape[1]), axis(images.shape[2])
    rows = images[:, r0] * (1 - fr)[:, None, None] + images[:, r1] * fr[:, None, None]
    return rows[:, :, c0] * (1 - fc)[:, None] + rows[:, :, c1] * fc[:, None]


def _synthetic(count: int, seed: int):
    patterns = np.random.default_rng(1234).random((10, 28, 28))          # the same digits in train and test
    rng = np.random.default_rng(seed)
    labels = rng.integers(0, 10, count)
    images = 0.6 * patterns[labels] + 0.4 * rng.random((count, 28, 28))
    return (images * 255).astype(np.uint8)[..., None], labels.astype(np.uint8)


def _read_idx(path: str) -> np.ndarray:
    """An idx file (MNIST's format): a big-endian header, then uint8 data."""
    if not os.path.exists(path):
        raise FileNotFoundError(f"{path} not found: --mnist DIR needs MNIST's idx files (unpacked) in DIR")
    with open(path, "rb") as f:
        data = f.read()
    if len(data) < 4 or data[:2] != b"\0\0" or data[2] != 8:
        raise ValueError(f"{path} is not an idx file of unsigned bytes")
    ndim = data[3]
    shape = tuple(int.from_bytes(data[4 + 4 * k:8 + 4 * k], "big") for k in range(ndim))
    body = np.frombuffer(data, np.uint8, offset=4 + 4 * ndim)
    if body.size != int(np.prod(shape)):
        raise ValueError(f"{path} is truncated: expected {int(np.prod(shape))} values, found {body.size}")
    return body.reshape(shape)
