"""Benchmark: one training step's forward + backward pass of the seed Network with softmax cross-entropy.

Side by side in one process, for the seed `Network` (Flatten -> Dense(784, 512) -> ReLU -> Dense(512, 512)
-> ReLU -> Dense(512, 10)) on a batch of 64 float32 images with integer labels, all with the same weights:

  * hand-written NumPy: the forward pass and the backward pass written out by hand (what a careful
    NumPy programmer writes: `dz = softmax - onehot`, `dW = dz.T @ h`, ...);
  * graphjit: `value_and_grad(forward_fn, None, model.trainable_params(), has_aux=True)` over a
    function jitted at O2: forward and backward compiled into one generated NumPy function;
  * autograd (when installed): `autograd.value_and_grad` of the same loss written with autograd.numpy;
  * JAX on CPU (when installed): `jax.jit(jax.value_and_grad(...))`.

Steady-state variants run in interleaved rounds (the first variant rotating) with the garbage collector
off; figures are medians over rounds of the per-step time. Peak memory is tracemalloc's peak over one
step (NumPy reports its allocations to tracemalloc). First call: a fresh gradient function compiled and
run, median over repetitions, once the compiler is loaded. All gradients are checked against the
hand-written ones.

BLAS is pinned to one thread (OPENBLAS_NUM_THREADS=1 and friends, set before NumPy loads) unless the
environment says otherwise: on a shared 2-core machine multi-threaded BLAS swings tenfold.

Targets printed next to the figures: graphjit <= 1.15x hand-written, peak memory <= 1.1x hand-written,
first call <= 300 ms.

    python benchmarks/bench_grad.py            # full run, about a minute
    python benchmarks/bench_grad.py --quick    # smoke run for tests
"""

from __future__ import annotations

import os

for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")
os.environ.setdefault("GRAPHJIT_CACHE", "0")

import argparse  # noqa: E402
import gc  # noqa: E402
import statistics  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
import tracemalloc  # noqa: E402

import numpy as np  # noqa: E402

import graphjit as ms  # noqa: E402
from bench_network import load_network_class  # noqa: E402  (the seed Network, samples/network.py)

BATCH = 64
SPEED_TARGET, MEMORY_TARGET, FIRST_CALL_TARGET_MS = 1.15, 1.1, 300.0


def cross_entropy(logits, labels):
    """Mean softmax cross-entropy, the way the MindSpore tutorials' loss computes it."""
    z = logits - logits.max(axis=1, keepdims=True)
    logp = z - np.log(np.exp(z).sum(axis=1, keepdims=True))
    return -logp[np.arange(labels.shape[0]), labels].mean()


def make_forward(model):
    def forward_fn(data, label):
        logits = model(data)
        return cross_entropy(logits, label), logits
    return forward_fn


def hand_written(weights, x, labels):
    """Forward and backward by hand; returns (loss, [dW1, db1, dW2, db2, dW3, db3])."""
    loss, grads, _ = dense_head(weights, x.reshape(x.shape[0], -1), labels)
    return loss, grads


def dense_head(weights, h0, labels, input_grad: bool = False):
    """Three Dense layers (ReLU between) and the mean softmax cross-entropy, forward and backward by
    hand: (loss, [dW1, db1, dW2, db2, dW3, db3], the gradient of `h0` when `input_grad`)."""
    w1, b1, w2, b2, w3, b3 = weights
    a1 = h0 @ w1.T + b1
    h1 = np.maximum(a1, 0)
    a2 = h1 @ w2.T + b2
    h2 = np.maximum(a2, 0)
    logits = h2 @ w3.T + b3
    z = logits - logits.max(axis=1, keepdims=True)
    e = np.exp(z)
    s = e.sum(axis=1, keepdims=True)
    n = labels.shape[0]
    loss = -(z[np.arange(n), labels] - np.log(s[:, 0])).mean()
    dz = e / s
    dz[np.arange(n), labels] -= 1
    dz /= n
    dw3, db3 = dz.T @ h2, dz.sum(axis=0)
    d2 = dz @ w3
    d2[a2 <= 0] = 0
    dw2, db2 = d2.T @ h1, d2.sum(axis=0)
    d1 = d2 @ w2
    d1[a1 <= 0] = 0
    dw1, db1 = d1.T @ h0, d1.sum(axis=0)
    return loss, [dw1, db1, dw2, db2, dw3, db3], d1 @ w1 if input_grad else None


def autograd_step(weights, x, labels):
    import autograd
    import autograd.numpy as anp

    def loss(ws):
        h = x.reshape(x.shape[0], -1)
        for k in range(3):
            h = anp.dot(h, ws[2 * k].T) + ws[2 * k + 1]
            if k < 2:
                h = anp.maximum(h, 0)
        z = h - anp.max(h, axis=1, keepdims=True)
        logp = z - anp.log(anp.sum(anp.exp(z), axis=1, keepdims=True))
        return -anp.mean(logp[np.arange(labels.shape[0]), labels])
    step = autograd.value_and_grad(loss)
    plain = [w.view(np.ndarray) for w in weights]        # autograd traces plain arrays only
    return lambda: step(plain)


