def unary(x):
    # programs.py:27  return -x + (+x) - abs(x)
    return -x + +x - abs(x)
