"""The vision transforms against hand-computed images: dtypes and layouts as MindSpore gives them,
the same result on one row and on stacked rows (the vectorized path), and their argument checks."""

import numpy as np
import pytest

import graphjit.dataset as ds
from graphjit.dataset import DatasetError, vision
from graphjit.dataset.vision import Inter

IMAGE = np.arange(4 * 6 * 3, dtype=np.uint8).reshape(4, 6, 3)


def through_map(op, images):
    """`op` run by map over stacked rows: what the pipeline gives."""
    data = ds.NumpySlicesDataset({"image": images}, shuffle=False).map(op, "image")
    return np.stack([r[0] for r in data.create_tuple_iterator(output_numpy=True)])


def test_rescale_normalize_hwc2chw():
    out = vision.Rescale(1.0 / 255.0, 0)(IMAGE)
    assert out.dtype == np.float32 and out.shape == IMAGE.shape
    np.testing.assert_allclose(out, IMAGE / 255.0, rtol=1e-6)
    normalized = vision.Normalize(mean=(1.0, 2.0, 3.0), std=(2.0, 4.0, 8.0))(IMAGE)
    assert normalized.dtype == np.float32
    np.testing.assert_allclose(normalized[1, 2], (IMAGE[1, 2] - [1, 2, 3]) / [2, 4, 8], rtol=1e-6)
    chw = vision.HWC2CHW()(IMAGE)
    assert chw.shape == (3, 4, 6) and chw[2, 1, 5] == IMAGE[1, 5, 2] and chw.flags.c_contiguous
    assert vision.HWC2CHW()(IMAGE[..., 0]).shape == (4, 6)
    chw_norm = vision.Normalize(mean=(1.0, 2.0, 3.0), std=(2.0, 4.0, 8.0), is_hwc=False)(chw)
    np.testing.assert_allclose(chw_norm, normalized.transpose(2, 0, 1), rtol=1e-6)
    gray = np.random.default_rng(0).integers(0, 255, (48, 48), dtype=np.uint8)        # the tutorial's image
    assert vision.Normalize(mean=(0.1307,), std=(0.3081,))(vision.Rescale(1 / 255, 0)(gray)).shape == (48, 48)


def test_normalize_checks_its_arguments():
    with pytest.raises(ValueError, match=r"mean values must be in \[0, 255\]"):
        vision.Normalize(mean=(-1.0,), std=(1.0,))
    with pytest.raises(ValueError, match=r"std values must be in \(0, 255\]"):
        vision.Normalize(mean=(1.0,), std=(0.0,))
    with pytest.raises(ValueError, match="mean has 2 values but std has 1"):
        vision.Normalize(mean=(1.0, 2.0), std=(1.0,))


@pytest.mark.parametrize("op", [
    vision.Rescale(0.5, 1), vision.Normalize((10.0, 20.0, 30.0), (2.0, 3.0, 4.0)), vision.HWC2CHW(),
    vision.Resize((7, 5)), vision.Resize(3, Inter.NEAREST), vision.Resize((8, 12), Inter.CUBIC),
    vision.Resize((2, 3), Inter.AREA), vision.CenterCrop(3), vision.CenterCrop((6, 8)), vision.Pad(1),
    vision.ToTensor(), vision.HorizontalFlip(), vision.VerticalFlip()])
def test_one_row_equals_stacked_rows(op):
    images = np.stack([IMAGE, IMAGE[::-1], 255 - IMAGE])
    stacked = through_map(op, images)
    single = np.stack([op(image) for image in images])
    np.testing.assert_array_equal(stacked, single)
    assert stacked.dtype == single.dtype


