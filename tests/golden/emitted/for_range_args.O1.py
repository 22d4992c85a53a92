def for_range_args(x, start, stop):
    # programs.py:130  for i in range(start, stop, 2):
    total = 0.0
    for i in range(1, 7, 2):
        total = total + x[i].sum()
    return total
