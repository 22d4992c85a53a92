def compare(x, y):
    # programs.py:31  return (x < y) | (x >= 2.0) & ~(x == y)
    return (x < y) | (x >= 2.0) & ~(x == y)
