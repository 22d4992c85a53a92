"""Helpers for the tests of non-NumPy namespaces (tests/backends/test_array_api_*.py, test_dask_*.py):
inputs converted to a library, results brought back to NumPy, compared with NumPy's own result."""

import numpy as np


def to_dask(value, chunks=2):
    import dask.array as da
    return da.from_array(value, chunks=chunks) if isinstance(value, np.ndarray) else value


def to_strict(value):
    import array_api_strict as xs
    return xs.asarray(value) if isinstance(value, np.ndarray) else value


def to_numpy(value):
    """A result as NumPy (a Dask array computed here, in the test, never by graphjit)."""
    if isinstance(value, tuple):
        return tuple(to_numpy(v) for v in value)
    if hasattr(value, "compute"):
        return value.compute()
    if type(value).__module__.startswith("array_api_strict"):
        import array_api_strict as xs
        return np.asarray(value.to_device(xs.Device("CPU_DEVICE")))
    return value


def assert_matches(actual, expected, rtol=1e-12):
    """Same values, dtype and shape as NumPy's result (a NumPy scalar may come back as a 0-d array)."""
    if isinstance(expected, tuple):
        assert isinstance(actual, tuple) and len(actual) == len(expected)
        for a, e in zip(actual, expected):
            assert_matches(a, e, rtol)
        return
    if isinstance(expected, (np.ndarray, np.generic)):
        a = np.asarray(actual)
        assert a.dtype == expected.dtype, f"dtype {a.dtype} != {expected.dtype}"
        assert a.shape == np.shape(expected), f"shape {a.shape} != {np.shape(expected)}"
        np.testing.assert_allclose(a, expected, rtol=rtol, atol=rtol)
        return
    if isinstance(expected, float):
        np.testing.assert_allclose(float(actual), expected, rtol=rtol, atol=rtol)
        return
    assert actual == expected


def code_of(source: str) -> str:
    """Generated source without its comment lines (which quote the user's NumPy code)."""
    return "\n".join(line for line in source.splitlines() if not line.lstrip().startswith("#"))


def loop_kernel_inputs(n: int) -> dict:
    """Loop kernels of tests/vector_programs.py that O2 turns into whole-array code: name -> a function
    of a NumPy Generator giving the arguments (1-d inputs of length `n`)."""
    def r(rng, *shape):
        return rng.random(shape)
    return {
        "elem_chain": lambda g: (r(g, n), r(g, n)),
        "dot": lambda g: (r(g, n), r(g, n)),
        "total": lambda g: (r(g, n),),
        "matmul3": lambda g: (r(g, 5, 3), r(g, 3, 5)),
        "matvec": lambda g: (r(g, 5, 4), r(g, 4)),
        "stencil3": lambda g: (r(g, n),),
        "jacobi2d": lambda g: (r(g, 5, 6),),
        "rows_cols": lambda g: (r(g, 5, 3),),       # `out[:, j] += x[:, j]`: `a += b` must update `out`
        "outer_product": lambda g: (r(g, 4), r(g, 5)),
        "column_sums": lambda g: (r(g, 5, 3),),
    }
