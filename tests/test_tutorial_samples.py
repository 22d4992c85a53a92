"""The tutorial samples beyond training: the autodiff tutorial's gradients equal the closed form of
its binary cross-entropy (and keep float32), and the quickstart's checkpoint round-trips."""

import os

import numpy as np

import graphjit as ms
from sample_runs import run_sample


def sigmoid(z):
    return 1.0 / (1.0 + np.exp(-z))


def test_autodiff_tutorial_gradients_equal_the_closed_form():
    run = run_sample("autodiff_tutorial", eager=False)
    ns = run.namespace
    x, y, w, b = (np.asarray(ns[k], np.float64) for k in "xywb")
    z = x @ w + b
    dz = (sigmoid(z) - y) / z.size                   # d mean(BCE-with-logits) / dz
    loss = np.mean(np.maximum(z, 0) - z * y + np.log1p(np.exp(-np.abs(z))))
    expected = (np.outer(x, dz), dz)
    np.testing.assert_allclose(ns["function"](ns["x"], ns["y"], ns["w"], ns["b"]), loss, rtol=1e-5)
    # grad(function, (2, 3)), with stop_gradient, with has_aux: the loss's gradient only
    for fn in (ns["function"], ns["function_stop_gradient"]):
        grads = ms.grad(fn, (2, 3))(ns["x"], ns["y"], ns["w"], ns["b"])
        for got, want, param in zip(grads, expected, (ns["w"], ns["b"])):
            assert isinstance(got, ms.Tensor) and got.dtype == np.float32 and got.shape == param.shape
            np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-7)
    grads, (aux,) = ms.grad(ns["function_with_logits"], (2, 3), has_aux=True)(ns["x"], ns["y"], ns["w"], ns["b"])
    np.testing.assert_allclose(aux, z, rtol=1e-5)
    for got, want in zip(grads, expected):
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-7)
    # both outputs differentiated (an all-ones sensitivity for z): one more per element of z
    grads = ms.grad(ns["function_with_logits"], (2, 3))(ns["x"], ns["y"], ns["w"], ns["b"])
    np.testing.assert_allclose(grads[0], expected[0] + np.outer(x, np.ones_like(z)), rtol=1e-5)
    np.testing.assert_allclose(grads[1], expected[1] + 1, rtol=1e-5)
    # the Cell: value_and_grad over model.trainable_params() (nn.BCEWithLogitsLoss), left in ns by the script
    assert [p.name for p in ns["model"].trainable_params()] == ["w", "b"]
    np.testing.assert_allclose(ns["loss"], loss, rtol=1e-5)
    for got, want in zip(ns["grads"], expected):
        assert got.dtype == np.float32
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-7)
    assert "Tensor(shape=[5, 3], dtype=float32" in run.out and "float64" not in run.out


def test_quickstart_checkpoint_round_trips():
    run = run_sample("quickstart", eager=False)
    ns = run.namespace
    assert os.path.exists(os.path.join(run.directory, "model.ckpt"))
    assert ns["param_not_load"] == [] and "Saved Model to model.ckpt\n[]\n" in run.out
    trained = ns["optimizer"].parameters                 # the trained Parameters; `model` is a new Network
    loaded = dict(ns["model"].parameters_and_names())
    assert sorted(loaded) == sorted(p.name for p in trained) == sorted(ns["param_dict"])
    for p in trained:
        assert loaded[p.name] is not p
        np.testing.assert_array_equal(loaded[p.name], p)
        assert loaded[p.name].dtype == p.dtype
    # the reloaded model predicts what the trained one does (the script's last lines)
    data, label = next(iter(ns["test_dataset"]))
    again = ms.load_checkpoint(os.path.join(run.directory, "model.ckpt"))
    np.testing.assert_array_equal(again["dense_relu_sequential.4.bias"], loaded["dense_relu_sequential.4.bias"])
    predicted = ns["model"](data).argmax(1)
    assert f'Predicted: "{predicted[:10]}"' in run.out


def test_ones_like_keeps_its_operand_dtype_when_compiled():
    """`np.ones_like(a, dtype=None)` (as `ops.ones_like` calls it) is float32 for a float32 `a`: its
    shape rule once read `dtype=None` as float64, and gradients through it came out float64."""
    @ms.jit
    def weighted(z):
        return z * ms.ops.ones_like(z) + np.zeros_like(z, dtype=None)

    z = np.arange(3, dtype=np.float32)
    assert weighted(z).dtype == np.float32
    assert "float64" not in weighted.source(z)
    grad = ms.grad(lambda_free_sum)(z)
    assert grad.dtype == np.float32


def lambda_free_sum(z):
    return (z * ms.ops.ones_like(z)).sum()


def test_mnist_files_and_lenet_resize(tmp_path):
    """The samples read MNIST's idx files with graphjit.dataset; LeNet's pipeline resizes them to
    32x32 (bilinear keeps a constant image constant) and batches them as Tensors, as
    mindspore.dataset does."""
    from graphjit.dataset import MnistDataset, transforms, vision
    from graphjit.dataset.synthetic import write_idx
    images = np.repeat(np.arange(10, dtype=np.uint8)[:, None, None] * 25, 28, 1).repeat(28, 2)
    write_idx(str(tmp_path / "train-images-idx3-ubyte"), images)
    write_idx(str(tmp_path / "train-labels-idx1-ubyte"), np.arange(10))
    dataset = MnistDataset(str(tmp_path), "train", num_samples=8, shuffle=False)
    dataset = dataset.map([vision.Resize((32, 32)), vision.Rescale(1 / 255.0, 0),
                           vision.Normalize(mean=(0.1307,), std=(0.3081,)), vision.HWC2CHW()], "image")
    dataset = dataset.map(transforms.TypeCast(ms.int32), "label").batch(4)
    batches = list(dataset.create_tuple_iterator())
    assert len(batches) == 2
    data, label = batches[1]
    assert isinstance(data, ms.Tensor) and data.shape == (4, 1, 32, 32) and data.dtype == np.float32
    assert label.dtype == np.int32 and list(label.asnumpy()) == [4, 5, 6, 7]
    expected = (np.arange(4, 8, dtype=np.float32) * 25 / np.float32(255.0) - np.float32(0.1307)) / np.float32(0.3081)
    np.testing.assert_allclose(data.asnumpy()[:, 0], np.broadcast_to(expected[:, None, None], (4, 32, 32)),
                               rtol=1e-5)
