"""`graphjit check` and `graphjit transpile` never run the file they read (docs/diagnostics.md).

Each case plants a side effect somewhere Python would run it: module level, a class body, a
default, a decorator, a Cell's `__init__`, a base class, a metaclass, `__init_subclass__`, a
property, a dunder, a local module imported by the file, `import this`, `os.system`, `np.save`,
`os.open(..., O_CREAT)`, `posix.system`, `open(..., 'w')`, `exec`/`eval`/`compile`/`__import__`/
`getattr(__builtins__, ...)`. Every effect writes a marker file. In process, `tests/side_effects.py`
watches `check` and every `transpile --emit` form; a subprocess runs the command line on all of
them; no marker may appear. Literals too big to compute are refused, not tried, in bounded time.
"""

import subprocess
import sys
import textwrap
import time

import pytest
from click.testing import CliRunner

from graphjit.cli import main
from side_effects import watch

HEADER = """\
import os
import numpy as np
import graphjit as ms
from graphjit import nn
MARK = {mark!r}
"""

# name -> source after HEADER; `MARK` is the marker file's path; each case leaves jitted code that reads
# what the effect would have produced, so the static view has to decide what it knows about it.
CASES = {
    "module_os_system": """
        X = os.system("touch " + MARK)

        @ms.jit
        def f(x):
            return x + X
    """,
    "module_open_write": """
        X = open(MARK, "w")

        @ms.jit
        def f(x):
            return x + 1
    """,
    "module_np_save": """
        W = np.save(MARK, np.ones(3))

        @ms.jit
        def f(x):
            return x * W
    """,
    "module_os_open": """
        FD = os.open(MARK, os.O_CREAT | os.O_WRONLY)

        @ms.jit
        def f(x):
            return x + FD
    """,
    "module_posix_system": """
        import posix
        R = posix.system("touch " + MARK)

        @ms.jit
        def f(x):
            return x + R
    """,
    "import_this": """
        import this
        Z = this.s

        @ms.jit
        def f(x):
            return x + len(Z)
    """,
    "exec_eval_compile": """
        A = exec("open(MARK, 'w')")
        B = eval("open(MARK, 'w')")
        C = exec(compile("open(MARK, 'w')", "s", "exec"))
        D = __import__("os").system("touch " + MARK)
        E = getattr(__builtins__, "open")(MARK, "w")
        import builtins
        F = builtins.open(MARK, "w")
        G = globals()["__builtins__"]

        @ms.jit
        def f(x):
            return x + (A, B, C, D, E, F)[0]
    """,
    "class_body": """
        class Net(nn.Cell):
            K = os.system("touch " + MARK)
            L = open(MARK, "w")

            def construct(self, x):
                return x * self.K
    """,
    "default_argument": """
        @ms.jit
        def f(x, k=os.system("touch " + MARK), m=open(MARK, "w")):
            return x + k
    """,
    "decorator": """
        def evil(fn):
            open(MARK, "w")
            return fn

        def maker(arg):
            open(MARK, "w")
            return evil

        @ms.jit
        @evil
        @maker(open(MARK, "w"))
        def f(x):
            return x + 1
    """,
    "cell_init": """
        class Net(nn.Cell):
            def __init__(self):
                super().__init__()
                os.system("touch " + MARK)
                np.save(MARK, np.ones(2))
                self.fd = os.open(MARK, os.O_CREAT | os.O_WRONLY)
                open(MARK, "w").write("x")
                self.scale = 2.0

            def construct(self, x):
                return x * self.scale
    """,
    "base_class": """
        def pick_base(marker):
            return nn.Cell

        class Net(pick_base(open(MARK, "w"))):
            def construct(self, x):
                return x
    """,
    "numpy_base": """
        class Weights(np.memmap):
            pass

        class Net(nn.Cell):
            def __init__(self):
                super().__init__()
                self.w = Weights(MARK, dtype=np.float32, mode="w+", shape=(4,))

            def construct(self, x):
                return x
    """,
    "metaclass": """
        class Meta(type):
            def __new__(mcls, name, bases, ns):
                open(MARK, "w")
                return super().__new__(mcls, name, bases, ns)

        class Net(nn.Cell, metaclass=Meta):
            def construct(self, x):
                return x
    """,
    "init_subclass": """
        class Base(nn.Cell):
            def __init_subclass__(cls, **kwargs):
                open(MARK, "w")

        class Net(Base):
            def construct(self, x):
                return x
    """,
    "set_name_and_del": """
        class Field:
            def __set_name__(self, owner, name):
                open(MARK, "w")

            def __del__(self):
                open(MARK, "w")

        class Net(nn.Cell):
            field = Field()

            def __init__(self):
                super().__init__()
                self.other = Field()

            def construct(self, x):
                return x
    """,
    "property": """
        class Net(nn.Cell):
            @property
            def scale(self):
                open(MARK, "w")
                return 2.0

            def construct(self, x):
                return x * self.scale
    """,
    "dunders": """
        class Evil:
            def __add__(self, other):
                open(MARK, "w")
                return 1

            def __len__(self):
                open(MARK, "w")
                return 3

            def __iter__(self):
                open(MARK, "w")
                return iter([1, 2])

            def __getattr__(self, name):
                open(MARK, "w")
                return 1

        E = Evil()
        S = E + 1
        N = len(E)
        T = tuple(E)
        Q = sorted([3, 1], key=lambda v: open(MARK, "w"))

        class Net(nn.Cell):
            def __init__(self):
                super().__init__()
                self.e = Evil()
                self.n = len(self.e)
                self.z = self.e.anything

            def construct(self, x):
                for item in self.e:
                    x = x + item
                return x * len(self.e) + self.e.missing + (self.e + 1)
    """,
    "jitted_body": """
        @ms.jit
        def f(x):
            open(MARK, "w")
            np.save(MARK, 1.0)
            os.system("touch " + MARK)
            return x + len(str(open(MARK, "w")))
    """,
    "local_module": """
        import sibling_effects
        from sibling_effects import VALUE
        from . import sibling_effects as relative

        @ms.jit
        def f(x):
            return x + VALUE + sibling_effects.VALUE
    """,
}

