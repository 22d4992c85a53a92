def nested_loops_setitem(x):
    # vectorized loop programs.py:162-164: elementwise
    # programs.py:162  for i in range(x.shape[0]):
    return x * (np.arange(0, 2) + np.arange(0, 3)[:, None])
