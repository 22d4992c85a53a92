def set_item(x):
    # programs.py:57  y = x.copy()
    y = x.copy()
    # programs.py:58  y[0] = 1.0
    y[0] = 1.0
    # programs.py:59  y[1:, 2] = y[1:, 2] * 10
    y[1:, 2] = y[1:, 2] * 10
    # programs.py:60  y[y > 5] = 0
    y[y > 5] = 0
    # programs.py:57  y = x.copy()
    return y
