def ternary(x):
    # programs.py:110  s = x.sum()
    s = x.sum()
    # programs.py:111  scale = 2.0 if s > 1 else 0.5
    if s > 1:
        scale = 2.0
    else:
        scale = 0.5
    # programs.py:112  return x * scale + (s > 0 and 1.0 or 3.0)
    t = x * scale
    t_1 = s > 0
    if t_1:
        r = 1.0
    else:
        r = t_1
    if r:
        r_1 = r
    else:
        r_1 = 3.0
    t += r_1
    return t
