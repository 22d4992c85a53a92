"""MnistDataset, Cifar10Dataset and ImageFolderDataset on small files written here: the rows,
dtypes and layouts MindSpore gives, usage, and files from elsewhere read with no side effects and
malformed ones refused in one line naming the file and the place."""

import os

import numpy as np
import pytest

import graphjit.dataset as ds
from graphjit.dataset import DatasetError
from graphjit.dataset.synthetic import synthetic_mnist, write_idx, write_mnist
from side_effects import watch


def rows(dataset):
    return list(dataset.create_tuple_iterator(output_numpy=True))


def test_mnist_reads_idx_files(tmp_path):
    write_mnist(str(tmp_path), train=20, test=5)
    train = ds.MnistDataset(str(tmp_path / "train"), shuffle=False)
    assert train.get_col_names() == ["image", "label"] and train.get_dataset_size() == 20
    images, labels = synthetic_mnist(20, 0)
    got = rows(train)
    assert got[3][0].shape == (28, 28, 1) and got[3][0].dtype == np.uint8 and got[3][1].dtype == np.uint32
    np.testing.assert_array_equal(np.stack([r[0][..., 0] for r in got]), images)
    assert [int(r[1]) for r in got] == labels.tolist()
    assert ds.MnistDataset(str(tmp_path / "test")).get_dataset_size() == 5
    with pytest.raises(DatasetError, match="MnistDataset: no t10k-images-idx3-ubyte file in"):
        ds.MnistDataset(str(tmp_path / "train"), usage="test")


def test_mnist_usage_picks_the_files(tmp_path):
    write_idx(str(tmp_path / "train-images-idx3-ubyte"), np.zeros((3, 28, 28), np.uint8))
    write_idx(str(tmp_path / "train-labels-idx1-ubyte"), np.ones(3, np.uint8))
    write_idx(str(tmp_path / "t10k-images-idx3-ubyte"), np.full((2, 28, 28), 9, np.uint8))
    write_idx(str(tmp_path / "t10k-labels-idx1-ubyte"), np.full(2, 2, np.uint8))
    assert ds.MnistDataset(str(tmp_path), usage="train").get_dataset_size() == 3
    assert ds.MnistDataset(str(tmp_path), usage="test").get_dataset_size() == 2
    every = ds.MnistDataset(str(tmp_path), shuffle=False)          # 'all': t10k first, as the names sort
    assert [int(r[1]) for r in rows(every)] == [2, 2, 1, 1, 1]
    assert len(rows(ds.MnistDataset(str(tmp_path), num_samples=4, shuffle=False))) == 4
    with pytest.raises(ValueError, match="usage must be"):
        ds.MnistDataset(str(tmp_path), usage="valid")
    with pytest.raises(ValueError, match="does not exist"):
        ds.MnistDataset(str(tmp_path / "nowhere"))


@pytest.mark.parametrize("cut, message", [
    (lambda b: b[:-10], r"truncated MNIST image file: its header says 3 x 28 x 28 = 2352 bytes after byte 16, "
                        r"the file has 2342"),
    (lambda b: b[:10], r"truncated MNIST image file: the header needs 16 bytes, the file has 10"),
    (lambda b: b"\0\0\x08\x01" + b[4:], r"not an MNIST image file: magic number 2049 at byte 0, expected 2051"),
    (lambda b: b[:4] + (10**9).to_bytes(4, "big") + b[8:], r"header says 1000000000 x 28 x 28"),
    (lambda b: b + b"x", r"malformed MNIST image file"),
])
def test_malformed_idx_files_are_refused_in_one_line(tmp_path, cut, message):
    write_idx(str(tmp_path / "train-images-idx3-ubyte"), np.zeros((3, 28, 28), np.uint8))
    write_idx(str(tmp_path / "train-labels-idx1-ubyte"), np.zeros(3, np.uint8))
    path = tmp_path / "train-images-idx3-ubyte"
    path.write_bytes(cut(path.read_bytes()))
    with pytest.raises(DatasetError, match=message) as info:
        ds.MnistDataset(str(tmp_path))
    assert str(path) in str(info.value) and "\n" not in str(info.value)


def test_image_and_label_counts_must_agree(tmp_path):
    write_idx(str(tmp_path / "train-images-idx3-ubyte"), np.zeros((3, 28, 28), np.uint8))
    write_idx(str(tmp_path / "train-labels-idx1-ubyte"), np.zeros(4, np.uint8))
    with pytest.raises(DatasetError, match="holds 3 images but .* holds 4 labels"):
        ds.MnistDataset(str(tmp_path))


def write_cifar(path, images, labels):
    records = [bytes([int(label)]) + image.transpose(2, 0, 1).tobytes() for image, label in zip(images, labels)]
    path.write_bytes(b"".join(records))


