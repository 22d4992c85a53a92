"""Reading dataset files from elsewhere: MNIST's idx files and CIFAR-10's binary batches. Only
bytes are read (no code runs, nothing is imported or written); every size a header claims is
checked against the file's size before anything is allocated, and a malformed file gives one
DatasetError naming the file and the place."""

from __future__ import annotations

import os

import numpy as np

from .errors import DatasetError

IDX_IMAGES, IDX_LABELS = 2051, 2049          # magic numbers of MNIST's image and label files
CIFAR10_RECORD = 1 + 32 * 32 * 3              # a label byte, then 1024 red, 1024 green, 1024 blue bytes


def idx_header(path: str, magic: int) -> tuple:
    """The shape an idx file of unsigned bytes holds, checked against its size."""
    expected_dims = 3 if magic == IDX_IMAGES else 1
    kind = "image" if magic == IDX_IMAGES else "label"
    try:
        size = os.path.getsize(path)
        with open(path, "rb") as f:
            head = f.read(4 + 4 * expected_dims)
    except OSError as exc:
        raise DatasetError(f"{path}: cannot read the MNIST {kind} file: {exc.strerror or exc}") from None
    if len(head) < 4:
        raise DatasetError(f"{path}: not an MNIST {kind} file: {size} bytes, shorter than the 4-byte magic number")
    found = int.from_bytes(head[:4], "big")
    if found != magic:
        raise DatasetError(f"{path}: not an MNIST {kind} file: magic number {found} at byte 0, expected {magic}")
    if len(head) < 4 + 4 * expected_dims:
        raise DatasetError(f"{path}: truncated MNIST {kind} file: the header needs {4 + 4 * expected_dims} bytes, "
                           f"the file has {size}")
    shape = tuple(int.from_bytes(head[4 + 4 * k:8 + 4 * k], "big") for k in range(expected_dims))
    body = 1
    for d in shape:
        body *= d
    header = 4 + 4 * expected_dims
    if header + body != size:
        what = "truncated" if header + body > size else "malformed"
        raise DatasetError(f"{path}: {what} MNIST {kind} file: its header says {' x '.join(map(str, shape))} = "
                           f"{body} bytes after byte {header}, the file has {size - header}")
    return shape


def read_idx(path: str, magic: int) -> np.ndarray:
    """The uint8 array of an idx file (after `idx_header` checked it)."""
    shape = idx_header(path, magic)
    header = 4 + 4 * len(shape)
    with open(path, "rb") as f:
        f.seek(header)
        data = np.fromfile(f, dtype=np.uint8, count=int(np.prod(shape)))
    if data.size != int(np.prod(shape)):
        raise DatasetError(f"{path}: the file changed while it was read (expected {int(np.prod(shape))} bytes)")
    return data.reshape(shape)


def cifar10_records(path: str) -> int:
    """How many records a CIFAR-10 binary batch holds, checked against its size."""
    try:
        size = os.path.getsize(path)
    except OSError as exc:
        raise DatasetError(f"{path}: cannot read the CIFAR-10 file: {exc.strerror or exc}") from None
    if size % CIFAR10_RECORD:
        raise DatasetError(f"{path}: truncated CIFAR-10 file: {size} bytes is {size // CIFAR10_RECORD} records of "
                           f"{CIFAR10_RECORD} bytes and {size % CIFAR10_RECORD} bytes more (record "
                           f"{size // CIFAR10_RECORD} is cut at byte {size})")
    return size // CIFAR10_RECORD


def read_cifar10(path: str) -> tuple:
    """(images (N, 32, 32, 3) uint8, labels (N,) uint32) of a CIFAR-10 binary batch."""
    count = cifar10_records(path)
    with open(path, "rb") as f:
        data = np.fromfile(f, dtype=np.uint8, count=count * CIFAR10_RECORD)
    if data.size != count * CIFAR10_RECORD:
        raise DatasetError(f"{path}: the file changed while it was read")
    records = data.reshape(count, CIFAR10_RECORD)
    labels = records[:, 0].astype(np.uint32)
    images = np.ascontiguousarray(records[:, 1:].reshape(count, 3, 32, 32).transpose(0, 2, 3, 1))
    return images, labels


def check_directory(path, what: str) -> str:
    if not isinstance(path, (str, os.PathLike)):
        raise TypeError(f"{what}: dataset_dir must be a path, got {type(path).__name__}")
    path = os.fspath(path)
    if not os.path.isdir(path):
        raise ValueError(f"{what}: the folder {path} does not exist or is not a directory")
    return path
