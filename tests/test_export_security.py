"""A `.gjir` from elsewhere never runs code, imports, writes or blows up: one test per attack of issue 23."""

import io
import os
import json
import sys
import tracemalloc
import zipfile

import numpy as np
import pytest

import graphjit as ms
from gjir_archives import branchy, parts_of, scaled_tanh, valid_archives, with_graph, write_archive
from side_effects import watch


@pytest.fixture(scope="module", autouse=True)
def _warm(tmp_path_factory):
    """Load and call valid archives once first: importing graphjit's modules, and networkx compiling its
    decorators on first use, run code objects the watch below would otherwise count."""
    folder = tmp_path_factory.mktemp("warm")
    for label, path in valid_archives(folder).items():
        run = ms.load(path)
        run(*[np.ones(t.shape, t.dtype) for t in run.input_types])


@pytest.fixture
def tanh_parts(tmp_path):
    return parts_of(ms.export(scaled_tanh, np.ones(3), file=str(tmp_path / "ok.gjir")))


@pytest.fixture
def branch_parts(tmp_path):
    return parts_of(ms.export(branchy, np.ones(3), file=str(tmp_path / "br.gjir"), jit_level="O0"))


def crafted(tmp_path, parts, text, name="crafted.gjir"):
    return write_archive(tmp_path / name, with_graph(parts, text))


def load_and_call(path, *inputs):
    """Load `path` and call it, inside a side-effect watch; returns (error or None, seen)."""
    with watch() as seen:
        try:
            run = ms.load(path)
        except ms.GraphjitError as e:
            return e, seen
    with watch(allow_exec=True) as seen_call:
        try:
            run(*inputs)
        except ms.GraphjitError as e:
            return e, seen_call
    return None, seen_call


def one_line(error) -> str:
    text = error.one_line()
    assert "\n" not in text, text
    return text


# --- 1. a `raise` node names only an exception class from a fixed list ------------------------------

RAISE_LINE = "  %1 = mul(%0, 2.0) : f64[3]"


@pytest.mark.parametrize("raised", [
    "raise('numpy.testing.measure', \"open('{marker}', 'w').write('pwned')\") : none",
    "raise('numpy.save', '{marker}', 1.0) : none",
    "raise('numpy.load', '{marker}') : none",
    "raise('builtins.print', 'hello') : none",
    "raise('builtins.SystemExit', 3) : none",
    "raise(np.float64, 1.0) : none",
    "raise(%x, 1.0) : none",
])
def test_raise_names_only_an_exception_class(tanh_parts, tmp_path, raised):
    marker = tmp_path / "marker.txt"
    text = tanh_parts["graph.txt"].decode()
    assert RAISE_LINE in text
    node = "  %9 = " + raised.format(marker=marker) + "\n"
    path = crafted(tmp_path, tanh_parts, text.replace(RAISE_LINE, node + RAISE_LINE))
    error, seen = load_and_call(path, np.ones(3))
    assert error is not None and "raise" in one_line(error) and "crafted.gjir" in one_line(error)
    seen.assert_none()
    assert not marker.exists()


def test_raise_of_an_allowed_exception_still_raises_it(branch_parts, tmp_path):
    run = ms.load(write_archive(tmp_path / "b.gjir", branch_parts))
    np.testing.assert_array_equal(run(np.ones(3)), 2 * np.ones(3))
    with pytest.raises(ValueError, match="negative sum"):
        run(-np.ones(3))


# --- 2. loading imports nothing a file names --------------------------------------------------------

@pytest.mark.parametrize("fn", ["numpy.f2py.__main__.main", "numpy.f2py.main", "numpy.testing.measure",
                                "numpy.distutils.core.setup", "numpy.lib.npyio.save", "math.__loader__.exec_module",
                                "numpy.core._multiarray_umath.add", "os.system", "numpy.ctypeslib.load_library",
                                "builtins.__import__", "numpy.__builtins__.exec"])
