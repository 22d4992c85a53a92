"""The cache key: every component changes it, nothing else does; inlined sources are re-checked."""

import dataclasses
import sys

import numpy as np
import pytest

from graphjit.backends import cache_key as ck
from graphjit.backends.cache_key import CacheKey, Unportable, cache_key


def scale(x, n):
    return x * n


def other(x, n):
    return x * n


BASE = dict(jit_level="O1", exec_mode="auto", syntax_level="LAX")


def key(fn=scale, args=None, **options):
    args = args if args is not None else (np.zeros((64, 784), np.float32), 3)
    return cache_key(fn, ["x", "n"], args, **dict(BASE, **options))


def test_same_inputs_same_key():
    assert key() == key()
    assert key().digest() == key().digest()


@pytest.mark.parametrize("change", [
    dict(fn=other),                                                   # function (and its source)
    dict(args=(np.zeros((32, 784), np.float32), 3)),                  # shape
    dict(args=(np.zeros((64, 784), np.float64), 3)),                  # dtype
    dict(args=(np.zeros((64, 784), np.float32).astype(">f4"), 3)),    # byte order
    dict(args=(np.zeros((64, 784), np.float32), 4)),                  # value of a non-array argument
    dict(args=(np.zeros((64, 784), np.float32), 3.0)),                # type of a non-array argument
    dict(jit_level="O2"),
    dict(exec_mode="sink"),
    dict(syntax_level="STRICT"),
    dict(static_argnums=(1,)),
    dict(static_argnames=("n",)),
    dict(dynamic={"x": True}),
])
def test_each_component_changes_the_key(change):
    assert key(**change).digest() != key().digest()


def test_every_field_is_in_the_digest():
    base = key()
    for f in dataclasses.fields(CacheKey):
        value = getattr(base, f.name)
        changed = dataclasses.replace(base, **{f.name: value + ("x",) if isinstance(value, tuple) else value + "x"})
        assert changed.digest() != base.digest(), f.name


def test_dynamic_dims_key_rank_only():
    a = key(args=(np.zeros((64, 784), np.float32), 3), dynamic={"x": frozenset({0})})
    b = key(args=(np.zeros((32, 784), np.float32), 3), dynamic={"x": frozenset({0})})
    c = key(args=(np.zeros((32, 10), np.float32), 3), dynamic={"x": frozenset({0})})
    assert a == b and a != c
    assert "(?, 784)" in " ".join(a.signature)


def test_header_names_every_component():
    text = "\n".join(key().lines())
    for name in ("function", "source", "syntax_level", "jit_level", "pipeline", "exec_mode", "signature",
                 "static_argnums", "static_argnames", "dynamic", "versions"):
        assert f"{name}: " in text
    assert "numpy " + np.__version__ in text and "python" in text and "graphjit" in text


def test_pipeline_descriptions_read_without_importing_the_passes():
    from graphjit.graph.passes.manager import PIPELINES
    for level, passes in PIPELINES.items():
        assert ck.pipeline_descriptions(level) == tuple(d for _, d in passes)


def test_source_digest_covers_the_def_only():
    assert ck.function_digest(scale) != ck.function_digest(other)  # different names in the def line


def test_local_class_argument_is_not_portable():
    class Local:
        pass
    with pytest.raises(Unportable):
        key(args=(np.zeros(3), Local()))


def test_inlined_changed_detects_an_edit(tmp_path):
    path = tmp_path / "helper_mod.py"
    path.write_text("def h(x):\n    return x + 1\n")
    import hashlib
    digest = hashlib.sha256(path.read_text().encode()).hexdigest()[:20]
    record = [("h", str(path), 1, 2, digest)]
    assert ck.inlined_changed(record) is None
    path.write_text("def h(x):\n    return x + 2\n")
    assert "the source of h" in ck.inlined_changed(record)


def test_versions_include_a_compiler_digest():
    versions = ck.versions()
    assert versions[0].startswith("graphjit ") and "+" in versions[0]
    assert sys.modules.get("graphjit") is not None


def test_a_set_argument_has_the_same_key_in_every_process():
    """Strings hash differently in each process (PYTHONHASHSEED): a set is keyed in a fixed order."""
    import subprocess
    code = ("import numpy as np, sys; sys.path.insert(0, {here!r}); import test_cache_key as t; "
            "n = frozenset({{'alpha', 'beta', 'gamma', 'delta', 'eps'}}); "
            "print(t.key(args=(np.zeros(3), n)).digest(), "
            "t.key(args=(np.zeros(3), n), static_argnums=(1,), static=('n',)).digest())"
            ).format(here=__import__("os").path.dirname(__file__))
    digests = {subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120,
                              env={**__import__("os").environ, "PYTHONHASHSEED": seed}).stdout.strip()
               for seed in ("1", "2", "3")}
    assert len(digests) == 1 and len(next(iter(digests))) == 65, digests
