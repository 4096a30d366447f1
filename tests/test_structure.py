"""Package structure: the rules of the rooms of btlab (``docs/architecture.md``).

Every module of the two packages is parsed with :mod:`ast` (nothing is imported,
except by the two tests at the end, which import btlab in a fresh interpreter).
An import is *import-time* when it runs as the module is imported: at module
level, also inside ``if``/``try``/``with`` blocks and class bodies, but not
inside functions. It is *type-only* under ``if TYPE_CHECKING:`` (it never runs,
but the structure is the same: a type-only import is a dependency too). Imports
inside functions are *deferred*: they run when the function is called.

Edges of the import graph, for an import in module M of target T (a module of
the two packages; anything else is ignored):

* ``import a.b.c`` and ``from a.b import c`` (``c`` a module): T = ``a.b.c``;
  ``from a.b import name`` (``name`` not a module): T = ``a.b``; relative
  imports are resolved against M's package;
* M depends on T, and on each package containing T whose ``__init__`` has to
  run first, except M's own ancestor packages (Python runs those before M).

The rules, one test each:

* no import circle, import-time and type-only imports together; and no deferred
  import that closes one (:data:`DEFERRED_CYCLES` is empty: a circle is broken
  by moving names to where they belong, not by deferring an import);
* no import from a later room into an earlier one, deferred and type-only
  imports included (the order: the ``layers`` block of ``docs/architecture.md``;
  :func:`room`);
* each room's ``__init__`` docstring lists its modules and subpackages, one
  line each (``- ``name``: ...``, a subpackage as ``name/``), and names nothing
  else;
* at most :data:`MAX_ENTRIES` modules and subpackages in any folder;
* one class per name across all modules;
* an import inside a function only for an optional or heavy dependency or for
  the CLI's start-up, with the reason in a comment on its line or the line
  above (:data:`REASONS`; one comment may head a run of imports);
* ``btlab --help`` loads none of :data:`HEAVY`, and ``import btlab`` /
  ``import btlab.experiments`` load nothing of the runner;
* btlab.experiments stays pure: no Ray, YAML, Parquet, nothing of the runner.
"""

from __future__ import annotations

import ast
import io
import os
import re
import subprocess
import sys
import tokenize
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
#: folder -> the package it installs as
PACKAGES = {"experiments": "btlab.experiments", "runner": "btlab"}
#: What the searches must never import (they are pure Python with no I/O or Ray).
FORBIDDEN_IN_EXPERIMENTS = ("ray", "yaml", "pyarrow")
#: Most modules and subpackages in one folder (``__init__.py`` not counted, ``__main__.py`` is).
MAX_ENTRIES = 12
#: What ``btlab --help`` must not load.
HEAVY = ("ray", "numba", "pandas", "pyarrow", "matplotlib", "lifelines", "scipy", "pydantic")
#: The reasons an import may sit inside a function: its comment starts with one of these.
REASONS = ("heavy:", "optional:", "CLI start-up:")
#: Modules outside the rooms: the lazy public face, and ``python -m btlab``.
OUTSIDE_ROOMS = {"btlab", "btlab.__main__"}

#: Deferred imports that close a cycle: (importing module, imported module). Empty: a
#: circle is broken by moving names, not by deferring an import.
DEFERRED_CYCLES: set[tuple[str, str]] = set()


@dataclass(frozen=True)
class Import:
    module: str   # the importing module
    target: str   # the imported module (one of ours), or the name as written (others)
    line: int
    deferred: bool
    type_only: bool = False
    name: str = ""   # ``from target import name``, when name is not a module


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


