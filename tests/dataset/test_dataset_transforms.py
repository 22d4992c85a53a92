"""The general transforms against hand-computed values: TypeCast (graphjit and NumPy dtypes),
OneHot (with smoothing), Compose (eager and in map), Fill, Duplicate, Concatenate, PadEnd,
RandomApply and RandomChoice."""

import numpy as np
import pytest

import graphjit as ms
import graphjit.dataset as ds
from graphjit.dataset import DatasetError, transforms, vision


def test_type_cast():
    assert transforms.TypeCast(ms.int32)(np.array([1, 2], np.uint32)).dtype == np.int32
    assert transforms.TypeCast(np.float16)(np.array(3)).dtype == np.float16
    assert transforms.TypeCast("float32")(np.array(3)).dtype == np.float32

    class DtypeObject:          # a dtype object that names its NumPy dtype (as MindSpore's mstype does)
        np_dtype = np.int8
    assert transforms.TypeCast(DtypeObject())(np.array(3)).dtype == np.int8
    with pytest.raises(TypeError, match="not a dtype"):
        transforms.TypeCast(object())


def test_one_hot():
    out = transforms.OneHot(4)(np.array(2, np.uint32))
    assert out.tolist() == [0, 0, 1, 0] and out.dtype == np.uint32
    assert transforms.OneHot(3)(np.array([0, 2])).tolist() == [[1, 0, 0], [0, 0, 1]]
    smooth = transforms.OneHot(4, smoothing_rate=0.2)(np.array(1))
    np.testing.assert_allclose(smooth, [0.05, 0.85, 0.05, 0.05], rtol=1e-6)
    assert smooth.dtype == np.float32
    labels = ds.NumpySlicesDataset({"label": np.array([0, 1, 5])}, shuffle=False).map(transforms.OneHot(3), "label")
    with pytest.raises(DatasetError, match=r"map: OneHot failed on column 'label', row 2: ValueError: OneHot: label 5 "
                                           r"is not in \[0, 3\)"):
        list(labels)


def test_compose():
    composed = transforms.Compose([vision.Rescale(1.0 / 255.0, 0), vision.Normalize(mean=(0.1307,), std=(0.3081,)),
                                   vision.HWC2CHW()])
    image = np.full((28, 28, 1), 255, np.uint8)
    out = composed(image)
    assert out.shape == (1, 28, 28) and out.dtype == np.float32
    np.testing.assert_allclose(out, (1 - 0.1307) / 0.3081, rtol=1e-5)
    data = ds.NumpySlicesDataset({"image": np.stack([image] * 3)}, shuffle=False).map(composed, "image")
    np.testing.assert_allclose(next(data.create_tuple_iterator(output_numpy=True))[0], out)
    lam = transforms.Compose([lambda x: x * 2, transforms.TypeCast(np.int8)])
    assert lam(np.array(3)).tolist() == 6 and lam(np.array(3)).dtype == np.int8


def test_fill_duplicate_concatenate_pad_end():
    assert transforms.Fill(7)(np.zeros((2, 2), np.uint8)).tolist() == [[7, 7], [7, 7]]
    a, b = transforms.Duplicate()(np.array([1, 2]))
    assert a.tolist() == b.tolist() == [1, 2] and a is not b
    joined = transforms.Concatenate(0, prepend=np.array([0]), append=np.array([9]))(np.array([1, 2]), np.array([3]))
    assert joined.tolist() == [0, 1, 2, 3, 9]
    assert transforms.PadEnd([4], 0)(np.array([1, 2])).tolist() == [1, 2, 0, 0]
    assert transforms.PadEnd([1])(np.array([1, 2])).tolist() == [1]


def test_random_apply_and_choice():
    ds.config.set_seed(0)
    always = transforms.RandomApply([lambda x: x + 1], prob=1.0)
    never = transforms.RandomApply([lambda x: x + 1], prob=0.0)
    assert always(np.array(1)).tolist() == 2 and never(np.array(1)).tolist() == 1
    choice = transforms.RandomChoice([lambda x: x + 1, lambda x: x - 1])
    data = ds.NumpySlicesDataset({"x": np.zeros(50, np.int64)}, shuffle=False).map(choice, "x")
    assert {int(r[0]) for r in data.create_tuple_iterator(output_numpy=True)} == {-1, 1}
