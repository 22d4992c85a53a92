def returning_if(x):
    # programs.py:101  if x.mean() > 0.5:
    if x.mean() > 0.5:
        r = x * 2
    else:
        # programs.py:103  y = x + 1
        y = x + 1
        # programs.py:104  if x.max() > 0.9:
        if x.max() > 0.9:
            r_1 = y * 3
        else:
            r_1 = y
        r = r_1
    # programs.py:101  if x.mean() > 0.5:
    return r
