def for_static_list(x):
    # programs.py:138  out = out * w + k
    out = x + 0
    out *= 2.0
    out += 1
    out *= 3.0
    out += 2
    # programs.py:140  out = out + a * b
    out += 3
    out += 8
    return out
