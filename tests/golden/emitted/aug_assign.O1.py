def aug_assign(x):
    # programs.py:65  y = x * 1.0
    y = x * 1.0
    # programs.py:66  y += 2
    y += 2
    # programs.py:67  y *= x
    y *= x
    # programs.py:70  return y - n
    return y - 3
