"""Benchmark: MindSpore's Quick Start data pipeline on graphjit.dataset, over MNIST-sized synthetic
data (60 000 x 28 x 28 written as MNIST's idx files), batch 64:

    MnistDataset -> map([Rescale(1/255, 0), Normalize((0.1307,), (0.3081,)), HWC2CHW()], 'image')
                 -> map(TypeCast(int32), 'label') -> batch(64)

  * samples per second over one epoch (shuffled, as MnistDataset is by default), with the default
    settings (8 map threads, prefetch thread) and with one map thread; beside it, hand-written
    NumPy doing the same arithmetic on the whole array at once (the ceiling: no pipeline at all);
  * the share of a jitted training step's wall time spent waiting for data: the Quick Start
    `Network` (samples/network.py) trained with `value_and_grad` + `nn.SGD` inside `@ms.jit`, one
    step per batch; "waiting" is the time spent in `next(iterator)`. Target: <= 5 %. Beside it, the
    same steps over batches built beforehand: the wall time without a pipeline running at all.
  * MindSpore's own dataset engine on the same files, when `mindspore` is installed.

BLAS is pinned to one thread (as the other benchmarks do) unless the environment says otherwise.

    python benchmarks/bench_dataset.py            # full run (60 000 samples)
    python benchmarks/bench_dataset.py --quick    # smoke run for tests (6 000 samples)
"""

from __future__ import annotations

import os

for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")
os.environ.setdefault("GRAPHJIT_CACHE", "0")

import argparse  # noqa: E402
import statistics  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402

import numpy as np  # noqa: E402

import graphjit as ms  # noqa: E402
from graphjit import nn  # noqa: E402
from graphjit.dataset import MnistDataset, config, transforms, vision  # noqa: E402
from graphjit.dataset.parallel import CORES  # noqa: E402
from graphjit.dataset.synthetic import write_mnist  # noqa: E402
from bench_network import load_network_class  # noqa: E402

BATCH = 64
WAIT_TARGET = 0.05


def quick_start_pipeline(path: str, workers=None):
    dataset = MnistDataset(path)
    image_transforms = [vision.Rescale(1.0 / 255.0, 0), vision.Normalize(mean=(0.1307,), std=(0.3081,)),
                        vision.HWC2CHW()]
    dataset = dataset.map(image_transforms, "image", num_parallel_workers=workers)
    dataset = dataset.map(transforms.TypeCast(ms.int32), "label", num_parallel_workers=workers)
    return dataset.batch(BATCH)


def mindspore_pipeline(path: str):
    """The same pipeline on MindSpore's engine; ImportError when MindSpore is not installed."""
    import mindspore
    import mindspore.dataset as msds
    dataset = msds.MnistDataset(path)
    dataset = dataset.map([msds.vision.Rescale(1.0 / 255.0, 0), msds.vision.Normalize(mean=(0.1307,), std=(0.3081,)),
                           msds.vision.HWC2CHW()], "image")
    dataset = dataset.map(msds.transforms.TypeCast(mindspore.int32), "label")
    return dataset.batch(BATCH)


def epoch_seconds(make, output_numpy=False) -> tuple:
    """(seconds for one epoch, samples seen)."""
    dataset = make()
    start, count = time.perf_counter(), 0
    for image, _ in dataset.create_tuple_iterator(num_epochs=1, output_numpy=output_numpy):
        count += len(image)
    return time.perf_counter() - start, count


def hand_written_seconds(path: str) -> tuple:
    """The pipeline's arithmetic on the whole array, then 64-row slices: no pipeline at all."""
    from graphjit.dataset.readers import IDX_IMAGES, IDX_LABELS, read_idx
    start = time.perf_counter()
    images = read_idx(os.path.join(path, "train-images-idx3-ubyte"), IDX_IMAGES)[..., None]
    labels = read_idx(os.path.join(path, "train-labels-idx1-ubyte"), IDX_LABELS)
    order = np.random.default_rng(0).permutation(len(labels))
    images, labels = images[order], labels[order]
    data = np.ascontiguousarray(((images.astype(np.float32) / np.float32(255) - np.float32(0.1307))
                                 / np.float32(0.3081)).transpose(0, 3, 1, 2))
    labels = labels.astype(np.int32)
    count = 0
    for s in range(0, len(labels), BATCH):
        count += len(ms.Tensor.from_numpy(data[s:s + BATCH]))
        ms.Tensor.from_numpy(labels[s:s + BATCH])
    return time.perf_counter() - start, count


def train_step_for(model):
    loss_fn = nn.CrossEntropyLoss()
    optimizer = nn.SGD(model.trainable_params(), 1e-2)

    def forward_fn(data, label):
        logits = model(data)
        return loss_fn(logits, label), logits
    grad_fn = ms.value_and_grad(forward_fn, None, optimizer.parameters, has_aux=True)

    @ms.jit
    def train_step(data, label):
        (loss, _), grads = grad_fn(data, label)
        optimizer(grads)
        return loss
    return train_step