def _walk(body: list[ast.stmt], deferred: bool, type_only: bool = False):
    """Import statements of ``body`` with whether they are deferred and type-only."""
    for node in body:
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            yield node, deferred, type_only
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            yield from _walk(node.body, True, type_only)
        elif isinstance(node, ast.If) and _is_type_checking(node.test):
            yield from _walk(node.body, deferred, True)
            yield from _walk(node.orelse, deferred, type_only)
        else:
            for field in ("body", "orelse", "finalbody", "handlers", "cases"):
                for child in getattr(node, field, []) or []:
                    if isinstance(child, (ast.excepthandler, ast.match_case)):
                        yield from _walk(child.body, deferred, type_only)
                    elif isinstance(child, ast.stmt):
                        yield from _walk([child], deferred, type_only)


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
    for node, deferred, type_only in _walk(tree.body, False):
        if isinstance(node, ast.Import):
            for alias in node.names:
                out.append(Import(module, alias.name, node.lineno, deferred, type_only))
            continue
        base = _resolve_base(module, node.level, node.module)
        for alias in node.names:
            sub = f"{base}.{alias.name}"
            if sub in MODULES:
                out.append(Import(module, sub, node.lineno, deferred, type_only))
            else:
                out.append(Import(module, base, node.lineno, deferred, type_only, alias.name))
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


def layers() -> list[str]:
    """The rooms, earliest first: the ``layers`` block of ``docs/architecture.md``."""
    text = (ROOT / "docs" / "architecture.md").read_text()
    (block,) = re.findall(r"^```layers\n(.*?)^```", text, re.S | re.M)
    return block.split()


def room(module: str) -> str | None:
    """A module's room: its first package below ``btlab`` (``btlab.store.read`` -> ``store``,
    ``btlab.errors`` -> ``errors``), except that a problem package's ``views`` module is in
    the ``views`` room; None for the modules outside the rooms (:data:`OUTSIDE_ROOMS`)."""
    if module in OUTSIDE_ROOMS:
        return None
    parts = module.split(".")
    if len(parts) == 4 and parts[1] == "problems" and parts[3] == "views":
        return "views"
    return parts[1]


def back_up_imports() -> list[str]:
    """Every import, deferred and type-only ones included, of a module of a later room
    (or of the public face) into a module of an earlier room."""
    order = {name: i for i, name in enumerate(layers())}
    out = []
    for module, imps in sorted(ALL_IMPORTS.items()):
        here = room(module)
        if here is None:
            continue
        for imp in imps:
            if imp.target == "btlab" and imp.name:   # the lazy face loads names of every room
                out.append(f"{module} (line {imp.line}) imports {imp.name} from the public "
                           "face btlab")
            for dep in depends_on(imp):
                there = room(dep)
                if there is not None and order[there] > order[here]:
                    out.append(f"{module} (line {imp.line}, room {here}) -> {dep} "
                               f"(room {there})")
    return out


def children(package: str) -> set[str]:
    """The modules (``name``) and subpackages (``name/``) of ``package`` as installed."""
    out = set()
    for name in MODULES:
        parent, _, last = name.rpartition(".")
        if parent == package:
            out.add(f"{last}/" if is_package(name) else last)
    return out


#: A docstring's line for one module: ``- ``name``: what it does`` (``name/`` for a package).
LISTED = re.compile(r"^\s*[-*]\s+``([A-Za-z_]\w*/?)``\s*:", re.M)


def listed(package: str) -> list[str]:
    doc = ast.get_docstring(ast.parse(MODULES[package].read_text())) or ""
    return LISTED.findall(doc)


def folder_entries(folder: Path) -> list[str]:
    """A folder's modules and subpackages (``__init__.py`` not counted)."""
    return sorted(p.name for p in folder.iterdir()
                  if (p.suffix == ".py" and p.name != "__init__.py")
                  or (p.is_dir() and (p / "__init__.py").exists()))


def class_definitions() -> dict[str, list[str]]:
    """Class name -> where it is defined (``module:line``), over every module."""
    out: dict[str, list[str]] = defaultdict(list)
    for module, path in MODULES.items():
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ClassDef):
                out[node.name].append(f"{module}:{node.lineno}")
    return out


def comments(path: Path) -> dict[int, str]:
    """Line number -> the text of the comment on it (without ``#``)."""
    tokens = tokenize.generate_tokens(io.StringIO(path.read_text()).readline)
    return {t.start[0]: t.string[1:].strip() for t in tokens if t.type == tokenize.COMMENT}


def _reason(texts: list[str]) -> str | None:
    """The first of ``texts`` (comments) that gives a reason: one of :data:`REASONS`, then words."""
    return next((c for c in texts if c.startswith(REASONS) and c.split(":", 1)[1].strip()), None)


