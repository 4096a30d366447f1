"""Package structure: no import cycles in btlab, and btlab.experiments stays pure.

Every module of the two packages is parsed with :mod:`ast` (nothing is
imported). An import is *import-time* when it runs as the module is imported:
at module level, also inside ``if``/``try``/``with`` blocks and class bodies,
but not inside functions, and not under ``if TYPE_CHECKING:``. Imports inside
functions are *deferred*: they run when the function is called.

Edges of the import graph, for an import in module M of target T (a module of
the two packages; anything else is ignored):

* ``import a.b.c`` and ``from a.b import c`` (``c`` a module): T = ``a.b.c``;
  ``from a.b import name`` (``name`` not a module): T = ``a.b``; relative
  imports are resolved against M's package;
* M depends on T, and on each package containing T whose ``__init__`` has to
  run first, except M's own ancestor packages (Python runs those before M).

The import-time graph must have no cycle. A deferred import that closes a
cycle (its target reaches M through import-time imports) is how a cycle is
broken on purpose; :data:`DEFERRED_CYCLES` lists the ones that exist, so a new
one is a decision, not an accident.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
#: folder -> the package it installs as
PACKAGES = {"experiments": "btlab.experiments", "runner": "btlab"}
#: What the searches must never import (they are pure Python with no I/O or Ray).
FORBIDDEN_IN_EXPERIMENTS = ("ray", "yaml", "pyarrow")

#: Deferred imports that close a cycle: (importing module, imported module).
DEFERRED_CYCLES: set[tuple[str, str]] = set()


@dataclass(frozen=True)
class Import:
    module: str   # the importing module
    target: str   # the imported module (one of ours), or the name as written (others)
    line: int
    deferred: bool


def module_files() -> dict[str, Path]:
    """Dotted module name -> file, for every module of :data:`PACKAGES`."""
    out = {}
    for folder, package in PACKAGES.items():
        for path in sorted((ROOT / folder).rglob("*.py")):
            parts = [package, *path.relative_to(ROOT / folder).with_suffix("").parts]
            if parts[-1] == "__init__":
                parts.pop()
            out[".".join(parts)] = path
    return out


MODULES = module_files()


def is_package(name: str) -> bool:
    return MODULES.get(name, Path()).name == "__init__.py"


def ancestors(name: str) -> list[str]:
    parts = name.split(".")
    return [".".join(parts[:i]) for i in range(1, len(parts))]


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def _walk(body: list[ast.stmt], deferred: bool):
    """Import statements of ``body`` with whether they are deferred."""
    for node in body:
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            yield node, deferred
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            yield from _walk(node.body, True)
        elif isinstance(node, ast.If) and _is_type_checking(node.test):
            continue  # never runs
        else:
            for field in ("body", "orelse", "finalbody", "handlers", "cases"):
                for child in getattr(node, field, []) or []:
                    if isinstance(child, (ast.excepthandler, ast.match_case)):
                        yield from _walk(child.body, deferred)
                    elif isinstance(child, ast.stmt):
                        yield from _walk([child], deferred)


def _resolve_base(module: str, level: int, name: str | None) -> str:
    """The absolute module a (possibly relative) ``from`` import names."""
    if level == 0:
        return name or ""
    package = module if is_package(module) else module.rpartition(".")[0]
    parts = package.split(".")
    if level - 1 >= len(parts):
        raise ValueError(f"{module}: relative import beyond the top-level package")
    base = ".".join(parts[: len(parts) - (level - 1)])
    return f"{base}.{name}" if name else base


def imports_of(module: str) -> list[Import]:
    """Every import of ``module``, resolved: ours to module names, others as written."""
    tree = ast.parse(MODULES[module].read_text(), str(MODULES[module]))
    out = []
    for node, deferred in _walk(tree.body, False):
        if isinstance(node, ast.Import):
            for alias in node.names:
                out.append(Import(module, alias.name, node.lineno, deferred))
            continue
        base = _resolve_base(module, node.level, node.module)
        for alias in node.names:
            sub = f"{base}.{alias.name}"
            target = sub if sub in MODULES else base
            out.append(Import(module, target, node.lineno, deferred))
    return out


ALL_IMPORTS = {m: imports_of(m) for m in MODULES}


def depends_on(imp: Import) -> list[str]:
    """The modules of ours whose code must run for ``imp``: the target and its packages
    (but not the importing module's own ancestors, which Python has run already)."""
    if imp.target not in MODULES:
        return []
    skip = set(ancestors(imp.module)) | {imp.module}
    return [m for m in [*ancestors(imp.target), imp.target] if m in MODULES and m not in skip]


def graph(include_deferred: bool) -> dict[str, dict[str, Import]]:
    """module -> {module it depends on: the import that makes it so}."""
    g: dict[str, dict[str, Import]] = {m: {} for m in MODULES}
    for module, imps in ALL_IMPORTS.items():
        for imp in imps:
            if imp.deferred and not include_deferred:
                continue
            for dep in depends_on(imp):
                g[module].setdefault(dep, imp)
    return g


def find_cycles(g: dict[str, dict[str, Import]]) -> list[list[str]]:
    """One cycle (as a path that ends where it starts) per strongly connected component."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    components: list[list[str]] = []

    def connect(v: str) -> None:  # Tarjan's algorithm
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in g[v]:
            if w not in index:
                connect(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1 or v in g[v]:
                components.append(component)

    for v in sorted(g):
        if v not in index:
            connect(v)
    cycles = []
    for component in components:
        members = set(component)
        start = min(component)
        path = shortest_path(g, start, start, members)
        cycles.append(path)
    return cycles


def shortest_path(g, source: str, target: str, within: set[str]) -> list[str]:
    """Shortest path source -> ... -> target along edges of ``g`` inside ``within``
    (at least one edge), or [] when there is none."""
    frontier = [[source]]
    seen = set()
    while frontier:
        nxt = []
        for path in frontier:
            for w in sorted(g[path[-1]]):
                if w not in within:
                    continue
                if w == target:
                    return [*path, w]
                if w not in seen:
                    seen.add(w)
                    nxt.append([*path, w])
        frontier = nxt
    return []


def describe(g, path: list[str]) -> str:
    steps = [f"{a} (line {g[a][b].line}) -> {b}" for a, b in zip(path, path[1:])]
    return "\n    ".join(steps)


def deferred_cycles() -> dict[tuple[str, str], str]:
    """Deferred imports whose target reaches the importing module at import time."""
    top = graph(include_deferred=False)
    out = {}
    for module, imps in ALL_IMPORTS.items():
        for imp in imps:
            if not imp.deferred:
                continue
            for dep in depends_on(imp):
                back = shortest_path(top, dep, module, set(MODULES))
                if back:
                    out[(module, dep)] = (f"{module} (line {imp.line}, in a function) -> "
                                          + " -> ".join(back))
    return out


# ----------------------------------------------------------------------------- tests


def test_the_parser_sees_the_packages():
    assert {"btlab.experiments", "btlab.experiments.core", "btlab.experiments.compiled", "btlab",
            "btlab.cli.main", "btlab.problems.knights_tour"} <= set(MODULES)
    cli = {imp.target for imp in ALL_IMPORTS["btlab.api.run"] if not imp.deferred}
    assert "btlab.problems.plugins" in cli   # from btlab.problems import plugins
    views = ALL_IMPORTS["btlab.problems.knights_tour.views"]
    assert {"btlab.problems.knights_tour", "btlab.views.plots"} <= {imp.target for imp in views}


def test_no_import_cycle_at_import_time():
    g = graph(include_deferred=False)
    cycles = find_cycles(g)
    assert not cycles, "import cycles (module-level imports):\n  " + "\n  ".join(
        " -> ".join(c) + "\n    " + describe(g, c) for c in cycles)


def test_deferred_imports_that_close_a_cycle_are_known():
    found = deferred_cycles()
    for text in found.values():
        print("deferred import closing a cycle:", text)
    new = sorted(set(found) - DEFERRED_CYCLES)
    assert not new, ("imports inside functions that close an import cycle (make the "
                     "structure acyclic, or add them to DEFERRED_CYCLES with a reason):\n  "
                     + "\n  ".join(found[k] for k in new))
    gone = sorted(DEFERRED_CYCLES - set(found))
    assert not gone, f"DEFERRED_CYCLES lists cycles that no longer exist: {gone}"


@pytest.mark.parametrize("module", sorted(m for m in MODULES
                                           if m.startswith("btlab.experiments")))
def test_experiments_do_not_import_the_runner_ray_yaml_or_pyarrow(module):
    tree = ast.parse(MODULES[module].read_text())
    bad = []
    for node in ast.walk(tree):   # anywhere, functions included
        names: list[str] = []
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names = [node.module]
        elif (isinstance(node, ast.Call) and node.args
              and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str)
              and ((isinstance(node.func, ast.Attribute) and node.func.attr == "import_module")
                   or (isinstance(node.func, ast.Name) and node.func.id == "__import__"))):
            names = [node.args[0].value]
        bad += [f"line {node.lineno}: {name}" for name in names
                if name.split(".")[0] in FORBIDDEN_IN_EXPERIMENTS
                or (name.split(".")[0] == "btlab"
                    and not name.startswith(("btlab.experiments", "btlab.errors")))]
    assert not bad, f"{module} imports what experiments must not: {bad}"


def test_the_cycle_finder_finds_a_cycle():
    a = Import("a", "b", 1, False)
    g = {"a": {"b": a}, "b": {"c": Import("b", "c", 2, False)},
         "c": {"a": Import("c", "a", 3, False)}, "d": {"a": Import("d", "a", 4, False)}}
    assert find_cycles(g) == [["a", "b", "c", "a"]]
    assert describe(g, ["a", "b", "c", "a"]).startswith("a (line 1) -> b")
    assert find_cycles({"x": {}, "y": {"x": Import("y", "x", 1, False)}}) == []


def test_relative_imports_resolve_against_the_package():
    assert _resolve_base("btlab.problems.knights_tour", 3, None) == "btlab"
    assert _resolve_base("btlab.problems.knights_tour.views", 1, None) == \
        "btlab.problems.knights_tour"
    assert _resolve_base("btlab.cli.main", 2, "errors") == "btlab.errors"
    assert _resolve_base("btlab.experiments.compiled", 2, "core") == "btlab.experiments.core"


#: What a KeyboardInterrupt would leave half imported (:mod:`btlab.experiments.loading`).
KERNEL_PACKAGES = ("btlab.experiments.compiled", "numba", "llvmlite")


def _unheld_kernel_imports(tree: ast.AST) -> list[str]:
    """Imports of :data:`KERNEL_PACKAGES` inside functions, outside ``with interrupts_held()``."""
    bad: list[str] = []

    def holds(node: ast.With) -> bool:
        return any(isinstance(item.context_expr, ast.Call)
                   and getattr(item.context_expr.func, "id",
                               getattr(item.context_expr.func, "attr", None)) == "interrupts_held"
                   for item in node.items)

    def visit(node: ast.AST, in_function: bool, held: bool) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
                visit(child, True, False)
                continue
            names: list[str] = []
            if isinstance(child, ast.Import):
                names = [a.name for a in child.names]
            elif isinstance(child, ast.ImportFrom) and child.level == 0 and child.module:
                names = [child.module]
            bad.extend(f"line {child.lineno}: {name}" for name in names
                       if in_function and not held
                       and any(name == p or name.startswith(p + ".") for p in KERNEL_PACKAGES))
            visit(child, in_function,
                  held or (isinstance(child, (ast.With, ast.AsyncWith)) and holds(child)))

    visit(tree, False, False)
    return bad


@pytest.mark.parametrize("module", sorted(m for m in MODULES
                                           if not m.startswith("btlab.experiments.compiled")))
def test_the_kernels_load_with_interrupts_held(module):
    """A function that imports the compiled kernels (numba) on first use does it inside
    ``with interrupts_held():``: a Ctrl-C or a non-forced ``ray.cancel`` during the import
    would leave numba half imported, breaking every later compiled search of the process."""
    bad = _unheld_kernel_imports(ast.parse(MODULES[module].read_text()))
    assert not bad, f"{module} imports the kernels without interrupts_held(): {bad}"


def test_the_kernel_import_check_sees_an_unheld_import():
    tree = ast.parse("def f():\n    from btlab.experiments.compiled import warm_up\n"
                     "def g():\n    with interrupts_held():\n        import numba\n")
    assert _unheld_kernel_imports(tree) == ["line 2: btlab.experiments.compiled"]
