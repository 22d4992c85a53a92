"""The training samples (quickstart, training tutorial, LeNet-5), run as scripts at small sizes: the
loss decreases, and GRAPH (the `@ms.jit` step) equals PYNATIVE (`GRAPHJIT_DISABLE=1`) step by step:
every logged loss and the final weights."""

import numpy as np
import pytest

from sample_runs import SIZES, accuracies, run_sample

TRAINING = ["quickstart", "train_tutorial", "lenet"]
# the trained network in each sample's globals (the quickstart's `model` is reloaded from its checkpoint)
NETWORK = {"quickstart": "model", "train_tutorial": "model", "lenet": "network"}


def batches(name):
    samples, batch_size, epochs = (int(SIZES[name][k]) for k in (1, 3, 5))
    return -(-samples // batch_size) * epochs


@pytest.mark.parametrize("name", TRAINING)
def test_graph_equals_pynative_step_by_step(name):
    graph, eager = run_sample(name, eager=False), run_sample(name, eager=True)
    assert len(graph.losses) == batches(name) and "Done!" in graph.out
    np.testing.assert_allclose(graph.losses, eager.losses, rtol=1e-5)
    graph_net, eager_net = graph.namespace[NETWORK[name]], eager.namespace[NETWORK[name]]
    pairs = list(zip(graph_net.parameters_and_names(), eager_net.parameters_and_names()))
    assert pairs
    for (n1, p1), (n2, p2) in pairs:
        assert n1 == n2
        np.testing.assert_allclose(p1, p2, rtol=1e-5, atol=1e-7)
    assert graph.namespace["train_step"].cache_info()["compiles"] == 1


@pytest.mark.parametrize("name", TRAINING)
def test_loss_decreases(name):
    run = run_sample(name, eager=False)
    epochs = int(SIZES[name][5])
    per_epoch = np.array(run.losses).reshape(epochs, -1).mean(axis=1)
    assert per_epoch[-1] < per_epoch[0] - 0.02, per_epoch
    if name != "lenet":   # LeNet's Normal(0.02) layers only start to learn in these 16 steps
        assert accuracies(run.out)[-1] > 50.0


@pytest.mark.parametrize("name", TRAINING)
def test_train_step_is_one_graph(name):
    """The optimizer's update is inlined in the jitted step: no warning, no fallback."""
    run = run_sample(name, eager=False)
    assert not run.warnings, [str(w.message) for w in run.warnings]
    data, label = next(iter(run.namespace["train_dataset"]))
    source = run.namespace["train_step"].source(data, label)
    assert "fallback" not in source
    if name != "lenet":       # SGD: one in-place update per Parameter
        assert source.count(" -= learning_rate * ") == 6
