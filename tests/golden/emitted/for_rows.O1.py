def for_rows(x):
    # programs.py:145  total = np.zeros(x.shape[1])
    total = np.zeros(3)
    # programs.py:146  for row in x:
    for row in x:
        # programs.py:147  total += row
        total += row
    # programs.py:146  for row in x:
    return total
