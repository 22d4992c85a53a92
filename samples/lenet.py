"""MindSpore's LeNet-5 (the model zoo's `LeNet5`) with only the imports changed, trained with the
quickstart's functional step: `value_and_grad` + `nn.Momentum` inside `@ms.jit def train_step`, the
loss `nn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction='mean')`, then evaluated.

Substitutions: in place of a download, `write_mnist` writes synthetic MNIST as MNIST's idx files in
MNIST_Data/ (or `--mnist DIR` names a directory laid out as MNIST_Data, with train/ and test/); the
model zoo's `create_dataset` (resize to 32x32, rescale, normalize, HWC -> CHW, shuffle, batch) runs
on `graphjit.dataset`; the command-line options set the sizes the model zoo's config fixes (lr 0.01,
momentum 0.9, batch size 32).

    python samples/lenet.py [--mnist DIR] [--epochs 1] [--batch-size 32] [--samples 1024]
    GRAPHJIT_DISABLE=1 python samples/lenet.py    # the same, eagerly (PYNATIVE)
"""

import argparse
import os

import graphjit as ms
import graphjit.dataset as ds
import graphjit.dataset.transforms as C
import graphjit.dataset.vision as CV
import graphjit.nn as nn
from graphjit.common.initializer import Normal
from graphjit.dataset.synthetic import write_mnist  # in place of a download
from graphjit.dataset.vision import Inter

parser = argparse.ArgumentParser(description="MindSpore's LeNet-5 on graphjit")
parser.add_argument("--mnist", help="a directory laid out as MNIST_Data (train/, test/) (default: synthetic data)")
parser.add_argument("--epochs", type=int, default=1)
parser.add_argument("--batch-size", type=int, default=32)
parser.add_argument("--lr", type=float, default=0.01)
parser.add_argument("--momentum", type=float, default=0.9)
parser.add_argument("--samples", type=int, default=1024, help="synthetic training samples (test: a quarter)")
parser.add_argument("--log-every", type=int, default=10, help="print the loss every N batches")
parser.add_argument("--seed", type=int, default=0)
args = parser.parse_args()
ms.set_seed(args.seed)



def create_dataset(data_path, batch_size=32, repeat_size=1, num_parallel_workers=1):
    """The model zoo's LeNet-5 data pipeline."""
    mnist_ds = ds.MnistDataset(data_path)
    resize_height, resize_width = 32, 32
    rescale = 1.0 / 255.0
    shift = 0.0
    rescale_nml = 1 / 0.3081
    shift_nml = -1 * 0.1307 / 0.3081

    resize_op = CV.Resize((resize_height, resize_width), interpolation=Inter.LINEAR)
    rescale_nml_op = CV.Rescale(rescale_nml, shift_nml)
    rescale_op = CV.Rescale(rescale, shift)
    hwc2chw_op = CV.HWC2CHW()
    type_cast_op = C.TypeCast(ms.int32)

    mnist_ds = mnist_ds.map(operations=type_cast_op, input_columns="label", num_parallel_workers=num_parallel_workers)
    mnist_ds = mnist_ds.map(operations=resize_op, input_columns="image", num_parallel_workers=num_parallel_workers)
    mnist_ds = mnist_ds.map(operations=rescale_op, input_columns="image", num_parallel_workers=num_parallel_workers)
    mnist_ds = mnist_ds.map(operations=rescale_nml_op, input_columns="image",
                            num_parallel_workers=num_parallel_workers)
    mnist_ds = mnist_ds.map(operations=hwc2chw_op, input_columns="image", num_parallel_workers=num_parallel_workers)

    buffer_size = 10000
    mnist_ds = mnist_ds.shuffle(buffer_size=buffer_size)
    mnist_ds = mnist_ds.batch(batch_size, drop_remainder=True)
    mnist_ds = mnist_ds.repeat(repeat_size)
    return mnist_ds


path = args.mnist or write_mnist("MNIST_Data", train=args.samples, test=max(args.samples // 4, 1))
train_dataset = create_dataset(os.path.join(path, "train"), args.batch_size)
test_dataset = create_dataset(os.path.join(path, "test"), args.batch_size)


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
