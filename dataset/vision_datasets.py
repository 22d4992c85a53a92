"""Image datasets read from their files: `MnistDataset` (idx files), `Cifar10Dataset` (binary
batches) and `ImageFolderDataset` (one folder per class; decoding needs Pillow, the `vision` extra)."""

from __future__ import annotations

import os
import threading

import numpy as np

from .errors import DatasetError
from .readers import IDX_IMAGES, IDX_LABELS, check_directory, cifar10_records, idx_header, read_cifar10, read_idx
from .columns import stack
from .parallel import ordered_map
from .sources import MappableSource

MAX_PIXELS = 2**27       # a decoded image larger than this is refused (a decompression bomb)
MAX_FILE_BYTES = 1 << 30  # an image file larger than this is refused before it is read
# the formats MindSpore's Decode reads; Pillow's others (EPS runs Ghostscript) are never tried
IMAGE_FORMATS = ("JPEG", "PNG", "BMP", "TIFF", "GIF", "WEBP", "PPM")


def _usage(usage, what: str) -> str:
    if usage is None:
        return "all"
    if usage not in ("train", "test", "all"):
        raise ValueError(f"{what}: usage must be 'train', 'test' or 'all', got {usage!r}")
    return usage


class LoadedOnce:
    """Arrays read from files on first use, once, whichever thread asks first."""

    def __init__(self, load):
        self._load, self._value, self._lock = load, None, threading.Lock()

    def get(self):
        if self._value is None:
            with self._lock:
                if self._value is None:
                    self._value = self._load()
        return self._value


class MnistDataset(MappableSource):
    """MNIST from its idx files in `dataset_dir`: columns `image` (28, 28, 1) uint8 and `label`
    uint32. `usage` 'train' reads train-images-idx3-ubyte / train-labels-idx1-ubyte, 'test' the
    t10k- pair, 'all' (the default) both. Shuffled by default, as in MindSpore."""

    row_bytes = 28 * 28 + 4

    def __init__(self, dataset_dir, usage=None, num_samples=None, num_parallel_workers=None, shuffle=None,
                 sampler=None, num_shards=None, shard_id=None, cache=None):
        directory = check_directory(dataset_dir, "MnistDataset")
        self.usage = _usage(usage, "MnistDataset")
        prefix = {"train": "train", "test": "t10k", "all": ""}[self.usage]
        names = sorted(os.listdir(directory))
        images = [os.path.join(directory, n) for n in names if f"{prefix}-images-idx3-ubyte" in n]
        labels = [os.path.join(directory, n) for n in names if f"{prefix}-labels-idx1-ubyte" in n]
        if not images:
            raise DatasetError(f"MnistDataset: no {prefix or 'train or t10k'}-images-idx3-ubyte file in {directory}")
        if len(images) != len(labels):
            raise DatasetError(f"MnistDataset: {len(images)} image files but {len(labels)} label files in {directory}")
        self.counts = []
        for image_file, label_file in zip(images, labels):
            count, rows, cols = idx_header(image_file, IDX_IMAGES)
            (label_count,) = idx_header(label_file, IDX_LABELS)
            if count != label_count:
                raise DatasetError(f"MnistDataset: {image_file} holds {count} images but {label_file} holds "
                                   f"{label_count} labels")
            self.counts.append(count)
        self.files = list(zip(images, labels))
        self._data = LoadedOnce(self._load)
        self._init_sampler(num_samples, shuffle, sampler, num_shards, shard_id, num_parallel_workers)

    def _load(self):
        images = [read_idx(i, IDX_IMAGES)[..., None] for i, _ in self.files]
        labels = [read_idx(l, IDX_LABELS).astype(np.uint32) for _, l in self.files]
        return (images[0] if len(images) == 1 else np.concatenate(images)), np.concatenate(labels)

    def _col_names(self):
        return ["image", "label"]

    def _num_rows(self):
        return sum(self.counts)

    def _read(self, ids):
        images, labels = self._data.get()
        return [images[ids], labels[ids]]


class Cifar10Dataset(MappableSource):
    """CIFAR-10 from its binary batches in `dataset_dir`: columns `image` (32, 32, 3) uint8 and
    `label` uint32. `usage` 'train' reads data_batch_*.bin, 'test' test_batch.bin, 'all' (the
    default) both."""

    row_bytes = 32 * 32 * 3 + 4

    def __init__(self, dataset_dir, usage=None, num_samples=None, num_parallel_workers=None, shuffle=None,
                 sampler=None, num_shards=None, shard_id=None, cache=None):
        directory = check_directory(dataset_dir, "Cifar10Dataset")
        self.usage = _usage(usage, "Cifar10Dataset")
        names = sorted(n for n in os.listdir(directory) if n.endswith(".bin"))
        train = [n for n in names if n.startswith("data_batch")]
        test = [n for n in names if n.startswith("test_batch")]
        chosen = {"train": train, "test": test, "all": train + test}[self.usage]
        if not chosen:
            raise DatasetError(f"Cifar10Dataset: no {'data_batch_*.bin' if self.usage == 'train' else 'test_batch.bin'}"
                               f" file in {directory}")
        self.files = [os.path.join(directory, n) for n in chosen]
        self.counts = [cifar10_records(f) for f in self.files]
        self._data = LoadedOnce(self._load)
        self._init_sampler(num_samples, shuffle, sampler, num_shards, shard_id, num_parallel_workers)

    def _load(self):
        parts = [read_cifar10(f) for f in self.files]
        return np.concatenate([p[0] for p in parts]), np.concatenate([p[1] for p in parts])

    def _col_names(self):
        return ["image", "label"]

    def _num_rows(self):
        return sum(self.counts)

    def _read(self, ids):
        images, labels = self._data.get()
        return [images[ids], labels[ids]]


