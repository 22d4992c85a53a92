"""MindSpore's LeNet-5 (the model zoo's `LeNet5`) with only the imports changed, trained with the
quickstart's functional step: `value_and_grad` + `nn.Momentum` inside `@ms.jit def train_step`, the
loss `nn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction='mean')`, then evaluated.

Substitutions: `mindspore.dataset` is `mnist_data` (synthetic MNIST-shaped data, or the idx files of
`--mnist DIR`), resized to 32x32 as LeNet's pipeline does; the command-line options set the sizes
the model zoo's config fixes (lr 0.01, momentum 0.9, batch size 32).

    python samples/lenet.py [--mnist DIR] [--epochs 1] [--batch-size 32] [--samples 1024]
    GRAPHJIT_DISABLE=1 python samples/lenet.py    # the same, eagerly (PYNATIVE)
"""

import argparse
import os
import sys

import graphjit as ms
import graphjit.nn as nn
from graphjit.common.initializer import Normal

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "data"))
from mnist_data import MnistDataset, datapipe  # noqa: E402  (stands in for mindspore.dataset)

parser = argparse.ArgumentParser(description="MindSpore's LeNet-5 on graphjit")
parser.add_argument("--mnist", help="a directory with MNIST's idx files (default: synthetic data)")
parser.add_argument("--epochs", type=int, default=1)
parser.add_argument("--batch-size", type=int, default=32)
parser.add_argument("--lr", type=float, default=0.01)
parser.add_argument("--momentum", type=float, default=0.9)
parser.add_argument("--samples", type=int, default=1024, help="training samples (test: a quarter)")
parser.add_argument("--log-every", type=int, default=10, help="print the loss every N batches")
parser.add_argument("--seed", type=int, default=0)
args = parser.parse_args()
ms.set_seed(args.seed)

train_dataset = datapipe(MnistDataset(args.mnist, "train", args.samples), args.batch_size, resize=32)
test_dataset = datapipe(MnistDataset(args.mnist, "test", max(args.samples // 4, 1)), args.batch_size, resize=32)


class LeNet5(nn.Cell):
    """
    Lenet network

    Args:
        num_class (int): Number of classes. Default: 10.
        num_channel (int): Number of channels. Default: 1.

    Returns:
        Tensor, output tensor
    Examples:
        >>> LeNet(num_class=10)

    """
    def __init__(self, num_class=10, num_channel=1, include_top=True):
        super(LeNet5, self).__init__()
        self.conv1 = nn.Conv2d(num_channel, 6, 5, pad_mode='valid')
        self.conv2 = nn.Conv2d(6, 16, 5, pad_mode='valid')
        self.relu = nn.ReLU()
        self.max_pool2d = nn.MaxPool2d(kernel_size=2, stride=2)
        self.include_top = include_top
        if self.include_top:
            self.flatten = nn.Flatten()
            self.fc1 = nn.Dense(16 * 5 * 5, 120, weight_init=Normal(0.02))
            self.fc2 = nn.Dense(120, 84, weight_init=Normal(0.02))
            self.fc3 = nn.Dense(84, num_class, weight_init=Normal(0.02))

    def construct(self, x):
        x = self.conv1(x)
        x = self.relu(x)
        x = self.max_pool2d(x)
        x = self.conv2(x)
        x = self.relu(x)
        x = self.max_pool2d(x)
        if not self.include_top:
            return x
        x = self.flatten(x)
        x = self.relu(self.fc1(x))
        x = self.relu(self.fc2(x))
        x = self.fc3(x)
        return x


network = LeNet5(10)
net_loss = nn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction="mean")
net_opt = nn.Momentum(network.trainable_params(), args.lr, args.momentum)


def forward_fn(data, label):
    logits = network(data)
    loss = net_loss(logits, label)
    return loss, logits


grad_fn = ms.value_and_grad(forward_fn, None, net_opt.parameters, has_aux=True)


@ms.jit
def train_step(data, label):
    (loss, _), grads = grad_fn(data, label)
    net_opt(grads)
    return loss


def train(model, dataset):
    size = dataset.get_dataset_size()
    model.set_train()
    for batch, (data, label) in enumerate(dataset.create_tuple_iterator()):
        loss = train_step(data, label)

        if batch % args.log_every == 0:
            loss, current = loss.asnumpy(), batch
            print(f"loss: {loss:>7f}  [{current:>3d}/{size:>3d}]")


def test(model, dataset, loss_fn):
    num_batches = dataset.get_dataset_size()
    model.set_train(False)
    total, test_loss, correct = 0, 0, 0
    for data, label in dataset.create_tuple_iterator():
        pred = model(data)
        total += len(data)
        test_loss += loss_fn(pred, label).asnumpy()
        correct += (pred.argmax(1) == label).asnumpy().sum()
    test_loss /= num_batches
    correct /= total
    print(f"Test: \n Accuracy: {(100*correct):>0.1f}%, Avg loss: {test_loss:>8f} \n")
    return test_loss, correct


for t in range(args.epochs):
    print(f"Epoch {t+1}\n-------------------------------")
    train(network, train_dataset)
    test(network, test_dataset, net_loss)
print("Done!")
