"""Hostile source for `graphjit check`: the samples' text with bytes and tokens mutated gives
diagnostics, and nothing else: no internal error, no side effect, whatever the file holds
(docs/security.md). Short hypothesis profile in CI; GRAPHJIT_HYPOTHESIS_PROFILE=long offline."""

import os

from hypothesis import HealthCheck, given, settings, strategies as st

from graphjit.cli import check_file
from graphjit.graph.diagnostics import Diagnostic
from locations import SAMPLES
from side_effects import watch

PROFILE = settings.get_profile("graphjit-" + os.environ.get("GRAPHJIT_HYPOTHESIS_PROFILE", "ci"))   # ci: 30, long: 2 000

SOURCES = {p.name: p.read_text() for p in sorted(SAMPLES.glob("*.py")) if p.name != "unsupported.py"}
# text a mutation splices in: what a hostile file would try, and what breaks a parser
SPLICES = ["import os\n", "os.system('touch /tmp/x')\n", "__import__('this')\n", "((((((((((", "]]]]", "\x00",
           "\ufeff", "def f(:\n", "    ", "\t", "lambda: ", "yield ", "await ", "\\\n", "'''", "0" * 400, "a+" * 300,
           "if x:\n" * 40, "class C(metaclass=type): pass\n", "@ms.jit\n", "open('/tmp/x', 'w')\n"]


def _warm_up() -> None:
    """graphjit's own first imports (LibCST, networkx, the passes) happen once, before anything is watched."""
    for name in ("network.py", "lenet.py"):
        check_file(str(SAMPLES / name), "LAX")


_warm_up()


@settings(PROFILE, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(name=st.sampled_from(sorted(SOURCES)),
       edits=st.lists(st.tuples(st.integers(0, 1 << 16), st.one_of(st.sampled_from(SPLICES), st.text(max_size=6)),
                                st.integers(0, 20)), min_size=1, max_size=4))
def test_mutated_sources_give_diagnostics_only(tmp_path_factory, name, edits):
    text = SOURCES[name]
    for at, insert, cut in edits:
        at %= max(len(text), 1)
        text = text[:at] + insert + text[at + cut:]
    path = tmp_path_factory.mktemp("check") / name
    path.write_text(text, encoding="utf-8", errors="surrogatepass")
    with watch(allow_exec=True) as seen:   # compiling the function the front end builds is graphjit's own exec
        found = check_file(str(path), "LAX")
    seen.assert_none()
    assert all(isinstance(d, Diagnostic) for d in found)
    assert not [d for d in found if "internal" in d.message.lower() or "Traceback" in d.message], found


# --- what the fuzzer found, kept as plain tests ---------------------------------------------------------------

def test_a_cell_attribute_before_super_init_is_a_note(tmp_path):
    path = tmp_path / "nosuper.py"
    path.write_text("from graphjit import nn\n\nclass Network(nn.Cell):\n    def __init__(self):\n"
                    "        self.dense = nn.Dense(4, 2)\n\n    def construct(self, x):\n        return self.dense(x)\n")
    found = check_file(str(path), "LAX")
    assert [d.severity for d in found] == ["note"]
    assert "super().__init__()" in found[0].message and found[0].span.line == 5


def test_a_leading_line_continuation_is_read(tmp_path):
    path = tmp_path / "continued.py"
    path.write_text("\\\n" + SOURCES["jit_transform.py"])
    found = check_file(str(path), "LAX")
    assert all(isinstance(d, Diagnostic) and d.severity != "error" for d in found), found
