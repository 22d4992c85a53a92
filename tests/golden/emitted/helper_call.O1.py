def helper_call(x):
    # programs.py:19  return a * b + 1
    t = x * 2.0 + 1
    t_1 = x * 0.5 + 1
    # programs.py:179  return helper(x) + helper(x, b=0.5) + helper(a=x)
    return t + t_1 + t