def test_call_imports_nothing_and_is_refused(tanh_parts, tmp_path, fn):
    text = tanh_parts["graph.txt"].decode().replace("tanh(%x) :", f"call(%x) {{fn={fn!r}}} :")
    path = crafted(tmp_path, tanh_parts, text)
    before = set(sys.modules)
    error, seen = load_and_call(path, np.ones(3))
    assert error is not None and "not allowed" in one_line(error), error
    seen.assert_none()
    assert not any(m.startswith("numpy.f2py") for m in set(sys.modules) - before)


@pytest.mark.parametrize("classes", ["('numpy.f2py.__main__.X',)", "('numpy.testing.Tester',)",
                                     "('builtins.__import__',)", "('numpy.ndarray.__subclasses__',)"])
def test_isinstance_names_only_known_classes(tanh_parts, tmp_path, classes):
    text = tanh_parts["graph.txt"].decode().replace(
        RAISE_LINE, f"  %9 = isinstance(%x) {{classes={classes}}} : bool\n" + RAISE_LINE)
    error, seen = load_and_call(crafted(tmp_path, tanh_parts, text), np.ones(3))
    assert error is not None and "isinstance" in one_line(error)
    seen.assert_none()


# --- 6. members are read with a cap ------------------------------------------------------------------

@pytest.mark.parametrize("member", ["graph.txt", "params.npz", "manifest.json"])
def test_zip_bomb_member_is_refused_before_it_is_expanded(tanh_parts, tmp_path, member):
    bomb = b"\0" * (300 << 20)
    parts = dict(tanh_parts, **{member: bomb})
    path = write_archive(tmp_path / "bomb.gjir", parts, fix_checksums=member != "manifest.json")
    del bomb, parts
    tracemalloc.start()
    try:
        with pytest.raises(ms.GraphjitError) as info:
            ms.load(path)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 40 << 20, f"loading took {peak >> 20} MiB"
    assert member in one_line(info.value) and "bomb.gjir" in one_line(info.value)


def test_member_whose_declared_size_lies_is_cut_at_the_cap(tanh_parts, tmp_path):
    """The central directory says 100 bytes; the data is 300 MB: reading stops (zipfile or our cap)."""
    path = write_archive(tmp_path / "liar.gjir", dict(tanh_parts, **{"graph.txt": b"\0" * (300 << 20)}))
    data = bytearray(open(path, "rb").read())
    # patch the uncompressed size of graph.txt in its central directory entry
    with zipfile.ZipFile(path) as z:
        info = z.getinfo("graph.txt")
    cd = data.rfind(b"PK\x01\x02" + data[data.find(b"PK\x01\x02") + 4:data.find(b"PK\x01\x02") + 4][:0],
                    0, len(data))
    at = data.find(b"graph.txt", data.find(b"PK\x01\x02"))
    entry = data.rfind(b"PK\x01\x02", 0, at)
    data[entry + 24:entry + 28] = (100).to_bytes(4, "little")
    assert info.file_size == 300 << 20 and cd >= 0
    (tmp_path / "liar.gjir").write_bytes(bytes(data))
    tracemalloc.start()
    try:
        with pytest.raises(ms.GraphjitError):
            ms.load(path)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 40 << 20 + len(data), f"loading took {peak >> 20} MiB"


@pytest.mark.parametrize("extra", [{"../evil.txt": b"x"}, {"a/b/graph.txt": b"x"},
                                   {f"m{k}": b"" for k in range(100)}])
def test_extra_or_nested_members_are_refused(tanh_parts, tmp_path, extra):
    path = write_archive(tmp_path / "extra.gjir", dict(tanh_parts, **extra))
    with pytest.raises(ms.GraphjitError, match="extra.gjir"):
        ms.load(path)


def test_duplicate_members_are_refused(tanh_parts, tmp_path):
    path = tmp_path / "dup.gjir"
    write_archive(path, tanh_parts)
    with pytest.warns(UserWarning), zipfile.ZipFile(path, "a") as z:
        z.writestr("graph.txt", b"graph f() -> none\n  return None\n")
    with pytest.raises(ms.GraphjitError, match="more than once|4 members"):
        ms.load(str(path))


