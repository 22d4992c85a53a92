def arith(x, y):
    # programs.py:23  return (x + y) * (x - y) / 2.0 - x ** 2 + y // 3 + x % 2
    return (x + y) * (x - y) / 2.0 - x * x + y // 3 + x % 2
