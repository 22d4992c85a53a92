def for_range_runtime(x):
    # programs.py:122  acc = np.zeros_like(x[0])
    acc = np.zeros_like(x[0])
    # vectorized loop programs.py:123-124: elementwise, reduction
    # programs.py:123  for i in range(x.shape[0]):
    acc += (x * np.arange(0, 4)[:, None]).sum(axis=0)
    return acc
