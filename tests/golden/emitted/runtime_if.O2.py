def runtime_if(x):
    # programs.py:91  if x.sum() > 0:
    if x.sum() > 0:
        y = x * 2
        z = 1.0
    else:
        y = -x
        z = 2.0
    # programs.py:97  return y + z
    return y + z
