def static_if(x, mode):
    # programs.py:84  y = x * x
    return x * x
