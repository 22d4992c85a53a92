"""Fuzzing `graphjit.load`: hostile `.gjir` files give GraphjitError and nothing else, with no side effects.

Three generators, each over real archives exported from a few functions and a Cell (tests/gjir_archives.py),
checksums recomputed as an attacker would:
- graph text from the format's grammar (header, params, node lines with ops from the op table and
  hostile ones, attributes, literals, types, regions), with names from the closed tables and outside them;
- archives whose members are renamed, duplicated, added, nested, or whose manifest fields are replaced;
- byte mutations (flips, inserts, deletions, truncations, splices) of a member or of the whole file.

Every archive is loaded, and what loads is called on inputs of its declared types, inside
`side_effects.watch()` (no exec at all: loading and running a graph compile nothing; while it runs,
NumPy may import its own modules on first use). Allowed outcomes:
a value, a `GraphjitError`, or an exception raised by the graph's own `raise`/`assert` node (marked by
a note). Profiles (tests/conftest.py): `ci` (default, a few seconds), `long`
(`GRAPHJIT_HYPOTHESIS_PROFILE=long`); `GRAPHJIT_FUZZ_STATS=path` writes the counts as JSON.
"""

import json
import os
import pathlib
import zipfile

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import graphjit as ms
from gjir_archives import MEMBERS, parts_of, valid_archives, with_checksums, write_archive
from graphjit.graph.ops import OPS
from side_effects import watch

PROFILE = "graphjit-" + os.environ.get("GRAPHJIT_HYPOTHESIS_PROFILE", "ci")
STATS = {"examples": 0, "loaded": 0, "refused_at_load": 0, "called": 0, "refused_at_call": 0,
         "raised_by_graph": 0, "escapes": 0, "side_effects": 0}


@pytest.fixture(scope="module")
def archives(tmp_path_factory):
    folder = tmp_path_factory.mktemp("fuzz")
    paths = valid_archives(folder)
    for path in paths.values():      # warm up: graphjit's modules imported, networkx's decorators compiled
        run = ms.load(path)
        run(*[np.ones(t.shape, t.dtype) for t in run.input_types])
    yield Archives({label: parts_of(path) for label, path in paths.items()})
    out = os.environ.get("GRAPHJIT_FUZZ_STATS")
    if out:
        pathlib.Path(out).write_text(json.dumps(STATS, indent=2))


class Archives(dict):
    """The valid archives' parts by label (a short repr: hypothesis prints the arguments of a failure)."""

    def __repr__(self) -> str:
        return f"<archives {', '.join(self)}>"


# Running a graph calls NumPy, which imports some of its own modules on first use (`np.median` imports
# `numpy.ma`): at call time those imports, and the module code they run, are NumPy's, not the file's.
NUMPY_ITSELF = ("numpy",)
NUMPY_DIR = os.path.dirname(np.__file__)


def check(path: str) -> None:
    """Load and call `path`; fail on any other escape or any side effect."""
    STATS["examples"] += 1
    with watch() as seen:
        try:
            run = ms.load(path)
        except ms.GraphjitError as e:
            assert "\n" not in e.one_line()
            run = None
            STATS["refused_at_load"] += 1
        except BaseException as e:   # noqa: BLE001 - the point of the test
            STATS["escapes"] += 1
            raise AssertionError(f"load escaped with {type(e).__name__}: {e}"[:2000]) from e
    if seen.events:
        STATS["side_effects"] += 1
    seen.assert_none()
    if run is None:
        return
    STATS["loaded"] += 1
    inputs = [np.ones(t.shape, t.dtype) for t in run.input_types]
    with watch(allow_imports=("graphjit",) + NUMPY_ITSELF) as seen:
        try:
            run(*inputs)
            STATS["called"] += 1
        except ms.GraphjitError as e:
            assert "\n" not in e.one_line()
            STATS["refused_at_call"] += 1
        except Exception as e:   # noqa: BLE001
            if not any("raised by the graph's" in n for n in getattr(e, "__notes__", ())):
                STATS["escapes"] += 1
                raise AssertionError(f"call escaped with {type(e).__name__}: {e}"[:2000]) from e
            STATS["raised_by_graph"] += 1
        except BaseException as e:   # noqa: BLE001
            STATS["escapes"] += 1
            raise AssertionError(f"call escaped with {type(e).__name__}: {e}"[:2000]) from e
    seen.events = [(event, arg) for event, arg in seen.events
                   if not (event == "exec" and arg.strip("'\"").startswith(NUMPY_DIR))]
    if seen.events:
        STATS["side_effects"] += 1
    seen.assert_none()


