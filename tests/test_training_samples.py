"""The training samples (quickstart, training tutorial): the loss decreases, and GRAPH (the `@ms.jit`
step) equals PYNATIVE (`GRAPHJIT_DISABLE=1`) step by step: every logged loss and the final weights."""

import re
import runpy
import sys

import numpy as np
import pytest

from locations import SAMPLES

ARGS = ["--samples", "96", "--batch-size", "16", "--epochs", "2", "--log-every", "1"]


def run_sample(name, monkeypatch, capsys, eager):
    if eager:
        monkeypatch.setenv("GRAPHJIT_DISABLE", "1")
    else:
        monkeypatch.delenv("GRAPHJIT_DISABLE", raising=False)
    monkeypatch.setattr(sys, "argv", [name] + ARGS)
    capsys.readouterr()
    namespace = runpy.run_path(str(SAMPLES / f"{name}.py"), run_name="__main__")
    out = capsys.readouterr().out
    losses = [float(v) for v in re.findall(r"^loss: +([0-9.]+)", out, re.M)]
    return namespace, losses, out


@pytest.mark.parametrize("name", ["quickstart", "train_tutorial"])
def test_graph_equals_pynative_step_by_step(name, monkeypatch, capsys):
    graph, graph_losses, out = run_sample(name, monkeypatch, capsys, eager=False)
    eager, eager_losses, _ = run_sample(name, monkeypatch, capsys, eager=True)
    assert len(graph_losses) == 12 and "Done!" in out
    np.testing.assert_allclose(graph_losses, eager_losses, rtol=1e-5)
    for (n1, p1), (n2, p2) in zip(graph["model"].parameters_and_names(), eager["model"].parameters_and_names()):
        assert n1 == n2
        np.testing.assert_allclose(p1, p2, rtol=1e-5, atol=1e-7)
    assert graph["train_step"].cache_info()["compiles"] == 1


@pytest.mark.parametrize("name", ["quickstart", "train_tutorial"])
def test_loss_decreases(name, monkeypatch, capsys):
    _, losses, out = run_sample(name, monkeypatch, capsys, eager=False)
    assert np.mean(losses[-3:]) < np.mean(losses[:3]) - 0.05
    accuracies = [float(a) for a in re.findall(r"Accuracy: ([0-9.]+)%", out)]
    assert accuracies[-1] > 50.0


def test_train_step_is_one_graph(monkeypatch, capsys):
    """The optimizer's update is inlined in the jitted step: no fallback, the update in the source."""
    import warnings
    import graphjit as ms
    with warnings.catch_warnings():
        warnings.simplefilter("error", ms.GraphjitWarning)
        namespace, _, _ = run_sample("quickstart", monkeypatch, capsys, eager=False)
    data, label = next(iter(namespace["train_dataset"]))
    source = namespace["train_step"].source(data, label)
    assert source.count(" -= learning_rate * ") == 6 and "fallback" not in source
