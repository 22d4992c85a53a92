def cell_call(x):
    # programs.py:224  return x * self.factor + self.offset
    x = x * 2.0 + _g['BLOCK'].layers.cell_list[0].offset
    # activations.py:23  return np.maximum(input, 0)
    x = np.maximum(x, 0)
    # programs.py:224  return x * self.factor + self.offset
    x = x * 0.5 + _g['BLOCK'].layers.cell_list[2].offset
    # layers.py:41  x = x @ self.weight.T
    x = x @ _g['BLOCK'].head.weight.T
    # layers.py:43  x = x + self.bias
    return x + _g['BLOCK'].head.bias
