"""nn.Embedding (lookup, one-hot form, padding_idx, gradients with repeated ids), nn.CellList (list
operations, parameter names, compiled iteration) and Cell.set_train / set_grad."""

import numpy as np
import pytest

import graphjit as gj
from graphjit import nn
from layer_testing import CONFIGS, assert_identical, check_gradient, run_layer_both

IDS = np.array([[1, 2, 2], [9, 0, 1]], np.int32)


def test_embedding_lookup_and_defaults():
    gj.set_seed(0)
    emb = nn.Embedding(10, 4)
    assert [n for n, _ in emb.parameters_and_names()] == ["embedding_table"]
    assert emb.embedding_table.shape == (10, 4) and emb.embedding_table.dtype == np.float32
    assert 0.005 < emb.embedding_table.std() < 0.02                       # 'normal': N(0, 0.01^2)
    out = emb(IDS)
    assert out.shape == (2, 3, 4)
    np.testing.assert_array_equal(out, np.asarray(emb.embedding_table)[IDS])


def test_one_hot_form_and_padding_idx():
    gj.set_seed(0)
    plain = nn.Embedding(10, 4, padding_idx=0)
    np.testing.assert_array_equal(plain.embedding_table[0], 0)
    one_hot = nn.Embedding(10, 4, use_one_hot=True, embedding_table=np.asarray(plain.embedding_table))
    np.testing.assert_allclose(one_hot(IDS), plain(IDS), rtol=1e-7)
    with pytest.raises(ValueError, match="padding_idx must be in"):
        nn.Embedding(10, 4, padding_idx=10)


@pytest.mark.parametrize("level, mode", CONFIGS)
@pytest.mark.parametrize("use_one_hot", [False, True])
def test_embedding_compiled_equals_eager(use_one_hot, level, mode):
    run_layer_both(lambda: nn.Embedding(10, 4, use_one_hot=use_one_hot), [IDS], level, mode)


@pytest.mark.parametrize("use_one_hot", [False, True])
@pytest.mark.parametrize("jitted", [False, True])
def test_embedding_table_gradient_accumulates_repeated_ids(use_one_hot, jitted):
    emb = nn.Embedding(10, 4, use_one_hot=use_one_hot, embedding_table="normal")
    emb.embedding_table = gj.Parameter(np.asarray(emb.embedding_table, np.float64), "embedding_table")
    w = np.random.default_rng(0).standard_normal((2, 3, 4))

    def loss():
        return (emb(IDS) * w).sum()
    fn = gj.jit(loss, jit_level="O2") if jitted else loss
    (g,) = gj.grad(fn, None, [emb.embedding_table])()
    expected = np.zeros((10, 4))
    np.add.at(expected, IDS, w)
    np.testing.assert_allclose(g, expected, rtol=1e-12)
    table0 = np.array(emb.embedding_table)

    def of_table(t):
        emb.embedding_table[...] = t
        value = loss()
        emb.embedding_table[...] = table0
        return value
    check_gradient(of_table, table0.copy(), g)


class Stack(nn.Cell):
    def __init__(self):
        super().__init__()
        self.layers = nn.CellList([nn.Dense(4, 5), nn.ReLU()])
        self.layers.append(nn.Dense(5, 2))
        self.layers.insert(1, nn.BatchNorm1d(5))

    def construct(self, x):
        x = self.layers[0](x)
        for k in range(1, len(self.layers)):
            x = self.layers[k](x)
        return x


class IterStack(Stack):
    def construct(self, x):
        for layer in self.layers:
            x = layer(x)
        return x


def test_celllist_is_list_like():
    cells = nn.CellList()
    assert len(cells) == 0
    cells.append(nn.Dense(2, 3)).extend([nn.ReLU(), nn.Dense(3, 1)])
    cells.insert(0, nn.Tanh())
    assert [type(c).__name__ for c in cells] == ["Tanh", "Dense", "ReLU", "Dense"]
    assert isinstance(cells[-1], nn.Dense) and len(cells) == 4
    assert [n for n, _ in cells.parameters_and_names()] == ["1.weight", "1.bias", "3.weight", "3.bias"]
    cells[2] = nn.Sigmoid()
    assert isinstance(cells[2], nn.Sigmoid)
    assert [type(c).__name__ for c in cells[1:3]] == ["Dense", "Sigmoid"]
    with pytest.raises(TypeError, match="CellList takes Cells, not int"):
        cells.append(3)
    with pytest.raises(TypeError, match="CellList is a container"):
        cells(np.ones(2))


def test_celllist_parameter_names_in_a_network():
    names = [n for n, _ in Stack().parameters_and_names()]
    assert names == ["layers.0.weight", "layers.0.bias", "layers.1.gamma", "layers.1.beta", "layers.1.moving_mean",
                     "layers.1.moving_variance", "layers.3.weight", "layers.3.bias"]


@pytest.mark.parametrize("level, mode", CONFIGS)
@pytest.mark.parametrize("make", [Stack, IterStack], ids=["indexed", "iterated"])
def test_celllist_network_compiled_equals_eager(make, level, mode):
    x = np.random.default_rng(0).standard_normal((3, 4)).astype(np.float32)
    run_layer_both(make, [x], level, mode, train_modes=(True, False, True))


@pytest.mark.parametrize("make", [Stack, IterStack], ids=["indexed", "iterated"])
def test_appending_to_a_celllist_after_compiling_is_seen(make):
    net = make()
    x = np.ones((3, 4), np.float32)
    jitted = gj.jit(net.construct, jit_level="O2")
    jitted(x)
    net.layers.append(nn.Dense(2, 7))
    assert jitted(x).shape == (3, 7)
    assert_identical(jitted(x), net.construct(x))


def test_set_train_and_set_grad_return_the_cell_and_reach_sub_cells():
    net = Stack()
    assert net.training is False
    assert net.set_train() is net
    assert all(cell.training for _, cell in net.cells_and_names())
    assert net.set_train(False) is net and not net.layers[1].training
    assert net.set_grad() is net and net.requires_grad is True
    assert net.set_grad(False).requires_grad is False
