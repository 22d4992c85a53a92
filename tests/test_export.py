"""graphjit.export / graphjit.load: round trips in a fresh interpreter, refusals, tampered files."""

import fractions
import hashlib
import importlib.util
import io
import json
import pathlib
import subprocess
import sys
import textwrap
import zipfile

import numpy as np
import pytest

import graphjit as ms

SAMPLES = pathlib.Path(__file__).parent.parent / "samples"
X = np.random.default_rng(3).standard_normal((64, 1, 28, 28)).astype(np.float32)


def load_sample(name):
    spec = importlib.util.spec_from_file_location(f"export_sample_{name}", SAMPLES / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def sample_target_and_expected(name):
    """What to export from each sample, and the eager result it must reproduce."""
    m = load_sample(name)
    if name in ("network", "graph_mode", "jit_construct"):
        ms.set_seed(0)
        model = m.Network()
        construct = getattr(m.Network.construct, "__graphjit_fn__", m.Network.construct)
        return model, construct(model, X)
    ms.set_seed(0)
    target = m.run if name == "jit_function" else m.run_with_jit   # builds its Network when compiled
    plain = getattr(m.run, "__wrapped__", m.run)
    ms.set_seed(0)
    expected = plain(X)
    ms.set_seed(0)
    return target, expected


FRESH = textwrap.dedent("""
    import sys
    import numpy as np
    import graphjit
    run = graphjit.load(sys.argv[1])
    x = np.load(sys.argv[2])
    np.testing.assert_allclose(run(x), np.load(sys.argv[3]), rtol=1e-5, atol=1e-6)
    np.testing.assert_array_equal(run(x), run(x))
    samples = sys.argv[4]
    leaked = [m for m, mod in sys.modules.items()
              if "sample" in m or str(getattr(mod, "__file__", "") or "").startswith(samples)]
    assert not leaked, leaked
    print("ok", run.manifest["jit_level"])
""")


@pytest.mark.parametrize("name,level", [("network", "O1"), ("network", "O2"), ("jit_function", "O2"),
                                        ("jit_transform", "O1"), ("jit_construct", "O2"), ("graph_mode", "O2")])
def test_samples_round_trip_in_a_fresh_interpreter(name, level, tmp_path):
    target, expected = sample_target_and_expected(name)
    path = ms.export(target, X, file=str(tmp_path / "model.gjir"), jit_level=level)
    np.save(tmp_path / "x.npy", X)
    np.save(tmp_path / "expected.npy", expected)
    script = tmp_path / "fresh.py"
    script.write_text(FRESH)
    proc = subprocess.run([sys.executable, str(script), path, str(tmp_path / "x.npy"), str(tmp_path / "expected.npy"),
                           str(SAMPLES.resolve())],
                          capture_output=True, text=True, timeout=120, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == f"ok {level}"


def test_loaded_graph_same_results_and_checks_its_inputs(tmp_path):
    target, expected = sample_target_and_expected("network")
    run = ms.load(ms.export(target, X, file=str(tmp_path / "m.gjir")))
    np.testing.assert_allclose(run(X), expected, rtol=1e-5, atol=1e-6)
    assert run.manifest["jit_level"] == "O1" and [i["type"] for i in run.manifest["inputs"]] == ["f32[64,1,28,28]"]
    with pytest.raises(ms.GraphjitError, match=r"input 0 must be an array of type f32\[64,1,28,28\]"):
        run(X[:2])
    with pytest.raises(ms.GraphjitError, match="takes 1 input"):
        run(X, X)


def double_offset(x, n, scale=1.5):
    return x * n + scale


def test_functions_with_static_arguments_round_trip(tmp_path):
    x = np.arange(6.0).reshape(2, 3)
    run = ms.load(ms.export(ms.jit(double_offset, jit_level="O2"), x, 4, file=str(tmp_path / "f.gjir")))
    np.testing.assert_array_equal(run(x), double_offset(x, 4))
    assert run.manifest["jit_level"] == "O2"
    assert [s["name"] for s in run.manifest["static_args"]] == ["n", "scale"]


HALF = fractions.Fraction(1, 2)


def uses_an_object(x):
    return x * HALF


def test_refuses_graphs_holding_compile_time_objects(tmp_path):
    with pytest.raises(ms.GraphjitError) as info:
        ms.export(uses_an_object, np.ones(3), file=str(tmp_path / "no.gjir"))
    text = str(info.value)
    assert "Fraction" in text and "test_export.py:" in text
    assert not (tmp_path / "no.gjir").exists()


# --- files that were modified or crafted ------------------------------------------------------------

@pytest.fixture
def archive(tmp_path):
    def f(x):
        return np.tanh(x) * 2.0
    path = ms.export(f, np.ones(3), file=str(tmp_path / "ok.gjir"))
    with zipfile.ZipFile(path) as z:
        return {name: z.read(name) for name in z.namelist()}


def write(tmp_path, parts, name="crafted.gjir", fix_checksums=True):
    parts = dict(parts)
    if fix_checksums:
        manifest = json.loads(parts["manifest.json"])
        manifest["sha256"] = {k: hashlib.sha256(parts[k]).hexdigest() for k in ("graph.txt", "params.npz")}
        parts["manifest.json"] = json.dumps(manifest).encode()
    path = tmp_path / name
    with zipfile.ZipFile(path, "w") as z:
        for k, v in parts.items():
            z.writestr(k, v)
    return str(path)


def test_tampered_file_gives_a_clear_error(archive, tmp_path):
    text = archive["graph.txt"].decode().replace("2.0", "3.0")
    path = write(tmp_path, dict(archive, **{"graph.txt": text.encode()}), fix_checksums=False)
    with pytest.raises(ms.GraphjitError, match="graph.txt does not match its checksum: the file was modified"):
        ms.load(path)
    (tmp_path / "junk.gjir").write_bytes(b"not a zip at all")
    with pytest.raises(ms.GraphjitError, match="not a graphjit archive"):
        ms.load(str(tmp_path / "junk.gjir"))


@pytest.mark.parametrize("replace,message", [
    (("tanh(%x)", "system(%x)"), "unknown op `system`"),
    (("tanh(%x) :", "call(%x) {fn='builtins.eval'} :"), "builtin 'eval' is not allowed"),
    (("tanh(%x) :", "call('marker.npy', %x) {fn='numpy.save'} :"), "'numpy.save' is not allowed in a loaded graph"),
    (("tanh(%x) :", "call(%x) {fn='os.system'} :"), "'os.system' is not allowed"),
    (("tanh(%x) :", "tanh(%x) {__import__('os')=1} :"), "is not an identifier"),
    (("tanh(%x) :", "tanh(%x, __import__('os').system('x')) :"), "not a literal"),
])
def test_crafted_graph_text_is_refused_not_run(archive, tmp_path, monkeypatch, replace, message):
    monkeypatch.chdir(tmp_path)
    text = archive["graph.txt"].decode()
    assert replace[0] in text
    path = write(tmp_path, dict(archive, **{"graph.txt": text.replace(*replace).encode()}))
    with pytest.raises(ms.GraphjitError, match=message):
        ms.load(path)
    assert not (tmp_path / "marker.npy").exists()


def test_crafted_parameters_are_refused(archive, tmp_path):
    header, rest = archive["graph.txt"].decode().split("\n", 1)
    crafted = header + "\n  param %w: object = globals['os'].system\n" + rest.replace("mul(%0, 2.0)", "mul(%0, %w)")
    assert "mul(%0, %w)" in crafted
    path = write(tmp_path, dict(archive, **{"graph.txt": crafted.encode()}))
    with pytest.raises(ms.GraphjitError, match="not one of the stored values"):
        ms.load(path)
    pickled = io.BytesIO()
    np.savez(pickled, w=np.array([object()], dtype=object))
    manifest = json.loads(archive["manifest.json"])
    manifest["params"] = [{"name": "w", "dtype": "float64", "shape": [1]}]
    parts = dict(archive, **{"params.npz": pickled.getvalue(), "manifest.json": json.dumps(manifest).encode()})
    path = write(tmp_path, parts, name="pickled.gjir")
    with pytest.raises(ms.GraphjitError, match="cannot be read without pickle"):
        ms.load(path)


def test_stored_parameters_must_match_their_declared_types(tmp_path):
    target, _ = sample_target_and_expected("network")
    path = ms.export(target, X, file=str(tmp_path / "m.gjir"))
    with zipfile.ZipFile(path) as z:
        parts = {name: z.read(name) for name in z.namelist()}
    with np.load(io.BytesIO(parts["params.npz"])) as npz:
        params = {k: npz[k] for k in npz.files}
    first = next(iter(params))
    params[first] = params[first][:3]
    buffer = io.BytesIO()
    np.savez(buffer, **params)
    crafted = write(tmp_path, dict(parts, **{"params.npz": buffer.getvalue()}))
    with pytest.raises(ms.GraphjitError, match=r"holds float32\[3, 784\], manifest.json declares float32\[512, 784\]"):
        ms.load(crafted)


def test_export_and_load_are_on_the_package_root():
    assert ms.export.__module__ == "graphjit" and ms.load.__module__ == "graphjit"


def _uses_try(x):
    try:
        y = x * 2
    except ValueError:
        y = x
    return y + 1


def test_refuses_graphs_holding_fallback_blocks(tmp_path):
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(ms.GraphjitError) as info:
            ms.export(_uses_try, np.ones(3), file=str(tmp_path / "fb.gjir"))
    text = str(info.value)
    assert "fallback block" in text and "test_export.py:" in text


def test_loader_refuses_python_object_ops():
    from graphjit import export_load as gjir
    from graphjit.graph import parse
    text = """graph f(%x: f64[3]) -> object
  %0 = fallback(%x) {code='def __graphjit_fallback__(x):\\n    import os\\n    return (x,)\\n', file='m.py', line=1, reads=('x',), writes=('x',), returns=False, scope='globals'} : object
  return %0
"""
    graph = parse(text)
    with pytest.raises(ms.GraphjitError, match="may not hold `fallback`"):
        gjir._check_loaded(graph, {})


def test_a_long_elif_chain_exports_loads_and_runs(tmp_path):
    """Each `elif` nests a region: 200 of them are within the loader's limit (graph/loadable.py)."""
    source = "import numpy as np\n\ndef pick(x, k):\n    if k == 0:\n        y = x + 0\n" + "".join(
        f"    elif k == {i}:\n        y = x + {i}\n" for i in range(1, 200)) + "    else:\n        y = x - 1\n    return y\n"
    path = tmp_path / "elifs.py"
    path.write_text(source)
    spec = importlib.util.spec_from_file_location("elifs_module", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    x = np.ones(3)
    archive = str(tmp_path / "elifs.gjir")
    ms.export(module.pick, x, np.array(7), file=archive)
    loaded = ms.load(archive)
    for k in (0, 7, 199, 500):
        np.testing.assert_array_equal(loaded(x, np.array(k)), module.pick(x, k))
