def reductions(x):
    # programs.py:39  return x.sum(axis=0) + np.mean(x, axis=0) - x.max(0) + np.min(x, axis=0, keepdims=True)[0]
    return x.sum(axis=0) + x.mean(axis=0) - x.max(axis=0) + x.min(axis=0, keepdims=True)[0]