# --- the grammar ------------------------------------------------------------------------------------

DTYPES = ["f64", "f32", "i64", "i32", "u8", "bool", "c128", "f16", "object", "str", "V8", "?", "q", "float64"]
dims = st.one_of(st.integers(0, 5), st.sampled_from([3, 2, 4, 100_000_000_000, 2 ** 63, 2 ** 70, -1]),
                 st.just("?"))
array_types = st.builds(lambda d, shape: f"{d}[{','.join(map(str, shape))}]",
                        st.sampled_from(DTYPES), st.lists(dims, max_size=4)) | st.sampled_from(["f64[*]", "f64[3]"])
types = st.recursive(array_types | st.sampled_from(["int", "float", "bool", "str", "none", "object", "complex"]),
                     lambda inner: st.builds(lambda items: f"tuple({', '.join(items)})", st.lists(inner, max_size=3))
                     | st.builds(lambda a, b: f"{a}|{b}", inner, inner), max_leaves=6)

HOSTILE_NAMES = ["numpy.testing.measure", "numpy.save", "numpy.load", "numpy.f2py.__main__.main", "os.system",
                 "builtins.eval", "builtins.exec", "builtins.open", "builtins.__import__", "builtins.print",
                 "builtins.SystemExit", "builtins.KeyboardInterrupt", "numpy.lib.npyio.savetxt", "math.factorial",
                 "numpy.zeros", "numpy.ndarray.__subclasses__", "subprocess.run", "numpy.ctypeslib.load_library",
                 "builtins.getattr", "numpy.distutils.exec_command", "numpy.__builtins__.exec", "..", "", "a.b.c.d"]
GOOD_NAMES = ["numpy.linalg.norm", "numpy.sin", "math.exp", "builtins.min", "builtins.ValueError",
              "builtins.IndexError", "numpy.float64", "builtins.float", "numpy.floating", "numpy.sum"]
names = st.sampled_from(HOSTILE_NAMES + GOOD_NAMES)
TEMPLATES = ["{}", "{0}", "{:.3f}", "{!r}", "{0.__class__}", "{0[0]}", "{:>100000000}", "{:{}}", "{0.real}",
             "{x}", "{}{}{}", "{:.1e}", "{{}}", "{0!r:>5}", "{!z}", "{"]
scalars = st.one_of(st.integers(-5, 5), st.sampled_from([2 ** 62, 10 ** 30, -1, 0, 100_000_000_000]),
                    st.floats(allow_nan=True, allow_infinity=True), st.booleans(), st.none(),
                    st.text(max_size=8), st.sampled_from(["np.float64(1.5)", "np.int32(3)", "np.float64", "...",
                                                          "slice(None, None, -1)", "slice(0, 100000000000, 1)",
                                                          "complex(1.0, -0.0)", "$0", "$7", "nan", "-inf"]))


def literal_text(value) -> str:
    return value if isinstance(value, str) and (value.startswith(("np.", "slice", "complex", "$"))
                                               or value in ("...", "nan", "-inf")) else repr(value)


literals = st.recursive(scalars.map(literal_text),
                        lambda inner: st.lists(inner, max_size=3).map(lambda xs: "(" + ", ".join(xs) + ",)")
                        | st.builds(lambda n, x: "(" * n + x + ")" * n, st.integers(1, 300), inner)
                        | st.builds(lambda n, x: "-" * n + x, st.integers(1, 3000), inner), max_leaves=6)
