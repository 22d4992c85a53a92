def numpy_calls(x):
    # programs.py:204  z = np.zeros(x.shape, dtype=np.float32)
    z = np.zeros((2, 3), dtype=np.float32)
    # programs.py:205  o = np.ones_like(x)
    o = np.ones_like(x)
    # programs.py:206  return np.where(x > 0.5, x, z) + np.clip(x, 0.2, 0.8) + o.astype(np.float64) + np.linalg.norm(x)
    t = np.where(x > 0.5, x, z) + np.clip(x, 0.2, 0.8) + o
    t_1 = np.linalg.norm(x)
    return t + t_1
