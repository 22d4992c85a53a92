def bool_ops(x, flag):
    # programs.py:117  return x + 1
    return x + 1