ATTR_KEYS = ["fn", "template", "classes", "axis", "index", "kw", "out", "op", "carried", "slot", "buffer",
             "dtype", "keys", "value", "path", "name", "code", "keepdims", "__import__('os')", "x y"]


@st.composite
def attrs(draw):
    items = []
    for key in draw(st.lists(st.sampled_from(ATTR_KEYS), max_size=3, unique=True)):
        if key in ("fn",):
            value = repr(draw(names))
        elif key == "classes":
            value = repr(tuple(draw(st.lists(names, min_size=1, max_size=2))))
        elif key == "template":
            value = repr(draw(st.sampled_from(TEMPLATES)))
        elif key == "index":
            value = draw(st.sampled_from(["[$1]", "[0]", "[:, None]", "[...]", "[()]", "[$0:$1]", "[100000000000]"]))
        elif key == "op":
            value = repr(draw(st.sampled_from(["add", "pow", "mul", "system", "lshift"])))
        else:
            value = draw(literals)
        items.append(f"{key}={value}")
    return "{" + ", ".join(items) + "}" if items else ""


HOSTILE_OPS = ["call", "raise", "format", "isinstance", "scratch", "fallback", "pycall", "getattr", "setattr",
               "load_global", "store_global", "assert", "system", "const", "arg", "param"]
ops = st.sampled_from(sorted(OPS)) | st.sampled_from(HOSTILE_OPS)


@st.composite
def graph_texts(draw):
    """Graph text over the grammar of docs/graph-text.md, one argument `%x: f64[3]` as the manifest says."""
    defined = ["%x"]
    lines = ["graph fuzzed(%x: f64[3]) -> " + draw(types)]
    for k in range(draw(st.integers(0, 2))):
        path = draw(st.sampled_from(["bound['w']", "globals['os']", "bound", "bound['w'].x"]))
        lines.append(f"  param %p{k}: {draw(types)} = {path}")

    def body(depth: int, indent: str, terminator: str):
        for k in range(draw(st.integers(1, 4))):
            name = f"%v{len(defined)}"
            operands = draw(st.lists(st.sampled_from(defined) | literals, max_size=3))
            op = draw(ops)
            span = draw(st.sampled_from(["", "  # f.py:1:1", "  # grad of f.py:2:3", "  # " + "x" * 50]))
            lines.append(f"{indent}{name} = {op}({', '.join(operands)}) {draw(attrs())} : {draw(types)}{span}")
            if depth < 2 and draw(st.integers(0, 5)) == 0:
                label = draw(st.sampled_from(["then", "else", "body", "cond", "loop"]))
                lines.append(f"{indent}  {label}(%r{len(defined)}: {draw(types)}) {{")
                defined.append(f"%r{len(defined)}")
                body(depth + 1, indent + "    ", "yield")
                lines.append(f"{indent}  }}")
            defined.append(name)
        lines.append(f"{indent}{terminator} {draw(st.sampled_from(defined))}")
    body(0, "  ", "return")
    text = "\n".join(lines) + "\n"
    if draw(st.integers(0, 9)) == 0:   # deep nesting or many lines, past the limits
        text = draw(st.sampled_from([
            "graph g(%x: f64[3]) -> f64[3]\n" + "".join(f"%n{k} = neg(%x) : f64[3]\n" for k in range(3000)) + "return %x\n",
            "graph g(%x: f64[3]) -> f64[3]\n" + "%r = if(True, %x) : tuple(f64[3])\nthen(%a: f64[3]) {\n" * 60 + "return %x\n",
            "graph g(%x: f64[3]) -> f64[3]\n  %0 = mul(%x, " + "-" * 50_000 + "1) : f64[3]\n  return %0\n",
        ]))
    return text


SETTINGS = settings(settings.get_profile(PROFILE), max_examples=settings.get_profile(PROFILE).max_examples * 2)