def training_wait(path: str, steps: int) -> dict:
    """Train `steps` batches from the pipeline: the wall time and the time spent in
    `next(iterator)`; then the same steps over batches built beforehand (no pipeline running)."""
    ms.set_seed(0)
    model = load_network_class()()
    model.set_train()
    step = train_step_for(model)
    dataset = quick_start_pipeline(path)
    data, label = next(dataset.create_tuple_iterator())
    step(data, label)                                     # compile once, outside the timing
    waits, steps_done = 0.0, 0
    iterator = dataset.create_tuple_iterator()
    start = time.perf_counter()
    while steps_done < steps:
        t0 = time.perf_counter()
        try:
            data, label = next(iterator)
        except StopIteration:
            continue                                      # the next epoch starts on the next call
        waits += time.perf_counter() - t0
        step(data, label)
        steps_done += 1
    total = time.perf_counter() - start
    iterator.stop()
    built = [(ms.Tensor.from_numpy(np.array(x)), ms.Tensor.from_numpy(np.array(y)))
             for (x, y), _ in zip(dataset.create_tuple_iterator(num_epochs=1), range(steps))]
    start = time.perf_counter()
    for k in range(steps):
        step(*built[k % len(built)])
    prebuilt = time.perf_counter() - start
    return {"total": total, "wait": waits, "steps": steps, "prebuilt": prebuilt}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="a smoke run (6 000 samples, few steps)")
    parser.add_argument("--samples", type=int, default=None)
    parser.add_argument("--rounds", type=int, default=None)
    opts = parser.parse_args(argv)
    samples = opts.samples or (6000 if opts.quick else 60000)
    rounds = opts.rounds or (1 if opts.quick else 3)
    steps = 30 if opts.quick else 938

    with tempfile.TemporaryDirectory(prefix="graphjit-bench-dataset-") as directory:
        write_mnist(directory, train=samples, test=16)
        path = os.path.join(directory, "train")
        variants = {
            "hand-written NumPy (whole array)": lambda: hand_written_seconds(path),
            f"graphjit.dataset (default: {min(config.get_num_parallel_workers(), CORES)} map threads)":
                lambda: epoch_seconds(lambda: quick_start_pipeline(path)),
            "graphjit.dataset (1 map thread)": lambda: epoch_seconds(lambda: quick_start_pipeline(path, 1)),
            "graphjit.dataset (output_numpy)": lambda: epoch_seconds(lambda: quick_start_pipeline(path), True),
        }
        try:
            import mindspore  # noqa: F401
            variants["MindSpore dataset engine"] = lambda: epoch_seconds(lambda: mindspore_pipeline(path), True)
            mindspore_note = None
        except ImportError:
            mindspore_note = "MindSpore dataset engine: not installed here (its row is skipped)"
        times = {name: [] for name in variants}
        for _ in range(rounds):
            for name, fn in variants.items():
                seconds, count = fn()
                assert count == samples, (name, count)
                times[name].append(seconds)
        print(f"Quick Start pipeline over {samples} synthetic MNIST samples, batch {BATCH} "
              f"(median of {rounds} epoch(s), one BLAS thread)")
        width = max(len(n) for n in variants) + 2
        print(f"{'pipeline':{width}} {'s/epoch':>9} {'samples/s':>12}")
        for name, t in times.items():
            median = statistics.median(t)
            print(f"{name:{width}} {median:9.3f} {samples / median:12,.0f}")
        if mindspore_note:
            print(mindspore_note)

        result = training_wait(path, steps)
    share = result["wait"] / result["total"]
    print()
    print(f"Training the Quick Start Network (@ms.jit step: value_and_grad + nn.SGD), {result['steps']} steps of "
          f"batch {BATCH}")
    print(f"{'wall time':28} {result['total']:9.3f} s   ({result['total'] / result['steps'] * 1e3:.3f} ms/step)")
    print(f"{'waiting for data':28} {result['wait']:9.3f} s   ({result['wait'] / result['steps'] * 1e3:.3f} ms/step)")
    print(f"{'the same steps, batches built':28} {result['prebuilt']:9.3f} s   "
          f"({result['prebuilt'] / result['steps'] * 1e3:.3f} ms/step: no pipeline running)")
    verdict = "met" if share <= WAIT_TARGET else "MISSED"
    if opts.quick:
        verdict += " (a quick run: too few steps to judge, the first batch dominates)"
    print(f"target: waiting {share:.1%} of the wall time <= {WAIT_TARGET:.0%} {verdict}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
