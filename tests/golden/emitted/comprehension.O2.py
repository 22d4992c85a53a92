def comprehension(x):
    # programs.py:183  parts = [x * k for k in range(3) if k != 1]
    t = x * 0
    t_1 = x * 2
    # programs.py:184  return sum(parts) + max(1, 2) + len(parts)
    t += 0
    t += t_1
    t += 2
    t += 2
    return t
