def nested_def(x):
    # programs.py:172  return v * k + m
    t = x * 3.0
    t_1 = t + 2.0
    # programs.py:174  square = lambda v: v * v  # noqa: E731
    t_2 = x * x
    # programs.py:172  return v * k + m
    t = t + 5.0
    # programs.py:175  return inner(x) + square(x) + inner(x, m=5.0)
    return t_1 + t_2 + t
