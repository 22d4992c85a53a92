"""`nn.GraphCell`: MindSpore's Cell that runs a graph `load` read back, here what `graphjit.load` returns."""

from __future__ import annotations

from ..tensor import Tensor, as_tensor
from .cell import Cell

__all__ = ["GraphCell"]


class GraphCell(Cell):
    """Runs a graph read by `graphjit.load` (a `.gjir` archive, a `.mindir` model, or a `.onnx` model with onnxruntime).

    MindSpore's `nn.GraphCell(graph, params_init=None, obf_random_seed=None)`:

        graph = graphjit.load("model.onnx")
        model = nn.GraphCell(graph)
        outputs = model(inputs)

    The graph is already compiled: calling the cell runs it, in either mode, with the inputs it was
    exported for (the same dtypes and shapes). Outputs are Tensors when an input is one, as eager
    code gives them. `params_init` (new weight values) and `obf_random_seed` (obfuscated MindIR) are
    refused: export the model again with the new weights.
    """

    def __init__(self, graph, params_init=None, obf_random_seed=None):
        super().__init__()
        if not callable(graph) or isinstance(graph, (Cell, type)):
            raise TypeError(f"GraphCell needs a graph returned by graphjit.load, not {type(graph).__name__}")
        if params_init is not None:
            raise TypeError("GraphCell(params_init=...) is not supported: export the model again with the new "
                            "weights")
        if obf_random_seed is not None:
            raise NotImplementedError("GraphCell(obf_random_seed=...): graphjit reads no obfuscated models")
        self.graph = graph

    def construct(self, *inputs):
        return self.graph(*inputs)

    def __call__(self, *inputs):
        outputs = self.graph(*inputs)
        return as_tensor(outputs) if any(isinstance(x, Tensor) for x in inputs) else outputs
