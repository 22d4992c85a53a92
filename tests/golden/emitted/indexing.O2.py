def indexing(x):
    # programs.py:49  return x[0] + x[-1, ::-1] + x[1:, None, 2][0, 0] + x[..., 1].sum() + x[x > 0.5].sum()
    t = x[0] + x[-1, ::-1]
    t += x[1:, None, 2][0, 0]
    t += x[..., 1].sum()
    t += x[x > 0.5].sum()
    return t
