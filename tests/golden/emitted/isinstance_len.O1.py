def isinstance_len(x, items):
    # programs.py:248  return x * n
    return x * 10
