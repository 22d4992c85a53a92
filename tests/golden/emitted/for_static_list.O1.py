def for_static_list(x):
    # programs.py:138  out = out * w + k
    out = ((x + 0) * 2.0 + 1) * 3.0 + 2
    # programs.py:140  out = out + a * b
    return out + 3 + 8
