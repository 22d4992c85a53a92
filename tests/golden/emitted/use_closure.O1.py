def use_closure(x):
    # programs.py:195  return x * w
    return x * _cells['w'].cell_contents