def test_resize():
    constant = np.full((28, 28, 1), 77, np.uint8)
    out = vision.Resize((32, 32))(constant)
    assert out.shape == (32, 32, 1) and out.dtype == np.uint8 and (out == 77).all()
    ramp = np.array([[0, 10, 20, 30]], np.float32).repeat(2, 0)             # 2 x 4, one channel, no C axis
    doubled = vision.Resize((2, 8))(ramp)
    # OpenCV's half-pixel centres: x_src = (x + 0.5) / 2 - 0.5, clamped to the image
    expected = np.interp(np.clip((np.arange(8) + 0.5) / 2 - 0.5, 0, 3), np.arange(4), [0, 10, 20, 30])
    np.testing.assert_allclose(doubled[0], expected, rtol=1e-6)
    assert vision.Resize(14)(np.zeros((28, 56, 3), np.uint8)).shape == (14, 28, 3)      # the shorter side
    nearest = vision.Resize((2, 2), Inter.NEAREST)(np.arange(16, dtype=np.uint8).reshape(4, 4))
    assert nearest.tolist() == [[0, 2], [8, 10]]
    area = vision.Resize((2, 2), Inter.AREA)(np.arange(16, dtype=np.float32).reshape(4, 4))
    assert area.tolist() == [[2.5, 4.5], [10.5, 12.5]]
    with pytest.raises(DatasetError, match="AREA only shrinks"):
        vision.Resize((8, 8), Inter.AREA)(np.zeros((4, 4), np.uint8))
    with pytest.raises(ValueError, match="not supported by graphjit"):
        vision.Resize(4, Inter.ANTIALIAS)


def test_crops_and_flips():
    assert vision.CenterCrop(2)(IMAGE).tolist() == IMAGE[1:3, 2:4].tolist()
    padded = vision.CenterCrop((6, 6))(IMAGE)
    assert padded.shape == (6, 6, 3) and (padded[0] == 0).all() and padded[1:5].tolist() == IMAGE.tolist()
    ds.config.set_seed(0)
    crop = vision.RandomCrop((2, 3))(IMAGE)
    windows = [IMAGE[i:i + 2, j:j + 3].tolist() for i in range(3) for j in range(4)]
    assert crop.shape == (2, 3, 3) and crop.tolist() in windows
    assert vision.RandomCrop(6, padding=1)(IMAGE).shape == (6, 6, 3)
    with pytest.raises(DatasetError, match="larger than the image"):
        vision.RandomCrop(5)(IMAGE)
    assert vision.RandomHorizontalFlip(1.0)(IMAGE).tolist() == IMAGE[:, ::-1].tolist()
    assert vision.RandomVerticalFlip(1.0)(IMAGE).tolist() == IMAGE[::-1].tolist()
    assert vision.RandomHorizontalFlip(0.0)(IMAGE).tolist() == IMAGE.tolist()
    images = np.stack([IMAGE] * 64)
    flipped = through_map(vision.RandomHorizontalFlip(), images)
    kinds = {("same" if (f == IMAGE).all() else "flipped" if (f == IMAGE[:, ::-1]).all() else "other") for f in flipped}
    assert kinds == {"same", "flipped"}


def test_to_tensor():
    out = vision.ToTensor()(IMAGE)
    assert out.shape == (3, 4, 6) and out.dtype == np.float32
    np.testing.assert_allclose(out, IMAGE.transpose(2, 0, 1) / 255.0, rtol=1e-6)
    assert vision.ToTensor()(IMAGE[..., 0]).shape == (1, 4, 6)


def test_rank_errors_are_one_line():
    with pytest.raises(DatasetError, match=r"HWC2CHW: the image must be <H, W> or <H, W, C>, got shape \(3,\)"):
        vision.HWC2CHW()(np.zeros(3))


def test_random_resized_crop():
    ds.config.set_seed(2)
    image = np.arange(20 * 30 * 3, dtype=np.uint8).reshape(20, 30, 3)
    out = vision.RandomResizedCrop(8)(image)
    assert out.shape == (8, 8, 3) and out.dtype == np.uint8
    whole = vision.RandomResizedCrop((20, 30), scale=(1.0, 1.0), ratio=(1.5, 1.5), interpolation=Inter.NEAREST)
    assert whole(image).tolist() == image.tolist()          # the only window of area 1 and ratio 1.5 is the image
    with pytest.raises(ValueError, match="scale must be"):
        vision.RandomResizedCrop(8, scale=(0.9, 0.1))
