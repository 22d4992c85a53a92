def ufuncs(x):
    # programs.py:35  return np.exp(-x) + np.log1p(np.abs(x)) + np.sqrt(np.abs(x)) * np.tanh(x) + np.maximum(x, 0.5)
    t = np.abs(x)
    return np.exp(-x) + np.log1p(t) + np.sqrt(t) * np.tanh(x) + np.maximum(x, 0.5)
