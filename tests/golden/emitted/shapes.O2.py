def shapes(x):
    # programs.py:45  return np.transpose(y, (1, 0)).reshape((n, x.shape[1])) + x.ndim + x.size
    t = x + 2
    t += 12
    return t
