"""MindSpore's quickstart tutorial with only the imports changed: build the network, train it with
`value_and_grad` + `nn.SGD` inside `@ms.jit def train_step`, evaluate it, save it with
`ms.save_checkpoint` (model.ckpt in the current directory, as the tutorial does), load the file into a
new Network with `ms.load_checkpoint` + `ms.load_param_into_net`, and predict.

Substitutions, each marked below: in place of the download, `write_mnist` writes synthetic MNIST as
MNIST's idx files in MNIST_Data/ (or `--mnist DIR` names a directory laid out as MNIST_Data, with
train/ and test/); the command-line options set the sizes the tutorial fixes (`--seed` seeds the
weights and the dataset's shuffle, so that runs can be compared).

    python samples/quickstart.py [--mnist DIR] [--epochs 3] [--batch-size 64] [--samples 1024]
    GRAPHJIT_DISABLE=1 python samples/quickstart.py    # the same, eagerly (PYNATIVE)
"""

import argparse
import os

import graphjit as ms
from graphjit import nn
from graphjit.dataset import vision, transforms
from graphjit.dataset import MnistDataset
from graphjit.dataset.synthetic import write_mnist  # in place of the tutorial's download

parser = argparse.ArgumentParser(description="MindSpore's quickstart on graphjit")
parser.add_argument("--mnist", help="a directory laid out as MNIST_Data (train/, test/) (default: synthetic data)")
parser.add_argument("--epochs", type=int, default=3)
parser.add_argument("--batch-size", type=int, default=64)
parser.add_argument("--samples", type=int, default=1024, help="synthetic training samples (test: a quarter)")
parser.add_argument("--log-every", type=int, default=100, help="print the loss every N batches")
parser.add_argument("--seed", type=int, default=0)
args = parser.parse_args()
ms.set_seed(args.seed)

# Download data from open datasets (here: synthetic MNIST, written as MNIST's files)
path = args.mnist or write_mnist("MNIST_Data", train=args.samples, test=max(args.samples // 4, 1))

train_dataset = MnistDataset(os.path.join(path, "train"))
test_dataset = MnistDataset(os.path.join(path, "test"))

print(train_dataset.get_col_names())


def datapipe(dataset, batch_size):
    image_transforms = [
        vision.Rescale(1.0 / 255.0, 0),
        vision.Normalize(mean=(0.1307,), std=(0.3081,)),
        vision.HWC2CHW()
    ]
    label_transform = transforms.TypeCast(ms.int32)

    dataset = dataset.map(image_transforms, 'image')
    dataset = dataset.map(label_transform, 'label')
    dataset = dataset.batch(batch_size)
    return dataset


# Map vision transforms and batch dataset
train_dataset = datapipe(train_dataset, args.batch_size)
test_dataset = datapipe(test_dataset, args.batch_size)

for image, label in test_dataset.create_tuple_iterator():
    print(f"Shape of image [N, C, H, W]: {image.shape} {image.dtype}")
    print(f"Shape of label: {label.shape} {label.dtype}")
    break

for data in test_dataset.create_dict_iterator():
    print(f"Shape of image [N, C, H, W]: {data['image'].shape} {data['image'].dtype}")
    print(f"Shape of label: {data['label'].shape} {data['label'].dtype}")
    break


# Define model
class Network(nn.Cell):
    def __init__(self):
        super().__init__()
        self.flatten = nn.Flatten()
        self.dense_relu_sequential = nn.SequentialCell(
            nn.Dense(28*28, 512),
            nn.ReLU(),
            nn.Dense(512, 512),
            nn.ReLU(),
            nn.Dense(512, 10)
        )

    def construct(self, x):
        x = self.flatten(x)
        logits = self.dense_relu_sequential(x)
        return logits


model = Network()
print(model)

# Instantiate loss function and optimizer
loss_fn = nn.CrossEntropyLoss()
optimizer = nn.SGD(model.trainable_params(), 1e-2)


# 1. Define forward function
def forward_fn(data, label):
    logits = model(data)
    loss = loss_fn(logits, label)
    return loss, logits


# 2. Get gradient function
grad_fn = ms.value_and_grad(forward_fn, None, optimizer.parameters, has_aux=True)


# 3. Define function of one-step training
@ms.jit
def train_step(data, label):
    (loss, _), grads = grad_fn(data, label)
    optimizer(grads)
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


epochs = args.epochs
for t in range(epochs):
    print(f"Epoch {t+1}\n-------------------------------")
    train(model, train_dataset)
    test(model, test_dataset, loss_fn)
print("Done!")

# Save checkpoint
ms.save_checkpoint(model, "model.ckpt")
print("Saved Model to model.ckpt")

# Instantiate a random initialized model
model = Network()
# Load checkpoint and load parameter to model
param_dict = ms.load_checkpoint("model.ckpt")
param_not_load, _ = ms.load_param_into_net(model, param_dict)
print(param_not_load)

model.set_train(False)
for data, label in test_dataset:
    pred = model(data)
    predicted = pred.argmax(1)
    print(f'Predicted: "{predicted[:10]}", Actual: "{label[:10]}"')
    break