SIBLING = """
open({mark!r}, "w").write("imported")
VALUE = 1.0
"""

# Literals whose value is too big to compute: refused before anything is computed.
BIG = """
import numpy as np
import graphjit as ms
A = 10**10**10
B = [0] * 10**10
C = "a" * 10**12
D = 1 << 10**12
E = np.zeros((10**6, 10**6))
F = sum(range(10**15))
G = list(range(10**12))
H = f"{1:>1000000000000}"

@ms.jit
def f(x):
    y = 10**10**10
    return x + A + len(B) + len(C) + y


class Net(ms.nn.Cell):
    def __init__(self):
        super().__init__()
        self.fc = ms.nn.Dense(10**6, 10**6)     # 4 TB of weights: refused before allocation

    def construct(self, x):
        return self.fc(x)
"""

# Loops and recursion that never end: the compile budget stops them, in bounded time.
ENDLESS = """
import graphjit as ms
from graphjit import nn

def spin():
    while True:
        pass

def deep(n):
    return deep(n + 1)

A = spin()
B = deep(0)
C = [i * i for i in range(10**9)]

class Net(nn.Cell):
    def __init__(self):
        super().__init__()
        total = 0
        for i in range(10**9):
            total += i
        self.t = total

    def construct(self, x):
        return x + A + B + len(C) + self.t
"""

# What a normal file's Cell does in its `__init__` is still computed: containers of layers, their keys,
# printing and seeding (skipped), NumPy weights.
NORMAL = """
import numpy as np
import graphjit as ms
from graphjit import nn

class Net(nn.Cell):
    def __init__(self, n=3):
        super().__init__()
        print("building")
        np.random.seed(0)
        layers = []
        for i in range(n):
            layers.append(nn.Dense(4, 4))
        self.layers = nn.CellList(layers)
        self.table = {"a": nn.ReLU()}
        self.names = sorted(self.table.keys())
        self.w = ms.Parameter(np.random.randn(4, 4).astype(np.float32), name="w")

    def construct(self, x):
        for layer in self.layers:
            x = layer(x)
        return self.table["a"](x) @ self.w
"""

FORMS = [("check",), ("transpile", "--emit", "numpy"), ("transpile", "--emit", "graph"),
         ("transpile", "--emit", "dot")]


def write_cases(folder) -> dict:
    """Each case as a file in `folder`, with its own marker path; (path, marker) by name."""
    out = {}
    for name, body in CASES.items():
        mark = folder / f"marker_{name}"
        path = folder / f"case_{name}.py"
        path.write_text(HEADER.format(mark=str(mark)) + textwrap.dedent(body))
        out[name] = (path, mark)
    (folder / "sibling_effects.py").write_text(SIBLING.format(mark=str(folder / "marker_sibling")))
    (folder / "this.py").write_text(f"open({str(folder / 'marker_local_this')!r}, 'w')\ns = 'shadowed'\n")
    return out


def markers(folder) -> list:
    return sorted(p.name for p in folder.iterdir() if p.name.startswith("marker_"))


@pytest.fixture(scope="module")
def warmed(tmp_path_factory):
    """graphjit's own lazy imports (NumPy's submodules it names) happen once before watching."""
    folder = tmp_path_factory.mktemp("warm")
    path = folder / "benign.py"
    path.write_text(textwrap.dedent("""
        import numpy as np
        import graphjit as ms
        from graphjit import nn
        N = 3 * 4
        W = np.ones((2, 3), np.float32)

        class Net(nn.Cell):
            def __init__(self):
                super().__init__()
                self.fc = nn.Dense(4, 2)
                self.w = np.zeros((2, 2))

            def construct(self, x):
                return self.fc(x) + np.linalg.norm(x) + np.fft.fft(x).real

        @ms.jit
        def f(x, k=2):
            print(x)
            return np.save("never", x) + len(str(x)) + N + k
    """))
    for form in FORMS:
        CliRunner().invoke(main, [*form, str(path)])
    return folder