def test_params_npz_with_a_huge_array_header_is_refused(tanh_parts, tmp_path):
    """An .npy header inside params.npz claiming 745 GiB is refused before NumPy allocates it."""
    header = {"descr": "<f8", "fortran_order": False, "shape": (100_000_000_000,)}
    npy = io.BytesIO()
    np.lib.format.write_array_header_1_0(npy, header)
    npz = io.BytesIO()
    with zipfile.ZipFile(npz, "w") as z:
        z.writestr("w.npy", npy.getvalue() + b"\0" * 64)
    manifest = json.loads(tanh_parts["manifest.json"])
    manifest["params"] = [{"name": "w", "dtype": "float64", "shape": [100_000_000_000]}]
    parts = dict(tanh_parts, **{"params.npz": npz.getvalue(), "manifest.json": json.dumps(manifest).encode()})
    with pytest.raises(ms.GraphjitError, match="params"):
        ms.load(write_archive(tmp_path / "bigparam.gjir", parts))


# --- 7. malformed graph text gives one GraphjitError naming the file and line --------------------------

def test_a_hundred_thousand_minus_signs(tanh_parts, tmp_path):
    text = tanh_parts["graph.txt"].decode().replace("mul(%0, 2.0)", "mul(%0, " + "-" * 100_000 + "2.0)")
    with pytest.raises(ms.GraphjitError) as info:
        ms.load(crafted(tmp_path, tanh_parts, text))
    assert "graph.txt:3" in one_line(info.value) and "crafted.gjir" in one_line(info.value)


@pytest.mark.parametrize("literal", ["(" * 150 + "1" + ")" * 150, "1" + "+1j" * 5000,
                                     "(" + "(" * 100 + "1," + ")" * 100 + ")", "'" + "a" * 2_000_000 + "'"])
def test_deep_or_long_literals(tanh_parts, tmp_path, literal):
    text = tanh_parts["graph.txt"].decode().replace("mul(%0, 2.0)", f"mul(%0, {literal})")
    with pytest.raises(ms.GraphjitError) as info:
        ms.load(crafted(tmp_path, tanh_parts, text))
    assert "crafted.gjir" in one_line(info.value)


def nested_ifs(depth: int) -> str:
    """`if` regions nested `depth` deep (indentation left out: the parser does not need it)."""
    lines = ["graph deep(%x: f64[3]) -> f64[3]"]
    outer = "%x"
    for k in range(depth):
        lines += [f"%r{k} = if(True, {outer}) : tuple(f64[3])", f"then(%a{k}: f64[3]) {{"]
        outer = f"%a{k}"
    lines.append(f"yield {outer}")
    for k in reversed(range(depth)):
        lines += ["}", f"else(%b{k}: f64[3]) {{", f"yield %b{k}", "}"]
        if k:
            lines.append(f"yield %a{k - 1}")
    lines.append("return %x")
    return "\n".join(lines) + "\n"


def test_nested_regions_within_the_limit_load_and_run(tanh_parts, tmp_path):
    run = ms.load(crafted(tmp_path, tanh_parts, nested_ifs(40)))
    np.testing.assert_array_equal(run(np.ones(3)), np.ones(3))


def test_regions_nested_two_thousand_deep(tanh_parts, tmp_path):
    with pytest.raises(ms.GraphjitError) as info:
        ms.load(crafted(tmp_path, tanh_parts, nested_ifs(2000)))
    assert "nested" in one_line(info.value) and "graph.txt:" in one_line(info.value)


def test_scratch_larger_than_the_archive_justifies(tanh_parts, tmp_path):
    text = tanh_parts["graph.txt"].decode().replace(
        RAISE_LINE, "  %9 = scratch() {slot=0} : f64[100000000000]\n" + RAISE_LINE)
    with pytest.raises(ms.GraphjitError) as info:
        ms.load(crafted(tmp_path, tanh_parts, text))
    assert "f64[100000000000]" in one_line(info.value) and "graph.txt:" in one_line(info.value)