def jax_step(weights, x, labels):
    import jax
    import jax.numpy as jnp

    def loss(ws, x, labels):
        h = x.reshape(x.shape[0], -1)
        for k in range(3):
            h = h @ ws[2 * k].T + ws[2 * k + 1]
            if k < 2:
                h = jnp.maximum(h, 0)
        z = h - h.max(axis=1, keepdims=True)
        logp = z - jnp.log(jnp.exp(z).sum(axis=1, keepdims=True))
        return -logp[jnp.arange(labels.shape[0]), labels].mean()
    step = jax.jit(jax.value_and_grad(loss))
    ws = [jnp.asarray(w) for w in weights]
    xj, lj = jnp.asarray(x), jnp.asarray(labels)
    return lambda: jax.block_until_ready(step(ws, xj, lj))


def graphjit_step(model, forward_fn, x, labels):
    jitted = ms.jit(forward_fn, jit_config=ms.JitConfig(jit_level="O2"))
    grad_fn = ms.value_and_grad(jitted, None, model.trainable_params(), has_aux=True)
    return lambda: grad_fn(x, labels), grad_fn


def interleaved(variants: dict, rounds: int, calls: int) -> dict:
    times = {name: [] for name in variants}
    names = list(variants)
    gc.disable()
    try:
        for r in range(rounds):
            for name in names[r % len(names):] + names[:r % len(names)]:
                fn = variants[name]
                start = time.perf_counter()
                for _ in range(calls):
                    fn()
                times[name].append((time.perf_counter() - start) / calls)
    finally:
        gc.enable()
    return {name: statistics.median(t) for name, t in times.items()}


def print_steps(title: str, medians: dict, rounds: int, calls: int) -> float:
    """The table of per-step medians against the first variant (the hand-written reference); returns
    that reference's time. Shared by bench_grad, bench_train and bench_lenet."""
    base = next(iter(medians.values()))
    width = max(28, *(len(name) for name in medians)) + 2
    print(f"{title}, batch {BATCH}, float32, one BLAS thread ({rounds} rounds x {calls} steps, medians)")
    print(f"{'variant':{width}} {'ms/step':>9} {'x hand':>8}")
    for name, t in medians.items():
        print(f"{name:{width}} {t * 1e3:9.3f} {t / base:8.2f}")
    return base


def peak_bytes(fn) -> int:
    fn()
    gc.collect()
    tracemalloc.start()
    try:
        fn()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def first_call_ms(model, forward_fn, x, labels, repeats: int) -> float:
    samples = []
    for _ in range(repeats):
        run, _ = graphjit_step(model, forward_fn, x, labels)
        start = time.perf_counter()
        run()
        samples.append((time.perf_counter() - start) * 1e3)
    return statistics.median(samples)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="a smoke run (few rounds)")
    opts = parser.parse_args(argv)
    rounds, calls, repeats = (3, 2, 2) if opts.quick else (15, 10, 7)

    model = load_network_class()()
    rng = np.random.default_rng(0)
    x = rng.standard_normal((BATCH, 1, 28, 28)).astype(np.float32)
    labels = rng.integers(0, 10, BATCH)
    forward_fn = make_forward(model)
    weights = model.trainable_params()

    ours, grad_fn = graphjit_step(model, forward_fn, x, labels)
    (loss, _), grads = ours()
    ref_loss, ref_grads = hand_written(weights, x, labels)
    np.testing.assert_allclose(loss, ref_loss, rtol=1e-5)
    for g, r in zip(grads, ref_grads):
        np.testing.assert_allclose(g, r, rtol=2e-4, atol=1e-6)
        assert g.dtype == r.dtype == np.float32

    variants = {"hand-written NumPy": lambda: hand_written(weights, x, labels), "graphjit value_and_grad": ours}
    for name, make in (("autograd", autograd_step), ("JAX jit (CPU)", jax_step)):
        try:
            variants[name] = make(weights, x, labels)
        except ImportError:
            print(f"({name} is not installed: skipped)")
    for name, fn in variants.items():
        fn()
    medians = interleaved(variants, rounds, calls)
    memory = {name: peak_bytes(variants[name]) for name in ("hand-written NumPy", "graphjit value_and_grad")}
    kept = grad_fn.cache_info()["workspace_bytes"]   # buffers graphjit keeps between steps: part of its memory
    memory["graphjit value_and_grad"] += kept
    first = first_call_ms(model, forward_fn, x, labels, repeats)

    base = print_steps("Seed Network + softmax cross-entropy", medians, rounds, calls)
    ratio = medians["graphjit value_and_grad"] / base
    mem = memory["graphjit value_and_grad"] / memory["hand-written NumPy"]
    print(f"peak memory per step: hand-written {memory['hand-written NumPy'] / 2**20:.2f} MiB, graphjit "
          f"{memory['graphjit value_and_grad'] / 2**20:.2f} MiB ({mem:.2f}x; of which {kept / 2**20:.2f} MiB kept "
          f"between steps)")
    print(f"first call (compile + run): {first:.0f} ms")
    print(f"targets: speed {ratio:.2f}x <= {SPEED_TARGET}x {'met' if ratio <= SPEED_TARGET else 'MISSED'}; "
          f"memory {mem:.2f}x <= {MEMORY_TARGET}x {'met' if mem <= MEMORY_TARGET else 'MISSED'}; "
          f"first call {first:.0f} ms <= {FIRST_CALL_TARGET_MS:.0f} ms "
          f"{'met' if first <= FIRST_CALL_TARGET_MS else 'MISSED'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