def invoke(form, path):
    result = CliRunner().invoke(main, [*form, str(path)])
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    assert result.exit_code in (0, 1), result.output
    assert "internal error" not in result.output and "Traceback" not in result.output, result.output
    return result


@pytest.mark.parametrize("name", sorted(CASES))
def test_no_planted_effect_runs_in_process(tmp_path, warmed, name):
    cases = write_cases(tmp_path)
    path, _ = cases[name]
    for form in FORMS:
        modules = set(sys.modules)
        with watch() as seen:
            result = invoke(form, path)
        seen.assert_none()
        assert markers(tmp_path) == [], (form, result.output)
        assert "Beautiful is better than ugly" not in result.output
        assert not {"this", "sibling_effects", "posix_is_not_imported"} & (set(sys.modules) - modules)


def test_unknown_values_say_where_they_come_from(tmp_path, warmed):
    cases = write_cases(tmp_path)

    def check(name):
        return invoke(("check", "--level", "strict", "--format", "gcc"), cases[name][0])

    path = cases["module_os_system"][0]
    result = check("module_os_system")
    assert result.exit_code == 0    # a value check cannot know is a note: it does not fail the check
    assert f"{path}:11:16: note: [GJ001] cannot know `X` without running the module: it comes from a call to " \
           f"os.system ({path}:7:5)" in result.output
    out = check("cell_init").output
    assert "note" in out and "cannot know `os` without running the module: it is imported from `os`, which " \
        "graphjit does not import" in out
    out = check("local_module").output
    assert "`VALUE`" in out and "`sibling_effects`, which graphjit does not import" in out
    out = check("metaclass").output
    assert "class `Net`" in out and "metaclass=" in out and "class `Meta`" in out
    out = check("property").output
    assert "`Net.scale`" in out and "never runs" in out
    out = check("decorator").output
    assert "what `@evil` makes of `f`" in out and "checked as written" in out
    # what the static view cannot know is a note, never a false alarm; `open` inside jitted code is
    # what STRICT rejects in any case (GJ331), as `jit` does
    assert ": error: " not in "".join(check(name).output for name in CASES if name != "jitted_body")
    assert check("jitted_body").output.count(": error: [GJ331]") == 2


def test_transpile_refuses_what_it_cannot_know(tmp_path, warmed):
    cases = write_cases(tmp_path)
    result = invoke(("transpile", "--level", "strict"), cases["module_np_save"][0])
    assert result.exit_code == 1
    assert "cannot know `W` without running the module: it comes from a call to np.save" in result.output
    result = invoke(("transpile",), cases["jitted_body"][0])   # the calls stay calls, made when f runs
    assert result.exit_code == 0 and "np.save(" in result.output and "open(" in result.output


def test_subprocess_writes_no_marker(tmp_path):
    cases = write_cases(tmp_path)
    paths = [str(p) for p, _ in cases.values()]
    proc = subprocess.run([sys.executable, "-m", "graphjit", "check", *paths], capture_output=True, text=True,
                          timeout=300, cwd=tmp_path)
    assert proc.returncode in (0, 1) and "Traceback" not in proc.stderr, proc.stderr
    assert "Beautiful is better than ugly" not in proc.stdout + proc.stderr
    driver = textwrap.dedent(f"""
        import sys
        from graphjit.cli import main
        for path in {paths!r}:
            for form in {FORMS[1:]!r}:
                try:
                    main([*form, path, "-o", path + "." + form[-1] + ".out"], standalone_mode=False)
                except SystemExit:
                    pass
    """)
    proc = subprocess.run([sys.executable, "-c", driver], capture_output=True, text=True, timeout=600, cwd=tmp_path)
    assert "Traceback" not in proc.stderr, proc.stderr[-3000:]
    assert markers(tmp_path) == []


def test_big_literals_are_refused_not_computed(tmp_path, warmed):
    path = tmp_path / "big.py"
    path.write_text(BIG)
    for form in FORMS:
        start = time.perf_counter()
        with watch() as seen:
            result = invoke(form, path)
        seen.assert_none()
        assert time.perf_counter() - start < 20, form
    out = invoke(("check",), path).output
    assert "cannot know `A` without running the module" in out and "too big" in out
    assert "shape (1000000, 1000000): a weight of 1,000,000,000,000 elements is more than" in out


def test_endless_code_is_cut_short(tmp_path, warmed):
    path = tmp_path / "endless.py"
    path.write_text(ENDLESS)
    for form in FORMS:
        start = time.perf_counter()
        with watch() as seen:
            invoke(form, path)
        seen.assert_none()
        assert time.perf_counter() - start < 30, form
    out = invoke(("check", "--level", "strict"), path).output
    assert "cannot know `Net()` without running the file" in out and "1 note" in out


def test_a_normal_cell_is_still_checked(tmp_path, warmed):
    path = tmp_path / "normal.py"
    path.write_text(NORMAL)
    with watch() as seen:
        result = invoke(("check", "--level", "strict"), path)
    seen.assert_none()
    assert result.exit_code == 0 and "no problems found" in result.output, result.output
    result = invoke(("transpile", "--emit", "graph"), path)
    assert result.exit_code == 0 and "param %w: f32[4,4] = self.w" in result.output, result.output
