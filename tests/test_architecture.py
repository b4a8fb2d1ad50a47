"""The structure of grader/ (docs/architecture.md): no import cycle, and imports flow down the layers.

The import graph is built from the source with ``ast``: every ``import`` and ``from ... import``
of a grader module, at module level or inside a function (a lazy import is still a dependency),
``if TYPE_CHECKING:`` blocks included. A ``from package import name`` counts as an import of the
submodule ``package.name`` when that is a module, else of the package.
"""
from __future__ import annotations

import ast
import fnmatch
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "grader"

#: the layers, lowest first (docs/architecture.md). An import from a module to one in a higher
#: layer is an upward import; a module of grader/ that no layer names fails the test, so that a
#: new module is placed on purpose.
LAYERS: list[tuple[str, ...]] = [
    # records and leaves: what every stage may read
    ("grader.version", "grader.memo", "grader.parsing", "grader.errors", "grader.cachedir", "grader.dtypes", "grader.results", "grader.protocol", "grader.cleanup",
     "grader.isolation", "grader.siblings", "grader.notebook", "grader.processes", "grader._child", "grader._confine", "grader.packing",
     "grader.frameworks", "grader.frameworks.*"),
    # the problem: spec, parameter kinds, cases, tolerance models, hint ideas
    ("grader.hints", "grader.hints.*", "grader.words", "grader.words.*", "grader.checkers", "grader.spec", "grader.spec_memo", "grader.spec_expr", "grader.tolerance",
     "grader.cases"),
    # values: comparison, diagnosis, the reference, the caches, the summary of failures
    ("grader.diagnose", "grader.compare", "grader.cache", "grader.derived", "grader.reference", "grader.expected",
     "grader.summary"),
    # the stages, in the order a check passes them
    ("grader.options", "grader.submission"),
    ("grader.plan",),
    ("grader.run", "grader.run.*", "grader.runner", "grader.diskwatch", "grader.sandbox", "grader.sandbox_user"),
    ("grader.shrink",),
    ("grader.grading",),
    ("grader.check",),
    ("grader.assignment",),
    # rendering a report
    ("grader.reports", "grader.reports.*"),
    # commands built on a check
    ("grader._args", "grader._io", "grader.flags", "grader.commands", "grader.batch", "grader.batch.*",
     "grader.validate", "grader.validate_mistakes", "grader.warm", "grader.notebook_check", "grader.export", "grader.forkserver", "grader.forkserver_client", "grader.forkserver_policy",
     "grader.web", "grader.web.*"),
    # the command line and the package facade
    ("grader.cli", "grader.__main__", "grader", "grader._warm_server"),
]
#: upward imports allowed (issue 17: at most 3)
MAX_UPWARD = 3


def modules() -> dict[str, Path]:
    """Every module of grader/ by dotted name."""
    out = {}
    for path in PACKAGE.rglob("*.py"):
        parts = list(path.relative_to(ROOT).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        out[".".join(parts)] = path
    return out


def import_graph() -> dict[str, set[str]]:
    """Module -> the grader modules it imports (anywhere in its source)."""
    mods = modules()

    def known(name: str) -> str | None:
        while name and name not in mods:
            name = name.rpartition(".")[0]
        return name or None

    graph: dict[str, set[str]] = {m: set() for m in mods}
    for mod, path in mods.items():
        package = mod.split(".") if path.name == "__init__.py" else mod.split(".")[:-1]
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
            targets: list[str] = []
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names if a.name.split(".")[0] == "grader"]
            elif isinstance(node, ast.ImportFrom):
                if node.level:
                    base = ".".join(package[:len(package) - node.level + 1] + ([node.module] if node.module else []))
                else:
                    base = node.module or ""
                if base.split(".")[0] != "grader":
                    continue
                targets = [f"{base}.{a.name}" if f"{base}.{a.name}" in mods else base for a in node.names]
            for target in targets:
                found = known(target)
                if found and found != mod:
                    graph[mod].add(found)
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan's algorithm, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    out: list[list[str]] = []
    counter = 0
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    out.append(sorted(component))
    return out


def layer_of(module: str) -> int | None:
    for i, patterns in enumerate(LAYERS):
        if any(fnmatch.fnmatchcase(module, p) for p in patterns):
            return i
    return None


def test_the_cycle_finder_finds_a_cycle():
    """The check below can fail: a two-module cycle and a three-module one are found."""
    graph = {"a": {"b"}, "b": {"a"}, "c": {"d"}, "d": {"e"}, "e": {"c", "f"}, "f": set()}
    assert sorted(cycles(graph)) == [["a", "b"], ["c", "d", "e"]]
    assert cycles({"a": {"b"}, "b": set()}) == []


def test_the_graph_sees_lazy_imports():
    """A function-level import is an edge (check_submission imports grading inside its body)."""
    graph = import_graph()
    assert "grader.grading" in graph["grader.check"]
    assert "grader.run.sandboxed" in graph["grader.check"]


def test_no_import_cycle_in_grader():
    found = cycles(import_graph())
    assert found == [], f"import cycles (strongly connected components): {found}"


def test_every_module_has_a_layer_and_imports_flow_down():
    graph = import_graph()
    unplaced = sorted(m for m in graph if layer_of(m) is None)
    assert unplaced == [], f"modules in no layer of tests/test_architecture.py LAYERS: {unplaced}"
    upward = sorted(f"{m} -> {t}" for m, targets in graph.items() for t in targets
                    if layer_of(t) > layer_of(m))  # type: ignore[operator]
    assert len(upward) <= MAX_UPWARD, f"{len(upward)} imports from a lower layer to a higher one: {upward}"
