def fancy_index(x, idx):
    # programs.py:53  return x[idx] * 2
    return x[idx] * 2