def test_cifar10_binary_batches(tmp_path):
    rng = np.random.default_rng(0)
    train = rng.integers(0, 256, (4, 32, 32, 3), dtype=np.uint8)
    test = rng.integers(0, 256, (2, 32, 32, 3), dtype=np.uint8)
    write_cifar(tmp_path / "data_batch_1.bin", train[:3], [0, 1, 2])
    write_cifar(tmp_path / "data_batch_2.bin", train[3:], [3])
    write_cifar(tmp_path / "test_batch.bin", test, [9, 8])
    data = ds.Cifar10Dataset(str(tmp_path), usage="train", shuffle=False)
    got = rows(data)
    assert data.get_dataset_size() == 4 and [int(r[1]) for r in got] == [0, 1, 2, 3]
    assert got[0][0].shape == (32, 32, 3) and got[0][0].dtype == np.uint8 and got[0][1].dtype == np.uint32
    np.testing.assert_array_equal(np.stack([r[0] for r in got]), train)
    assert [int(r[1]) for r in rows(ds.Cifar10Dataset(str(tmp_path), usage="test", shuffle=False))] == [9, 8]
    assert ds.Cifar10Dataset(str(tmp_path)).get_dataset_size() == 6
    (tmp_path / "test_batch.bin").write_bytes((tmp_path / "test_batch.bin").read_bytes()[:-5])
    with pytest.raises(DatasetError, match=r"test_batch.bin: truncated CIFAR-10 file: 6141 bytes is 1 records of 3073 "
                                           r"bytes and 3068 bytes more \(record 1 is cut at byte 6141\)"):
        ds.Cifar10Dataset(str(tmp_path), usage="test")


def test_reading_files_has_no_side_effects(tmp_path):
    write_mnist(str(tmp_path), train=8, test=2)
    write_cifar(tmp_path / "data_batch_1.bin", np.zeros((2, 32, 32, 3), np.uint8), [1, 2])
    with watch() as seen:
        mnist = ds.MnistDataset(str(tmp_path / "train"), shuffle=False)
        assert mnist.output_shapes() == [[28, 28, 1], []]
        cifar = ds.Cifar10Dataset(str(tmp_path), usage="train", shuffle=False)
        assert cifar.output_types() == [np.uint8, np.uint32]
    seen.assert_none()


def test_image_folder_dataset(tmp_path):
    pil = pytest.importorskip("PIL.Image")
    colours = {"cat": (255, 0, 0), "dog": (0, 0, 255)}
    for folder, colour in colours.items():
        os.makedirs(tmp_path / folder)
        for k in range(2):
            pil.new("RGB", (5 + k, 4), colour).save(tmp_path / folder / f"{k}.png")
    (tmp_path / "dog" / "notes.txt").write_text("not an image")
    data = ds.ImageFolderDataset(str(tmp_path), extensions=[".png"], decode=True, shuffle=False)
    got = rows(data)
    assert data.get_dataset_size() == 4 and data.get_class_indexing() == {"cat": 0, "dog": 1}
    assert [int(r[1]) for r in got] == [0, 0, 1, 1] and got[0][1].dtype == np.int32
    assert got[1][0].shape == (4, 6, 3) and got[1][0].dtype == np.uint8
    assert got[2][0][0, 0].tolist() == [0, 0, 255]
    raw = ds.ImageFolderDataset(str(tmp_path), extensions=[".png"], class_indexing={"dog": 5}, shuffle=False)
    first = rows(raw)[0]
    assert first[0].dtype == np.uint8 and first[0].ndim == 1 and int(first[1]) == 5
    from graphjit.dataset import vision
    assert vision.Decode()(first[0]).shape == (4, 5, 3)
    everything = ds.ImageFolderDataset(str(tmp_path), decode=True, shuffle=False)
    with pytest.raises(DatasetError, match=r"ImageFolderDataset: .*notes.txt: not an image Pillow can decode"):
        rows(everything)


def test_only_image_formats_are_decoded_and_nothing_runs(tmp_path):
    """Pillow opens EPS with Ghostscript (a process): graphjit tries only the image formats
    MindSpore's Decode reads, so an EPS file is refused without running anything."""
    pil = pytest.importorskip("PIL.Image")
    pil.init()          # Pillow loads its own plugins once, on first use: not something the file asks for
    os.makedirs(tmp_path / "a")
    (tmp_path / "a" / "x.eps").write_bytes(b"%!PS-Adobe-3.0 EPSF-3.0\n%%BoundingBox: 0 0 10 10\nshowpage\n")
    # one worker: the file is decoded in this thread, the one the watcher sees
    data = ds.ImageFolderDataset(str(tmp_path), decode=True, shuffle=False, num_parallel_workers=1)
    with watch(allow_imports=("graphjit", "PIL")) as seen:
        with pytest.raises(DatasetError, match=r"x.eps: not an image Pillow can decode: UnidentifiedImageError"):
            data.output_shapes()
    seen.assert_none()
