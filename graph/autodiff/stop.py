"""`stop_gradient(x)`: what users call to keep a value out of a gradient. Run eagerly it is `x`;
compiled, the op table maps it to the `stop_gradient` op, through which the backward pass sends
nothing (and which the emitter writes as `x`)."""


def stop_gradient(x):
    """`x` itself, through which no gradient flows (`graphjit.stop_gradient`, `ops.stop_gradient`)."""
    return x