def decode_image(data: np.ndarray, where: str) -> np.ndarray:
    """Encoded image bytes (JPEG, PNG, BMP, TIFF, GIF, WEBP, PPM) as an RGB (H, W, 3) uint8 array,
    with Pillow; no other format is tried, and images over MAX_PIXELS are refused unread."""
    try:
        from PIL import Image
    except ImportError:
        raise ImportError("decoding images needs Pillow: pip install 'graphjit[vision]'") from None
    import io
    try:
        with Image.open(io.BytesIO(np.ascontiguousarray(data, dtype=np.uint8).tobytes()),
                        formats=IMAGE_FORMATS) as image:
            width, height = image.size
            if width * height > MAX_PIXELS:
                raise DatasetError(f"{where}: the image is {width} x {height} pixels, more than the "
                                   f"{MAX_PIXELS} graphjit decodes")
            return np.asarray(image.convert("RGB"))
    except DatasetError:
        raise
    except Exception as exc:
        raise DatasetError(f"{where}: not an image Pillow can decode: {type(exc).__name__}: {exc}") from None


class ImageFolderDataset(MappableSource):
    """Images in one folder per class: columns `image` (the file's bytes, uint8, or with
    `decode=True` the decoded RGB (H, W, 3) uint8 image) and `label` int32. Classes are the folder
    names sorted (or `class_indexing`, a {folder: label} dict); `extensions` keeps only files with
    those endings."""

    max_block_rows = 32

    def __init__(self, dataset_dir, num_samples=None, num_parallel_workers=None, shuffle=None, sampler=None,
                 extensions=None, class_indexing=None, decode=False, num_shards=None, shard_id=None, cache=None,
                 decrypt=None):
        directory = check_directory(dataset_dir, "ImageFolderDataset")
        if not isinstance(decode, bool):
            raise TypeError("decode must be a bool")
        if extensions is not None and (not isinstance(extensions, (list, tuple)) or
                                       not all(isinstance(e, str) for e in extensions)):
            raise TypeError("extensions must be a list of str, such as ['.JPEG', '.png']")
        folders = sorted(e.name for e in os.scandir(directory) if e.is_dir())
        if class_indexing is None:
            class_indexing = {name: k for k, name in enumerate(folders)}
        elif not isinstance(class_indexing, dict) or not all(
                isinstance(k, str) and isinstance(v, int) and v >= 0 for k, v in class_indexing.items()):
            raise TypeError("class_indexing must be a dict from folder name (str) to a non-negative int")
        self.class_indexing = dict(class_indexing)
        self.decode = decode
        self.files, labels = [], []
        for folder in folders:
            if folder not in self.class_indexing:
                continue
            path = os.path.join(directory, folder)
            for name in sorted(os.listdir(path)):
                full = os.path.join(path, name)
                if not os.path.isfile(full):
                    continue
                if extensions is not None and not any(name.endswith(e) for e in extensions):
                    continue
                self.files.append(full)
                labels.append(self.class_indexing[folder])
        self.labels = np.asarray(labels, dtype=np.int32)
        self._init_sampler(num_samples, shuffle, sampler, num_shards, shard_id, num_parallel_workers)

    def get_class_indexing(self):
        return dict(self.class_indexing)

    def _col_names(self):
        return ["image", "label"]

    def _num_rows(self):
        return len(self.files)

    def _read_one(self, i: int) -> np.ndarray:
        path = self.files[i]
        try:
            if os.path.getsize(path) > MAX_FILE_BYTES:
                raise DatasetError(f"ImageFolderDataset: {path} is larger than {MAX_FILE_BYTES} bytes; "
                                   "graphjit does not read an image file that large")
            with open(path, "rb") as f:
                data = np.frombuffer(f.read(), dtype=np.uint8)
        except OSError as exc:
            raise DatasetError(f"ImageFolderDataset: cannot read {path}: {exc.strerror or exc}") from None
        return decode_image(data, f"ImageFolderDataset: {path}") if self.decode else data

    def _read(self, ids):
        # Pillow releases the GIL while it decodes: the workers' threads decode side by side
        images = list(ordered_map(self._read_one, ids.tolist(), self.workers if self.decode else 1))
        return [stack(images), self.labels[ids]]
