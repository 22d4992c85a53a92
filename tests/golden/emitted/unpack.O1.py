def unpack(x):
    # programs.py:74  a, b = x[0], x[1]
    a = x[0]
    b = x[1]
    # programs.py:75  first, *rest = (a, b, a * b)
    t = a * b
    # programs.py:77  return first + rest[1] + c * d - e
    return a + t + t - a
