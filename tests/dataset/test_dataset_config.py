"""config: set_seed makes every random choice reproducible (samplers, shuffle, random transforms,
split), `graphjit.set_seed` seeds the pipeline as `mindspore.set_seed` does, and the settings
check their values."""

import numpy as np
import pytest

import graphjit as ms
import graphjit.dataset as ds
from graphjit.dataset import vision


def pipeline():
    images = np.arange(16 * 4 * 4, dtype=np.uint8).reshape(16, 4, 4, 1)
    data = ds.NumpySlicesDataset({"image": images, "label": np.arange(16)})
    data = data.map([vision.RandomHorizontalFlip(), vision.RandomCrop(2)], "image", num_parallel_workers=3)
    return data.shuffle(4).batch(3)


def run(dataset):
    return [[a.tolist() for a in row] for row in dataset.create_tuple_iterator(output_numpy=True)]


def test_set_seed_reproduces_a_random_pipeline():
    ds.config.set_seed(11)
    first = run(pipeline())
    ds.config.set_seed(11)
    assert run(pipeline()) == first
    ds.config.set_seed(12)
    assert run(pipeline()) != first
    assert ds.config.get_seed() == 12


def test_graphjit_set_seed_seeds_the_pipeline():
    ms.set_seed(5)
    first = run(pipeline())
    ms.set_seed(5)
    assert run(pipeline()) == first and ds.config.get_seed() == 5


def test_settings():
    ds.config.set_num_parallel_workers(2)
    assert ds.config.get_num_parallel_workers() == 2
    ds.config.set_num_parallel_workers(8)
    ds.config.set_prefetch_size(4)
    assert ds.config.get_prefetch_size() == 4
    ds.config.set_prefetch_size(16)
    with pytest.raises(ValueError):
        ds.config.set_seed(-1)
    with pytest.raises(TypeError):
        ds.config.set_num_parallel_workers(1.5)


def test_the_result_does_not_depend_on_the_number_of_workers():
    def with_workers(n):
        ds.config.set_seed(4)
        images = np.arange(40 * 4 * 4, dtype=np.uint8).reshape(40, 4, 4, 1)
        data = ds.NumpySlicesDataset({"image": images}, shuffle=False)
        return run(data.map([vision.RandomHorizontalFlip(), vision.RandomCrop(3)], "image", num_parallel_workers=n))
    assert with_workers(1) == with_workers(4)


def test_import_graphjit_does_not_import_the_pipeline():
    import subprocess
    import sys
    code = "import sys, graphjit; print('graphjit.dataset' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert out.stdout.strip() == "False", out.stdout + out.stderr