def in_function_imports() -> list[tuple[str, str | None]]:
    """Every import inside a function, as (``module:line: statement``, its reason or None).

    The reason is a comment on the import's line (any of its lines) or alone on the line
    above, starting with one of :data:`REASONS`; a comment above a run of imports (one
    directly under the other) gives the reason of each of them."""
    out = []
    for module, path in sorted(MODULES.items()):
        text = path.read_text()
        lines = text.splitlines()
        notes = comments(path)
        run: dict[int, str | None] = {}   # last line of a deferred import -> its reason
        for node, deferred, _ in _walk(ast.parse(text).body, False):
            if not deferred:
                continue
            above = lines[node.lineno - 2].strip() if node.lineno > 1 else ""
            heading = _reason([notes.get(node.lineno - 1, "")]) if above.startswith("#") else None
            heading = heading or run.get(node.lineno - 1)   # the run's heading comment
            run[node.end_lineno] = heading
            own = _reason([notes.get(n, "") for n in range(node.lineno, node.end_lineno + 1)])
            reason = own or heading
            out.append((f"{module}:{node.lineno}: {ast.unparse(node)}", reason))
    return out


def loaded_by(code: str) -> set[str]:
    """The modules a fresh interpreter has loaded after running ``code`` (this process's
    ``PYTHONPATH``, so the btlab these tests see)."""
    script = (f"import sys\n{code}\n"
              "sys.stdout.flush()\nsys.stderr.write('\\n'.join(sorted(sys.modules)))")
    r = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                       env={**os.environ, "RAY_ADDRESS": ""}, cwd=ROOT, timeout=120)
    assert r.returncode == 0, r.stderr[-2000:]
    return set(r.stderr.split())


# ----------------------------------------------------------------------------- tests


def test_the_parser_sees_the_packages():
    assert {"btlab.experiments", "btlab.experiments.core", "btlab.experiments.compiled", "btlab",
            "btlab.cli.main", "btlab.problems.knights_tour"} <= set(MODULES)
    cli = {imp.target for imp in ALL_IMPORTS["btlab.api.run"] if not imp.deferred}
    assert "btlab.problems.plugins" in cli   # from btlab.problems import plugins
    views = ALL_IMPORTS["btlab.problems.knights_tour.views"]
    assert {"btlab.problems.knights_tour", "btlab.views.plots"} <= {imp.target for imp in views}


