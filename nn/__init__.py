"""Layers for models: `Cell` and the building blocks of MindSpore's tutorial network."""

from .cell import Cell
from .layers import Dense, Flatten, ReLU, SequentialCell, Sigmoid, Softmax, Tanh

__all__ = ["Cell", "Dense", "Flatten", "ReLU", "SequentialCell", "Sigmoid", "Softmax", "Tanh"]
