def compare(x, y):
    # programs.py:31  return (x < y) | (x >= 2.0) & ~(x == y)
    t = x < y
    t_1 = x >= 2.0
    t_2 = x == y
    np.invert(t_2, out=t_2)
    t_1 &= t_2
    t |= t_1
    return t
