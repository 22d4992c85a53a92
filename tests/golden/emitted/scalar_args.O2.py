def scalar_args(x, n, scale):
    # programs.py:252  return x * n + scale
    t = x * 4
    t += 1.5
    return t
