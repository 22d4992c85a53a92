def cell_call(x):
    # programs.py:224  return x * self.factor + self.offset
    x_1 = x * 2.0
    x_1 += _g['BLOCK'].layers.cell_list[0].offset
    # activations.py:23  return np.maximum(input, 0)
    np.maximum(x_1, 0, out=x_1)
    # programs.py:224  return x * self.factor + self.offset
    x_1 *= 0.5
    x_1 += _g['BLOCK'].layers.cell_list[2].offset
    # layers.py:41  x = x @ self.weight.T
    x = x_1 @ _g['BLOCK'].head.weight.T
    # layers.py:43  x = x + self.bias
    x += _g['BLOCK'].head.bias
    return x
