def runtime_if(x):
    # programs.py:91  if x.sum() > 0:
    if x.sum() > 0:
        y, z = x * 2, 1.0
    else:
        y, z = -x, 2.0
    # programs.py:97  return y + z
    return y + z