@pytest.mark.parametrize("node", [
    "zeros((100000, 100000, 100000)) : f64[3]",
    "ones((1000000000,)) : f64[3]",
    "arange(0, 1000000000000) : i64[3]",
    "tile(%x, 1000000000000) : f64[3]",
    "mul('aaaa', 1000000000000) : str",
    "pow(10, 1000000000000) : int",
    "ones(3, 'U1000000000') : f64[3]",
    "astype(%x) {dtype='U1000000000'} : f64[3]",
    "full(3, 1, 'V1000000000') : f64[3]",
])
def test_allocations_beyond_the_declared_type_are_refused(tanh_parts, tmp_path, node):
    text = tanh_parts["graph.txt"].decode().replace(RAISE_LINE, f"  %9 = {node}\n" + RAISE_LINE)
    error, seen = load_and_call(crafted(tmp_path, tanh_parts, text), np.ones(3))
    assert error is not None and "crafted.gjir" in one_line(error)
    seen.assert_none()


@pytest.mark.parametrize("template", ["{0.__class__}", "{0.__class__.__init__.__globals__}", "{0[0]}",
                                      "{0!r:>1000000000}", "{:{}}", "{0:.999999999f}", "{:x<99999999}"])
def test_format_cannot_walk_attributes_or_grow_without_bound(tanh_parts, tmp_path, template):
    text = tanh_parts["graph.txt"].decode().replace(
        RAISE_LINE, f"  %9 = format(%x, 3) {{template={template!r}}} : str\n" + RAISE_LINE)
    error, seen = load_and_call(crafted(tmp_path, tanh_parts, text), np.ones(3))
    assert error is not None and "format" in one_line(error)
    seen.assert_none()


def test_plain_format_fields_still_load(tanh_parts, tmp_path):
    text = tanh_parts["graph.txt"].decode().replace(
        RAISE_LINE, "  %9 = format(%x, 3.5, 2) {template='{}: {:>8.3f} {!r}'} : str\n" + RAISE_LINE)
    error, seen = load_and_call(crafted(tmp_path, tanh_parts, text), np.ones(3))
    assert error is None, error
    seen.assert_none()


def test_too_many_lines_and_nodes(tanh_parts, tmp_path):
    body = "".join(f"  %n{k} = neg(%x) : f64[3]\n" for k in range(300_000))
    text = "graph many(%x: f64[3]) -> f64[3]\n" + body + "  return %x\n"
    with pytest.raises(ms.GraphjitError, match="nodes|lines"):
        ms.load(crafted(tmp_path, tanh_parts, text))


def test_errors_at_call_name_the_file(tanh_parts, tmp_path):
    """A node that fails on the values it meets names the archive and the line of graph.txt."""
    text = tanh_parts["graph.txt"].decode().replace(
        RAISE_LINE, "  %9 = reshape(%x, (2, 2)) : f64[2,2]\n" + RAISE_LINE)
    error, seen = load_and_call(crafted(tmp_path, tanh_parts, text), np.ones(3))
    assert error is not None and "crafted.gjir" in one_line(error) and "graph.txt:" in one_line(error)


FOREVER = """graph forever(%x: f64[3]) -> f64[3]
  %0 = while(%x) {carried=1} : tuple(f64[3])
    cond(%a: f64[3]) {
      yield True
    }
    body(%b: f64[3]) {
      %1 = neg(%b) : f64[3]
      yield %1
    }
  return %x
"""


def test_a_call_runs_a_bounded_number_of_nodes(tanh_parts, tmp_path, monkeypatch):
    from graphjit.graph import loadable
    monkeypatch.setattr(loadable, "MAX_STEPS", 10_000)
    run = ms.load(crafted(tmp_path, tanh_parts, FOREVER))
    with pytest.raises(ms.GraphjitError, match="ran more than 10000 nodes") as info:
        run(np.ones(3))
    assert "crafted.gjir" in one_line(info.value) and "graph.txt:" in one_line(info.value)


