"""graphjit: MindSpore-style static graph mode (`jit`) for plain Python + NumPy.

Importing graphjit costs little more than importing NumPy: LibCST and networkx load only when
something is compiled.
"""

import numpy as _np

# Absolute imports: pytest imports this file as a bare module named `__init__` when the checkout's
# directory name is not an identifier (a worktree such as `wt-opt`), where relative imports fail.
from graphjit import nn, ops
from graphjit.api import BoundJitFunction, JitFunction, jit, set_seed
from graphjit.checkpoint import (CheckpointError, CheckpointMismatchError, load_checkpoint, load_param_into_net,
                                 save_checkpoint)
from graphjit.tensor import Tensor
from graphjit.sparse_tensor import COOTensor, CSRTensor
from graphjit import dtype
from graphjit.gradients import GradOperation, grad, stop_gradient, value_and_grad
from graphjit.parameter import Parameter, ParameterTuple
from graphjit.graph.diagnostics import (GraphjitError, GraphjitFallbackWarning, GraphjitWarning, GraphSyntaxError,
                                       LoweringError, UnsupportedSyntaxError)
from graphjit.context import (COMPATIBLE, GRAPH_MODE, LAX, PYNATIVE_MODE, STRICT, JitConfig, get_context,
                      set_context)



def export(net, *inputs, file_name=None, file_format=None, file=None, jit_level=None, **kwargs) -> str:
    """Write the optimized graph of `net` for `inputs`, with its weights, to a file; returns its path.

    MindSpore's `export(net, *inputs, file_name=..., file_format=...)`: "ONNX" writes `file_name.onnx`
    (docs/onnx.md), "GJIR" (the default, or `file=...`) graphjit's own archive; "MINDIR" is refused.
    `graphjit.load(path)` runs either later without the source or the classes (graphjit/export_load.py).
    """
    from graphjit.export_load import export as _export
    return _export(net, *inputs, file_name=file_name, file_format=file_format, file=file, jit_level=jit_level,
                   **kwargs)


def load(file: str, **kwargs):
    """Read a model written by `graphjit.export` (.gjir, or .onnx with onnxruntime installed); returns a
    callable with the same results, which `nn.GraphCell(graph)` also runs."""
    from graphjit.export_load import load as _load
    return _load(file, **kwargs)


float16, float32, float64 = _np.float16, _np.float32, _np.float64
int8, int16, int32, int64 = _np.int8, _np.int16, _np.int32, _np.int64
uint8, bool_ = _np.uint8, _np.bool_

__version__ = "0.1.0"

__all__ = ["export", "load", "GraphSyntaxError", "GraphjitFallbackWarning", "GraphjitError", "GraphjitWarning", "LoweringError", "UnsupportedSyntaxError", "jit", "JitConfig", "JitFunction", "BoundJitFunction", "set_context", "get_context", "GRAPH_MODE",
           "PYNATIVE_MODE", "grad", "value_and_grad", "Parameter", "ParameterTuple", "GradOperation", "stop_gradient", "STRICT", "COMPATIBLE", "LAX", "Tensor", "CSRTensor", "COOTensor", "dtype", "nn", "ops", "set_seed", "float16", "float32",
           "float64", "int8", "int16", "int32", "int64", "uint8", "bool_", "save_checkpoint", "load_checkpoint",
           "load_param_into_net", "CheckpointError", "CheckpointMismatchError"]
