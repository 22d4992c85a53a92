def ufuncs(x):
    # programs.py:35  return np.exp(-x) + np.log1p(np.abs(x)) + np.sqrt(np.abs(x)) * np.tanh(x) + np.maximum(x, 0.5)
    t = -x
    np.exp(t, out=t)
    t_1 = np.abs(x)
    t += np.log1p(t_1)
    np.sqrt(t_1, out=t_1)
    t_1 *= np.tanh(x)
    t += t_1
    t += np.maximum(x, 0.5)
    return t