@pytest.mark.parametrize("node", [
    "einsum('ij,kl->ijkl', %b, %b) : f64[3]",
    "tensordot(%b, %b, 0) : f64[3]",
    "outer(%b, %b) : f64[3]",
    "add(%c, %r) : f64[3]",
    "call(%c, %r) {fn='numpy.matmul'} : object",
    "call(%c, %r) {fn='numpy.maximum'} : object",
])
def test_products_of_bounded_arrays_are_sized_before_they_run(tanh_parts, tmp_path, node):
    """Arrays within the limit multiply into one past it (outer products, broadcasting): refused first."""
    setup = ("  %b = broadcast_to(%x, (20000, 3)) : f64[20000,3]\n"
             "  %c = reshape(%b, (60000, 1)) : f64[60000,1]\n"
             "  %r = reshape(%b, (1, 60000)) : f64[1,60000]\n")
    text = tanh_parts["graph.txt"].decode().replace(RAISE_LINE, setup + f"  %9 = {node}\n" + RAISE_LINE)
    tracemalloc.start()
    try:
        error, seen = load_and_call(crafted(tmp_path, tanh_parts, text), np.ones(3))
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert error is not None and "would make an array of" in one_line(error), error
    assert peak < 100 << 20
    seen.assert_none()


@pytest.mark.parametrize("node", [
    "getitem(%x, %ic, %ir) {index=[$1, $2]} : f64[3]",
    "concatenate(%t) : f64[3]",
    "diag(%v) : f64[3]",
    "tolist(%v) : object",
])
def test_indexing_stacking_and_lists_are_sized_before_they_run(tanh_parts, tmp_path, node):
    setup = ("  %ic = zeros((60000, 1), np.int64) : i64[60000,1]\n"
             "  %ir = zeros((1, 60000), np.int64) : i64[1,60000]\n"
             "  %b = zeros((3000000,)) : f64[3000000]\n"
             "  %v = zeros((20000000,)) : f64[20000000]\n"
             "  %t = tuple(" + ", ".join(["%b"] * 48) + ") : object\n")
    text = tanh_parts["graph.txt"].decode().replace(RAISE_LINE, setup + f"  %9 = {node}\n" + RAISE_LINE)
    error, seen = load_and_call(crafted(tmp_path, tanh_parts, text), np.ones(3))
    assert error is not None and "would make" in one_line(error), error
    seen.assert_none()


def test_a_fifo_is_refused_without_blocking(tmp_path):
    fifo = tmp_path / "pipe.gjir"
    os.mkfifo(fifo)
    with pytest.raises(ms.GraphjitError, match="not a regular file"):
        ms.load(str(fifo))


def test_errors_never_quote_a_local_file_the_graph_names(tanh_parts, tmp_path):
    """A span comment naming a local file must not make graphjit print that file's lines."""
    secret = tmp_path / "secret.txt"
    secret.write_text("TOP-SECRET-LINE\n")
    for node in ["reshape(%x, (2, 2)) : f64[2,2]", "call(%x) {fn='numpy.save'} : object"]:
        text = tanh_parts["graph.txt"].decode().replace(
            RAISE_LINE, f"  %9 = {node}  # {secret}:1:1\n" + RAISE_LINE)
        error, seen = load_and_call(crafted(tmp_path, tanh_parts, text), np.ones(3))
        assert error is not None and "graph.txt:" in one_line(error)
        assert "TOP-SECRET" not in str(error) and "TOP-SECRET" not in "".join(getattr(error, "__notes__", []))


def test_errors_stay_short(tanh_parts, tmp_path):
    text = tanh_parts["graph.txt"].decode()
    for bad in [text.replace("mul(%0, 2.0)", "mul(%0, " + "-" * 100_000 + "2.0)"),
                text.replace("tanh(%x) :", "call(%x) {fn='numpy." + "a" * 100_000 + "'} :")]:
        with pytest.raises(ms.GraphjitError) as info:
            ms.load(crafted(tmp_path, tanh_parts, bad))
        assert len(one_line(info.value)) < 1000


def test_every_table_name_resolves_without_importing_anything():
    """The closed tables name only what graphjit has imported itself: looking a name up imports nothing."""
    import graphjit.export_load  # noqa: F401 - what graphjit.load imports first
    from graphjit.graph import loadable
    with watch() as seen:
        for name in sorted(loadable.CALLS):
            assert callable(loadable.lookup(name)), name
        for name in sorted(loadable.CLASSES):
            assert isinstance(loadable.lookup(name), type), name
        for name in sorted(loadable.EXCEPTIONS):
            assert issubclass(loadable.lookup(name), Exception), name
    seen.assert_none()
    with pytest.raises(KeyError):
        loadable.lookup("numpy.fft.fft")