@SETTINGS
@given(text=graph_texts(), base=st.sampled_from(["tanh", "branch", "loop"]))
def test_graph_text_from_the_grammar(archives, tmp_path_factory, text, base):
    path = tmp_path_factory.mktemp("g") / "fuzzed.gjir"
    check(write_archive(path, dict(archives[base], **{"graph.txt": text.encode("utf-8", "surrogatepass")})))


json_values = st.recursive(st.none() | st.booleans() | st.integers(-2, 2 ** 64) | st.floats() | st.text(max_size=10),
                           lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner,
                                                                                        max_size=3), max_leaves=8)
MANIFEST_KEYS = ["format", "version", "inputs", "static_args", "params", "output", "name", "sha256", "jit_level"]


@SETTINGS
@given(base=st.sampled_from(["tanh", "branch", "loop", "loop_o2", "cell"]), data=st.data())
def test_members_and_manifest(archives, tmp_path_factory, base, data):
    parts = dict(archives[base])
    manifest = json.loads(parts["manifest.json"])
    for key in data.draw(st.lists(st.sampled_from(MANIFEST_KEYS), max_size=2)):
        manifest[key] = data.draw(json_values)
    if data.draw(st.booleans()) and isinstance(manifest.get("params"), list) and manifest["params"] \
            and isinstance(manifest["params"][0], dict):
        entry = dict(manifest["params"][0])
        entry[data.draw(st.sampled_from(["dtype", "shape", "name"]))] = data.draw(
            st.sampled_from(["object", "<f3", [2 ** 63], [-1], [10 ** 11], "../x", "__class__", [1] * 70]))
        manifest["params"] = [entry] + manifest["params"][1:]
    parts["manifest.json"] = json.dumps(manifest).encode()
    parts = with_checksums(parts) if data.draw(st.booleans()) else parts
    entries = list(parts.items())
    for _ in range(data.draw(st.integers(0, 2))):
        name = data.draw(st.sampled_from(list(MEMBERS) + ["../evil", "a/graph.txt", "/abs", "graph.txt/", "x" * 300]))
        entries.append((name, data.draw(st.binary(max_size=64))))
    if data.draw(st.booleans()):
        entries = data.draw(st.permutations(entries))
    path = tmp_path_factory.mktemp("m") / "members.gjir"
    with zipfile.ZipFile(path, "w", compression=data.draw(st.sampled_from([zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED,
                                                                              zipfile.ZIP_BZIP2]))) as z:
        import warnings
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")   # duplicate names
            for name, payload in entries:
                z.writestr(name, payload)
    check(str(path))


def mutate(data: bytes, draw) -> bytes:
    out = bytearray(data)
    for _ in range(draw(st.integers(1, 8))):
        kind = draw(st.sampled_from(["flip", "set", "insert", "delete", "truncate", "repeat"]))
        at = draw(st.integers(0, max(len(out) - 1, 0)))
        if kind == "flip" and out:
            out[at] ^= 1 << draw(st.integers(0, 7))
        elif kind == "set" and out:
            out[at] = draw(st.sampled_from([0, 0xFF, ord("9"), ord("("), ord("{"), ord("-"), ord("%"), ord("\n")]))
        elif kind == "insert":
            out[at:at] = draw(st.binary(min_size=1, max_size=8) | st.sampled_from([b"9999999", b"((((", b"\n}", b"{0.a}"]))
        elif kind == "delete":
            del out[at:at + draw(st.integers(1, 16))]
        elif kind == "truncate":
            del out[at:]
        elif kind == "repeat":
            out[at:at] = out[at:at + draw(st.integers(1, 64))] * draw(st.integers(1, 20))
    return bytes(out)


@SETTINGS
@given(base=st.sampled_from(["tanh", "branch", "loop", "loop_o2", "cell"]),
       member=st.sampled_from(["graph.txt", "params.npz", "manifest.json", "whole file"]), data=st.data())
