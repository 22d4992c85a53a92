def unary(x):
    # programs.py:27  return -x + (+x) - abs(x)
    t = -x
    t += +x
    t -= abs(x)
    return t
