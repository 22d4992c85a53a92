def arith(x, y):
    # programs.py:23  return (x + y) * (x - y) / 2.0 - x ** 2 + y // 3 + x % 2
    t = x + y
    t *= x - y
    t /= 2.0
    t -= x * x
    t += y // 3
    t += x % 2
    return t