def test_no_import_cycle_type_only_imports_included():
    g = graph(include_deferred=False)
    cycles = find_cycles(g)
    assert not cycles, "import cycles (import-time and type-only imports):\n  " + "\n  ".join(
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


def test_type_only_imports_are_edges():
    tree = ast.parse("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    import a.b\n"
                     "def f():\n    import c\n")
    found = [(n.names[0].name, d, t) for n, d, t in _walk(tree.body, False)]
    assert found == [("TYPE_CHECKING", False, False), ("a.b", False, True), ("c", True, False)]
    # btlab.problems names its registry's names for type checkers only: still an edge
    edge = graph(include_deferred=False)["btlab.problems"]["btlab.problems.registry"]
    assert edge.type_only and not edge.deferred


def test_an_import_back_up_is_found(monkeypatch):
    up = Import("btlab.store.read", "btlab.views.tables", 9, deferred=True)
    face = Import("btlab.config.model", "btlab", 3, deferred=False, name="run")
    monkeypatch.setitem(ALL_IMPORTS, "btlab.store.read", [up])
    monkeypatch.setitem(ALL_IMPORTS, "btlab.config.model", [face])
    found = back_up_imports()
    assert "btlab.store.read (line 9, room store) -> btlab.views (room views)" in found
    assert "btlab.store.read (line 9, room store) -> btlab.views.tables (room views)" in found
    assert "btlab.config.model (line 3) imports run from the public face btlab" in found


def test_no_import_from_a_later_room_into_an_earlier_one():
    rooms = {room(m) for m in MODULES} - {None}
    assert rooms - set(layers()) == set(), "rooms missing from the layers block"
    bad = back_up_imports()
    assert not bad, (f"{len(bad)} imports point back up the layers {layers()}:\n  "
                     + "\n  ".join(bad))


def test_rooms_of_modules():
    assert room("btlab.store.read") == "store"
    assert room("btlab.errors") == "errors"
    assert room("btlab.experiments.compiled.knights.kernel") == "experiments"
    assert room("btlab.problems.knights_tour") == "problems"
    assert room("btlab.problems.knights_tour.views") == "views"
    assert room("btlab") is None and room("btlab.__main__") is None
    assert layers()[0] == "errors" and layers().index("store") < layers().index("views")


@pytest.mark.parametrize("package", sorted(m for m in MODULES if is_package(m)))
def test_each_room_docstring_lists_its_modules(package):
    names = listed(package)
    have = children(package)
    assert len(names) == len(set(names)), f"{package}: listed twice: {names}"
    missing, extra = sorted(have - set(names)), sorted(set(names) - have)
    assert not missing and not extra, (
        f"{MODULES[package]}: the docstring's module list (lines '- ``name``: ...') misses "
        f"{missing} and names {extra}, which do not exist")


def test_the_module_list_parser():
    doc = "Modules:\n\n- ``core``: the contract.\n- ``knights/``: the tour.\n``no``: prose\n"
    assert LISTED.findall(doc) == ["core", "knights/"]
    assert {"errors", "experiments/", "cli/", "__main__"} <= children("btlab")


@pytest.mark.parametrize("folder", sorted(
    str(p.relative_to(ROOT)) for name in PACKAGES for p in [ROOT / name, *(ROOT / name).rglob("*")]
    if p.is_dir() and (p / "__init__.py").exists()))
def test_at_most_12_entries_per_folder(folder):
    entries = folder_entries(ROOT / folder)
    assert len(entries) <= MAX_ENTRIES, f"{folder} holds {len(entries)} entries: {entries}"


def test_one_class_per_name():
    found = class_definitions()
    assert len(found["ProblemSpec"]) == 1
    twice = {name: where for name, where in found.items() if len(where) > 1}
    assert not twice, f"class names defined more than once: {twice}"


def test_imports_inside_functions_give_a_reason():
    found = in_function_imports()
    for where, reason in found:
        print(f"{where}  # {reason}")
    bad = [where for where, reason in found if reason is None]
    assert not bad, (f"{len(bad)} of {len(found)} imports inside functions give no reason (a "
                     f"comment on the line or the line above starting with one of {REASONS}; "
                     "anything else belongs at module level):\n  " + "\n  ".join(bad))


def test_the_reason_must_be_on_the_line_or_above(tmp_path, monkeypatch):
    path = tmp_path / "m.py"
    path.write_text("def f():\n    # heavy: numba compiles on import\n    import numba\n"
                    "    import numba.core\n\n    import os\n"
                    "    import fcntl  # optional: fcntl is POSIX-only\n"
                    "    import ray  # ray\n    # why not\n    import json\n")
    monkeypatch.setitem(MODULES, "btlab.m", path)
    got = {w.split(": ", 1)[1]: r for w, r in in_function_imports() if w.startswith("btlab.m:")}
    assert got == {"import numba": "heavy: numba compiles on import",
                   "import numba.core": "heavy: numba compiles on import", "import os": None,
                   "import fcntl": "optional: fcntl is POSIX-only", "import ray": None,
                   "import json": None}


def test_btlab_help_loads_nothing_heavy():
    loaded = loaded_by("from btlab.cli.main import main\ntry:\n    main(['--help'])\n"
                       "except SystemExit:\n    pass")
    assert "btlab.cli.main" in loaded
    heavy = sorted(m for m in loaded if m.split(".")[0] in HEAVY)
    assert not heavy, f"btlab --help loads {sorted({m.split('.')[0] for m in heavy})}"


@pytest.mark.parametrize("code", ["import btlab", "import btlab.experiments"])
def test_importing_btlab_loads_nothing_of_the_runner(code):
    loaded = {m for m in loaded_by(code) if m.split(".")[0] == "btlab"}
    assert code.split()[1] in loaded
    runner = sorted(m for m in loaded if m != "btlab" and not m.startswith("btlab.experiments"))
    assert not runner, f"{code} loads {runner}"


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
