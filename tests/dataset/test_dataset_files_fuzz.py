"""Hostile dataset files: MNIST idx files and CIFAR-10 batches with mutated bytes, truncated or grown,
give rows or one DatasetError line naming the file, and nothing else: no other exception, no side
effect (docs/security.md). Short hypothesis profile in CI; GRAPHJIT_HYPOTHESIS_PROFILE=long offline."""

import os

import numpy as np
from hypothesis import HealthCheck, given, settings, strategies as st

import graphjit.dataset as ds
from graphjit.dataset import DatasetError
from graphjit.dataset.synthetic import write_mnist
from side_effects import watch

PROFILE = settings.get_profile("graphjit-" + os.environ.get("GRAPHJIT_HYPOTHESIS_PROFILE", "ci"))   # ci: 30, long: 2 000

edits = st.lists(st.tuples(st.integers(0, 1 << 20), st.integers(0, 255)), min_size=0, max_size=6)
sizes = st.one_of(st.none(), st.integers(0, 4000))


def _mutate(data: bytes, flips, size) -> bytes:
    out = bytearray(data)
    for at, value in flips:
        if out:
            out[(at % min(64, len(out))) if at % 2 else (at % len(out))] = value   # the header more often
    if size is not None:
        out = out[:size] if size <= len(out) else out + bytes(size - len(out))
    return bytes(out)


def _read_all(make, folder) -> None:
    with watch() as seen:
        try:
            for _ in make().create_tuple_iterator(output_numpy=True):
                pass
        except DatasetError as e:
            assert "\n" not in str(e) and str(folder) in str(e), str(e)
    seen.assert_none()


@settings(PROFILE, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(image_edits=edits, label_edits=edits, image_size=sizes, label_size=sizes)
def test_mutated_mnist_files(tmp_path_factory, image_edits, label_edits, image_size, label_size):
    folder = tmp_path_factory.mktemp("mnist")
    write_mnist(str(folder), train=4, test=1)
    train = folder / "train"
    for name, flips, size in (("train-images-idx3-ubyte", image_edits, image_size),
                              ("train-labels-idx1-ubyte", label_edits, label_size)):
        path = train / name
        path.write_bytes(_mutate(path.read_bytes(), flips, size))
    _read_all(lambda: ds.MnistDataset(str(train), shuffle=False), train)


@settings(PROFILE, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(flips=edits, size=sizes)
def test_mutated_cifar10_batches(tmp_path_factory, flips, size):
    folder = tmp_path_factory.mktemp("cifar")
    rng = np.random.default_rng(0)
    records = np.concatenate([np.concatenate([[k], rng.integers(0, 256, 3072)]) for k in range(3)]).astype(np.uint8)
    (folder / "data_batch_1.bin").write_bytes(_mutate(records.tobytes(), flips, size))
    _read_all(lambda: ds.Cifar10Dataset(str(folder), usage="train", shuffle=False), folder)
