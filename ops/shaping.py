"""Joining and shaping ops (`ops.cat`, `ops.stack`, `ops.reshape`, `ops.transpose`, `ops.squeeze`,
`ops.expand_dims`, `ops.flatten`, ...), with MindSpore's signatures: plain NumPy, inlined into graphs
by `jit`. On Tensors they give Tensors (tensor.py).
"""

import numpy as np

__all__ = ["cat", "concat", "stack", "reshape", "transpose", "permute", "squeeze", "expand_dims", "unsqueeze",
           "flatten"]


def cat(tensors, axis=0):
    """Join `tensors` along an existing `axis`."""
    return np.concatenate(tensors, axis=axis)


def concat(tensors, axis=0):
    """`ops.concat`: the same as `ops.cat`."""
    return np.concatenate(tensors, axis=axis)


def stack(tensors, axis=0):
    """Join `tensors` (all of one shape) along a new `axis`."""
    return np.stack(tensors, axis=axis)


def reshape(input, shape):
    """`input` with a new `shape` (one dimension may be -1)."""
    return input.reshape(shape)


def transpose(input, input_perm):
    """`input`'s dimensions in the order `input_perm`."""
    return np.transpose(input, input_perm)


def permute(input, axis):
    """`input`'s dimensions in the order `axis`."""
    return np.transpose(input, axis)


def squeeze(input, axis=None):
    """`input` without its size-1 dimensions (all, or those of `axis`: an int, tuple or list)."""
    if isinstance(axis, list):
        axis = tuple(axis)
    return np.squeeze(input, axis=axis)


def expand_dims(input_x, axis):
    """`input_x` with a new size-1 dimension at `axis`."""
    return np.expand_dims(input_x, axis)


def unsqueeze(input, dim):
    """`input` with a new size-1 dimension at `dim`."""
    return np.expand_dims(input, dim)


def flatten(input, order="C", *, start_dim=1, end_dim=-1):
    """Dimensions `start_dim` to `end_dim` of `input` merged into one (MindSpore's default keeps the
    first, batch, dimension); a 0-d input gives a 1-d result."""
    if order not in ("C", "F"):
        raise ValueError("flatten: order must be 'C' or 'F'")
    shape = input.shape
    rank = len(shape)
    if rank == 0:
        return input.reshape((1,))
    first = start_dim + rank if start_dim < 0 else start_dim
    last = end_dim + rank if end_dim < 0 else end_dim
    if not 0 <= first <= last < rank:
        raise ValueError("flatten: start_dim and end_dim must be dimensions of the input, start_dim <= end_dim")
    if order == "F":
        return input.reshape(shape[:first] + (-1,) + shape[last + 1:], order="F")
    return input.reshape(shape[:first] + (-1,) + shape[last + 1:])
