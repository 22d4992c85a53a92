"""The lowering state: one object per compile holding the graph being built, names, diagnostics and options."""

from __future__ import annotations

from ...graph.guards import GuardRecorder
from ...graph.ir import Graph, Node
from ..budget import CompileBudget
from ..rules import LAX
from ..scope import Scope
from .access import AccessLowering
from .assign import AssignLowering
from .blocks import BlockLowering
from .branches import BranchLowering
from .budget import BudgetLowering
from .builtin_calls import BuiltinCallLowering
from .calls import CallLowering
from .dispatch import EXPRESSIONS, STATEMENTS
from .expressions import ExpressionLowering
from .fallback import FallbackLowering
from .for_loops import ForLowering
from .frame import closure_of
from .inline import InlineLowering
from .loops import LoopLowering
from .methods import MethodLowering
from .names import NameLowering
from .operands import OperandLowering
from .simple import SimpleStatementLowering
from .while_loops import WhileLowering


class Lowerer(BlockLowering, SimpleStatementLowering, AssignLowering, BranchLowering, ForLowering, WhileLowering,
              LoopLowering, ExpressionLowering, NameLowering, AccessLowering, CallLowering, BuiltinCallLowering,
              MethodLowering, InlineLowering, FallbackLowering, BudgetLowering, OperandLowering):
    """All of lowering for one compile: the graph being built and what the constructs share."""

    statement_lowering = STATEMENTS     # LibCST statement class -> its lowering (dispatch.py)
    expression_lowering = EXPRESSIONS

    def __init__(self, root_fn, graph: Graph, level: str = LAX, quiet: bool = False, over_budget=None):
        self.graph = graph
        self.level = level
        self.quiet = quiet          # collect diagnostics without warnings (graphjit check)
        self.diagnostics: list = []
        self.fallbacks = 0
        self.scope = Scope(graph)
        self.params: dict[str, Node] = {}
        self.consts: list = []
        self.recipes: dict = {}
        self.sources: list = []
        self.inlined: dict = {}
        self.guards = GuardRecorder()
        self.depth = 0
        self.budget = CompileBudget(over=dict(over_budget or {}))   # transpiler/budget.py
        self.function_sources: dict = {}      # code object -> (parsed file, FunctionDef), for this compile
        self.attribute_writes_noted: set = set()  # function nodes `note_attribute_writes` has visited
        self.mutated_attrs: set = set()   # attribute names this compile assigns (read at call time)
        self.unrollable = 0   # > 0 while lowering a range loop that could still be unrolled
        self.return_span = None
        self.root_fn = root_fn
        self.root_globals = getattr(root_fn, "__globals__", {})
        self.root_closure = closure_of(root_fn)
        self.pending_warnings: list = []      # (message, category, file, line), issued once lowering is final
        # Python containers (by id) and module globals ((id of the module dict, name)) this compile
        # changes, and those read at call time because an earlier lowering found them changed
        self.container_writes: set = set()
        self.attr_writes: set = set()         # attribute names this compile assigns (setattr nodes)
        # access path of each array read through one (node id -> path), and the paths whose array a
        # metadata write inside a loop or branch retypes (path -> attribute names): the next lowering
        # types every read of them as unknown in what the write may change (`unstable_paths`)
        self.path_of: dict = {}
        self.retyped_paths: dict = {}
        self.unstable_paths: dict = {}
        self.refreshed: dict = {}             # node id -> the `refresh` made after a write to its shape/dtype
        self.written_globals: set = set()
        self.runtime_objects: set = set()
        self.runtime_globals: set = set()
        self.param_objects: dict = {}         # node id of an object parameter -> the object
