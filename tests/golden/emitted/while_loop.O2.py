def while_loop(x):
    # programs.py:152  y = x.copy()
    y = x.copy()
    # programs.py:154  while y.max() > 1.0:
    n = 0
    while y.max() > 1.0:
        y = y / 2
        n = n + 1
    # programs.py:157  return y, n
    return y, n
