def scalar_args(x, n, scale):
    # programs.py:252  return x * n + scale
    return x * 4 + 1.5