def test_byte_mutation(archives, tmp_path_factory, base, member, data):
    folder = tmp_path_factory.mktemp("b")
    parts = archives[base]
    path = folder / "mutated.gjir"
    if member == "whole file":
        write_archive(path, parts, fix_checksums=False)
        path.write_bytes(mutate(path.read_bytes(), data.draw))
    else:
        mutated = dict(parts, **{member: mutate(parts[member], data.draw)})
        write_archive(path, mutated, fix_checksums=member != "manifest.json")
    check(str(path))


TOKEN = r"%[\w.]+|[A-Za-z_]\w*|-?\d+(?:\.\d+)?(?:e-?\d+)?|'[^']*'|\[[^\]]*\]|\S"


@SETTINGS
@given(base=st.sampled_from(["tanh", "branch", "loop", "loop_o2", "cell"]), data=st.data())
def test_one_token_replaced(archives, tmp_path_factory, base, data):
    """A valid graph with a few tokens replaced by grammar pieces: most still parse, and many still run."""
    import re
    text = archives[base]["graph.txt"].decode()
    tokens = [m.span() for m in re.finditer(TOKEN, text)]
    for _ in range(data.draw(st.integers(1, 3))):
        start, end = data.draw(st.sampled_from(tokens))
        piece = data.draw(st.one_of(literals, types, ops, st.sampled_from(TEMPLATES).map(repr), names.map(repr),
                                    attrs(), st.sampled_from(["%x", "%0", "%1", "%y", "%s", "%i", "$0", "$1"])))
        text = text[:start] + piece + text[end:]
        tokens = [m.span() for m in re.finditer(TOKEN, text)]
    path = tmp_path_factory.mktemp("t") / "tokens.gjir"
    check(write_archive(path, dict(archives[base], **{"graph.txt": text.encode("utf-8", "surrogatepass")})))


SIMPLE_OPS = sorted(n for n, o in OPS.items() if not o.region and n not in ("const", "arg", "param"))
small = st.one_of(st.integers(-3, 3), st.sampled_from([0.5, -1.0, 2.0, 10 ** 6, 2 ** 40, 1e300]),
                  st.sampled_from(["(2, 2)", "(3,)", "(100000, 100000)", "'ij,jk->ik'", "np.float32", "None",
                                   "'builtins.ValueError'", "'a'", "(1, 2, 3)", "True"]))
small_attrs = st.sampled_from(["", "{axis=0}", "{axis=-1}", "{index=[0]}", "{index=[$1]}", "{kw=('axis',)}",
                               "{dtype=np.int32}", "{keepdims=True}", "{template='{} {!r}'}",
                               "{classes=('numpy.ndarray',)}", "{fn='numpy.sin'}", "{fn='numpy.linalg.norm'}",
                               "{op='add'}", "{slot=0}", "{carried=0}", "{keys=('a',)}"])


@st.composite
def runnable_graphs(draw):
    """Straight-line graphs of op-table ops on `%x: f64[3]` and small constants: most load, and run."""
    defined, lines = ["%x"], ["graph run(%x: f64[3]) -> object"]
    for k in range(draw(st.integers(1, 6))):
        operands = draw(st.lists(st.sampled_from(defined) | small.map(str), min_size=0, max_size=3))
        node_type = draw(st.sampled_from(["f64[3]", "object", "f64[]", "int", "f64[3,3]", "bool[3]", "str"]))
        lines.append(f"  %v{k} = {draw(st.sampled_from(SIMPLE_OPS))}({', '.join(operands)}) {draw(small_attrs)} "
                     f": {node_type}")
        defined.append(f"%v{k}")
    lines.append(f"  return {defined[-1]}")
    return "\n".join(lines) + "\n"


@SETTINGS
@given(text=runnable_graphs())
def test_runnable_graphs(archives, tmp_path_factory, text):
    path = tmp_path_factory.mktemp("r") / "runnable.gjir"
    check(write_archive(path, dict(archives["tanh"], **{"graph.txt": text.encode()})))
