def nested_loops_setitem(x):
    # programs.py:161  out = np.zeros_like(x)
    out = np.zeros_like(x)
    # programs.py:162  for i in range(x.shape[0]):
    for i in range(3):
        # programs.py:163  for j in range(x.shape[1]):
        for j in range(2):
            # programs.py:164  out[i, j] = x[i, j] * (i + j)
            out[i, j] = x[i, j] * (i + j)
    # programs.py:161  out = np.zeros_like(x)
    return out
