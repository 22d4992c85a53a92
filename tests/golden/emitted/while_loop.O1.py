def while_loop(x):
    # programs.py:152  y = x.copy()
    y = x.copy()
    # programs.py:154  while y.max() > 1.0:
    y_1 = y
    n = 0
    while y_1.max() > 1.0:
        y_1 = y_1 / 2
        n = n + 1
    # programs.py:157  return y, n
    return y_1, n
