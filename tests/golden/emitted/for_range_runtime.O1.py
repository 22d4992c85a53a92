def for_range_runtime(x):
    # programs.py:122  acc = np.zeros_like(x[0])
    acc = np.zeros_like(x[0])
    # programs.py:123  for i in range(x.shape[0]):
    for i in range(4):
        acc = acc + x[i] * i
    return acc
