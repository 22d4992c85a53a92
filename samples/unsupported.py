"""A function with several constructs STRICT does not compile: `graphjit check` lists them all.

    graphjit check samples/unsupported.py --level strict

At LAX (the default) the same function runs: each listed statement becomes a fallback block
that the Python interpreter runs inside the generated code, with a warning naming it.
"""

import numpy as np

import graphjit as ms

history = []


class Stats:
    calls = 0


stats = Stats()


@ms.jit
def normalize(x):
    global history
    stats.calls = stats.calls + 1
    try:
        scale = 1.0 / x.std()
    except ZeroDivisionError:
        scale = 1.0
    with np.errstate(all="ignore"):
        y = (x - x.mean()) * scale
    seen = {round(float(v), 3) for v in y.ravel()}
    history.append(len(seen))
    return y


if __name__ == "__main__":
    print(normalize(np.arange(6.0)))
    print("calls:", stats.calls, "history:", history)
