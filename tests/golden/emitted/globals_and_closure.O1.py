def globals_and_closure(x):
    # programs.py:188  return x @ WEIGHTS + SCALE + math.pi
    return x @ _g['WEIGHTS'] + 3.0 + 3.141592653589793
