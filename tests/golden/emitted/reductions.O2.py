def reductions(x):
    # programs.py:39  return x.sum(axis=0) + np.mean(x, axis=0) - x.max(0) + np.min(x, axis=0, keepdims=True)[0]
    t = x.sum(axis=0)
    t += x.mean(axis=0)
    t -= x.max(axis=0)
    t += x.min(axis=0, keepdims=True)[0]
    return t
