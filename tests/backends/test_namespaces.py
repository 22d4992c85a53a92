"""Non-NumPy arrays as arguments (backends/namespaces.py): recognised without importing their
library, keyed by class, dtype and shape in the memory and disk caches, their namespace in the key
and in `.source()`, served by the generated dispatcher; NumPy calls import none of it."""

import subprocess
import sys

import array_api_strict
import dask.array as da
import numpy as np

import graphjit
from graphjit.backends import namespaces
from graphjit.backends.cache_key import cache_key
from graphjit.backends.dispatch import arg_key
from xp_testing import to_numpy


def test_foreign_arrays_are_recognised_and_numpy_ones_are_not():
    assert namespaces.is_foreign_array(da.ones(3))
    assert namespaces.is_foreign_array(array_api_strict.ones(3))
    for value in (np.ones(3), np.float64(1.0), graphjit.Tensor([1.0]), [1.0], 1.0, None, "x"):
        assert not namespaces.is_foreign_array(value)


def test_dtypes_and_unknown_dimensions_as_numpy_sees_them():
    assert namespaces.numpy_dtype(array_api_strict.float32) == np.float32
    assert namespaces.numpy_dtype(array_api_strict.bool) == np.bool_
    assert namespaces.known_shape((float("nan"), 3)) == (None, 3)
    x = array_api_strict.ones((2, 3), dtype=array_api_strict.int32)
    assert arg_key(x) == ("xp", type(x), "int32", (2, 3))


def test_the_namespace_is_in_the_disk_key_and_numpy_keys_are_unchanged():
    def f(x):
        return x + 1
    d = da.ones((4,), chunks=2)
    dask_key = cache_key(f, ["x"], (d,), jit_level="O1", exec_mode="auto", syntax_level="LAX")
    numpy_key = cache_key(f, ["x"], (np.ones(4),), jit_level="O1", exec_mode="auto", syntax_level="LAX")
    assert dask_key.lines()[-1].startswith("namespace: array_api_compat.dask.array (dask ")
    assert "x: array[dask.array.core.Array] float64 (4,)" in dask_key.signature
    assert not any(line.startswith("namespace:") for line in numpy_key.lines())
    assert dask_key.digest() != numpy_key.digest()


def test_each_namespace_is_its_own_variant_and_source():
    @graphjit.jit
    def f(x):
        return np.sqrt(x).sum(axis=0)
    x = np.random.default_rng(0).random((3, 2))
    assert "xp" not in f.source(x)
    assert f.source(da.from_array(x)).startswith("import array_api_compat.dask.array as xp\n")
    assert f.source(array_api_strict.asarray(x)).startswith("import array_api_strict as xp\n")
    assert "xp.sum(xp.sqrt(x), axis=0)" in f.source(array_api_strict.asarray(x))
    assert f.cache_info()["entries"] == 3


def test_a_repeated_call_is_served_by_the_generated_dispatcher():
    @graphjit.jit
    def f(x):
        return x * 2.0
    x = array_api_strict.asarray(np.arange(3.0))
    f(x)
    before = f.cache_info()
    out = f(array_api_strict.asarray(np.arange(3.0)))     # another array, same class, dtype, shape
    after = f.cache_info()
    assert after["hits"] == before["hits"] + 1 and after["misses"] == before["misses"]
    assert "x.__class__ is" in type(f).__call__.__graphjit_source__
    np.testing.assert_array_equal(to_numpy(out), [0.0, 2.0, 4.0])
    f(array_api_strict.asarray(np.arange(4.0)))            # another shape: another entry
    assert f.cache_info()["misses"] == before["misses"] + 1


def test_another_process_loads_the_dask_variant_from_disk(tmp_path):
    module = tmp_path / "dask_user.py"
    module.write_text("import numpy as np\nimport graphjit\n\n@graphjit.jit\ndef f(x):\n    return np.exp(x) - 1.0\n")
    code = ("import sys; sys.path.insert(0, %r)\nimport dask.array as da, dask_user\n"
            "r = dask_user.f(da.ones((4,), chunks=2))\n"
            "print(type(r).__name__, dask_user.f.cache_info()['disk_loads'], float(r.sum().compute()))" % str(tmp_path))
    runs = [subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120) for _ in range(2)]
    assert [r.stdout.split()[:2] for r in runs] == [["Array", "0"], ["Array", "1"]], runs[-1].stderr
    assert abs(float(runs[1].stdout.split()[2]) - 4 * (np.e - 1)) < 1e-12


def test_numpy_calls_import_no_array_library(tmp_path):
    (tmp_path / "numpy_user.py").write_text("import numpy as np\nimport graphjit\n\n@graphjit.jit\n"
                                            "def g(x):\n    return np.tanh(x).sum()\n")
    code = ("import sys; sys.path.insert(0, %r)\nimport numpy as np, numpy_user\n"
            "numpy_user.g(np.ones(3)); numpy_user.g(np.ones(3))\n"
            "print(sorted(m for m in ('dask', 'array_api_compat', 'array_api_strict', 'distributed') "
            "if m in sys.modules))" % str(tmp_path))
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.stdout.strip() == "[]", out.stdout + out.stderr
