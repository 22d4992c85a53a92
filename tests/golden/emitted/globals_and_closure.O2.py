def globals_and_closure(x):
    # programs.py:188  return x @ WEIGHTS + SCALE + math.pi
    t = x @ _g['WEIGHTS']
    t += 3.0
    t += 3.141592653589793
    return t
