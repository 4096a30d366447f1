"""Every ``fix:`` line works when followed.

One row per kind of error btlab reports with a fix: the bad input, the text the
error must show, how its fix line is applied (the edit to the YAML, the override, the
command, the file move -- read from the fix line itself wherever it names one), and
what must hold after (exit 0, or a different, later error). The CLI runs in this
process (:func:`btlab.cli.main.main`) in a scratch folder; the relative paths the
messages print are the ones a user would type there.

Not here (tested with their own fixes): ``btlab show results`` (the results root), the
override ``matrix.heuristic=none,warnsdorff`` and ``board=6`` (the override parser's
suggestions).
"""

from __future__ import annotations

import re
import secrets
import shlex
import subprocess
import sys
import textwrap
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

import pandas as pd
import pyarrow.parquet as pq
import pytest
from helpers.cli import run_main
from helpers.ray_cli import ray_cli_cluster
from test_cluster import TINY, head_turns_token_auth_on, needs_token_auth
from test_cluster import _user as cluster_user
from test_cluster import btlab as cluster_btlab

#: The sweep every case starts from: 3 trials of 6-queens, well under a second.
BASE = """\
name: fx
problem: n_queens
fixed: {n: 6, mode: count}
matrix:
  strategy: [recursive, iterative, bitmask]
"""

RULES = """\
def corner(board, square, candidates):
    return sorted(candidates)
"""

KNIGHTS = """\
name: kt
problem: knights_tour
fixed: {board: [5, 5], start: [0, 0], mode: first}
matrix:
  heuristic: [warnsdorff, "RULES:corner"]
budget: {nodes: 2000}
"""

#: 50 knight's-tour trials (a second problem; the library's rows).
LIBRARY_SWEEP = """\
name: lib
problem: knights_tour
fixed: {board: [5, 5], mode: first}
matrix:
  heuristic: [none, warnsdorff]
  start: all
budget: {nodes: 3000}
"""


@dataclass
class Ctx:
    """A scratch folder, the config in it, and the argv of the command being fixed."""

    root: Path
    argv: list[str]
    monkeypatch: pytest.MonkeyPatch
    extra: dict = field(default_factory=dict)

    @property
    def config(self) -> Path:
        return self.root / "c.yaml"

    def edit(self, old: str, new: str, count: int = 1) -> None:
        text = self.config.read_text()
        assert old in text, (old, text)
        self.config.write_text(text.replace(old, new, count))

    def replace_arg(self, old: str, new: str) -> None:
        self.argv[self.argv.index(old)] = new

    def set_out(self, out: str) -> None:
        i = self.argv.index("--out")
        self.argv[i + 1] = out


@dataclass
class Case:
    """One kind of error.

    Attributes:
        argv: the command (``{c}`` is the config file).
        error: text the error message must hold.
        fix: a regular expression the fix line must match; its groups go to ``apply``.
        apply: follows the fix: ``(ctx, match)``, changing files or ``ctx.argv``.
        config: the config's text (default :data:`BASE`).
        prepare: sets the scene before the failing command (a folder, a file).
        later: None: after the fix the command exits 0; else text of the later error.
    """

    argv: list[str]
    error: str
    fix: str
    apply: Callable[[Ctx, re.Match], None]
    config: str = BASE
    prepare: Callable[[Ctx], None] | None = None
    later: str | None = None


def _validate(*extra: str) -> list[str]:
    return ["validate", "{c}", *extra]


def _run(out: str = "r", *extra: str) -> list[str]:
    return ["run", "{c}", "--backend", "serial", "--quiet", "--out", out, *extra]


def _rename(ctx: Ctx, m: re.Match, old: str) -> None:
    ctx.edit(old, m[1])


def _drop_line(ctx: Ctx, line: str) -> None:
    ctx.edit(line + "\n", "")


def _set_value(ctx: Ctx, m: re.Match) -> None:
    """``set KEY to VALUE ...``: the value written at the dotted key (YAML edited)."""
    key, value = m["key"], m["value"]
    leaf = key.split(".")[-1]
    text = ctx.config.read_text()
    new = re.sub(rf"(\b{re.escape(leaf)}:\s*)[^,}}\n]+", rf"\g<1>{value}", text, count=1)
    assert new != text
    ctx.config.write_text(new)


def _override_value(ctx: Ctx, m: re.Match) -> None:
    """The same fix, followed on the command line: ``KEY=VALUE``."""
    i = next(i for i, a in enumerate(ctx.argv) if a.startswith(m["key"] + "="))
    ctx.argv[i] = f"{m['key']}={m['value']}"


def _shell(ctx: Ctx, m: re.Match) -> None:
    """A command the fix line gives, run as typed in the scratch folder."""
    done = subprocess.run(m[1], shell=True, cwd=ctx.root, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr


def _plugin(ctx: Ctx, module: str, text: str, where: str = "plugs") -> None:
    folder = ctx.root / where
    folder.mkdir(exist_ok=True)
    (folder / f"{module}.py").write_text(textwrap.dedent(text))


def _knights(module: str) -> str:
    return KNIGHTS.replace("RULES", module)


def _one_run(ctx: Ctx) -> None:
    assert run_main(*[a.replace("{c}", str(ctx.config)) for a in _run("r")]) == 0


def _damage(ctx: Ctx) -> None:
    _one_run(ctx)
    part = sorted((ctx.root / "r").glob("part-*.parquet"))[0]
    part.write_bytes(part.read_bytes()[:40])


def _stray(ctx: Ctx) -> None:
    _one_run(ctx)
    (ctx.root / "r" / "notes.txt").write_text("my notes\n")


def _newer(ctx: Ctx) -> None:
    _one_run(ctx)
    part = sorted((ctx.root / "r").glob("part-*.parquet"))[0]
    table = pq.read_table(part)
    meta = {**table.schema.metadata, b"btlab.schema_version": b"99"}
    pq.write_table(table.replace_schema_metadata(meta), part)


def _other_config(ctx: Ctx) -> None:
    _one_run(ctx)
    ctx.edit("name: fx", "name: fx2")


def _hold_lock(ctx: Ctx) -> None:
    from btlab.store.lock import FolderLock

    lock = FolderLock(ctx.root / "r")
    lock.acquire()
    ctx.extra["lock"] = lock


def _release_lock(ctx: Ctx, m: re.Match) -> None:
    ctx.extra.pop("lock").release()  # "wait for it to finish": the other run ends


def _unwritable(ctx: Ctx) -> None:
    # root writes everywhere: the store's own probe is made to say what a read-only
    # folder says, for the folder r only
    import btlab.store.writes as writes

    real = writes.not_writable
    ctx.monkeypatch.setattr(writes, "not_writable", lambda folder: "Permission denied"
                            if Path(folder).resolve() == (ctx.root / "r").resolve()
                            else real(folder))
    (ctx.root / "r").mkdir()


def _follow_out(ctx: Ctx, m: re.Match) -> None:
    out = m[1]
    ctx.set_out(out)
    ctx.extra["out"] = out


def _tmp_out(ctx: Ctx, m: re.Match) -> None:
    out = Path(m[1])
    assert out.parent.is_dir()
    target = ctx.root / "tmp-elsewhere" / out.name  # the same name, in this test's folder
    ctx.set_out(str(target))


CASES = [
    # ------------------------------------------------------------------ config keys
    pytest.param(Case(_validate(), "unknown key 'budgte'", r"did you mean '(budget)'\?",
                      lambda c, m: _rename(c, m, "budgte"),
                      config=BASE + "budgte: {nodes: 5000}\n"), id="unknown-key-close"),
    pytest.param(Case(_validate(), "unknown key 'zzz'", r"remove it",
                      lambda c, m: _drop_line(c, "zzz: 1"), config=BASE + "zzz: 1\n"),
                 id="unknown-key"),
    pytest.param(Case(_validate(), "unknown key 'node'", r"did you mean '(nodes)'\?",
                      lambda c, m: _rename(c, m, "node"),
                      config=BASE + "budget: {node: 5000}\n"), id="unknown-nested-key"),
    pytest.param(Case(_validate(), "unknown parameter 'board'", r"remove it",
                      lambda c, m: c.edit("board: 5, ", ""),
                      config=BASE.replace("{n: 6,", "{board: 5, n: 6,")),
                 id="unknown-parameter"),
    pytest.param(Case(_validate(), "the key 'problem'", r"add (problem: knights_tour)",
                      lambda c, m: c.edit("name: fx\n", f"name: fx\n{m[1]}\n"),
                      config="name: fx\n", later="the parameter 'board' in fixed or matrix"),
                 id="missing-problem"),
    pytest.param(Case(_validate(), "the parameter 'board' in fixed or matrix",
                      r"add (board: \[8, 8\]) under fixed",
                      lambda c, m: c.config.write_text(c.config.read_text()
                                                       + f"fixed: {{{m[1]}}}\n"),
                      config="name: kt\nproblem: knights_tour\n"), id="missing-parameter"),
    pytest.param(Case(_validate(), "the key 'name'", r"add (name: my-sweep)",
                      lambda c, m: c.edit("problem:", f"{m[1]}\nproblem:"),
                      config=BASE.replace("name: fx\n", "")), id="missing-name"),
    pytest.param(Case(_validate(), "a name of letters", r"rename it, e\.g\. (name: my-sweep)",
                      lambda c, m: c.edit("name: a/b", m[1]),
                      config=BASE.replace("name: fx", "name: a/b")), id="bad-name"),
    pytest.param(Case(_validate(), "'budget' given twice", r"delete one of the two",
                      lambda c, m: _drop_line(c, "budget: {nodes: 9}"),
                      config=BASE + "budget: {nodes: 5000}\nbudget: {nodes: 9}\n"),
                 id="duplicate-key"),
    # ------------------------------------------------------------------ types and values
    pytest.param(Case(_validate(), "a valid integer",
                      r"write a whole number without quotes, e\.g\. (\d+)",
                      lambda c, m: c.edit("repeats: three", f"repeats: {m[1]}"),
                      config=BASE + "repeats: three\n"), id="bad-type"),
    pytest.param(Case(_validate(), "found:    '3'",
                      r"a number in quotes is text: write (3) without quotes",
                      lambda c, m: c.edit("repeats: '3'", f"repeats: {m[1]}"),
                      config=BASE + "repeats: '3'\n"), id="number-in-quotes"),
    pytest.param(Case(_validate(), "found:    '1e3'", r"signed exponent\): write (1\.0e\+3)$",
                      lambda c, m: c.edit("1e3", m[1]),
                      config=BASE + "budget: {seconds: 1e3}\n"), id="yaml11-exponent-float"),
    # issue 26, kind 15: a decimal point is there; YAML 1.1 wants the exponent signed
    pytest.param(Case(_validate(), "found:    '2.5e3'", r"signed exponent\): write (2\.5e\+3)$",
                      lambda c, m: c.edit("2.5e3", m[1]),
                      config=BASE + "budget: {seconds: 2.5e3}\n"), id="yaml11-exponent-unsigned"),
    pytest.param(Case(_validate(), "found:    '1E-3'", r"signed exponent\): write (1\.0e-3)$",
                      lambda c, m: c.edit("1E-3", m[1]),
                      config=BASE + "budget: {seconds: 1E-3}\n"), id="yaml11-exponent-no-point"),
    pytest.param(Case(_validate(), "found:    '+.5e3'", r"signed exponent\): write (\+0\.5e\+3)$",
                      lambda c, m: c.edit("+.5e3", m[1]),
                      config=BASE + "budget: {seconds: +.5e3}\n"), id="yaml11-exponent-signed-dot"),
    pytest.param(Case(_validate(), "found:    1500000.0 (float)",
                      r"write it as a whole number: (1_500_000)$",
                      lambda c, m: c.edit("1.5e+6", m[1]),
                      config=BASE + "budget: {nodes: 1.5e+6}\n"), id="float-where-a-count-goes"),
    pytest.param(Case(_validate(), "found:    '1e4'", r"write the whole number in full, (10_000)$",
                      lambda c, m: c.edit("1e4", m[1]),
                      config=BASE + "budget: {nodes: 1e4}\n"), id="yaml11-exponent-integer"),
    pytest.param(Case(_validate(), "a number of at least 1",
                      r"set (?P<key>repeats) to (?P<value>1) or more", _set_value,
                      config=BASE + "repeats: 0\n"), id="below-range"),
    pytest.param(Case(_validate(), "a number of at least 1",
                      r"set (?P<key>fixed\.n) to (?P<value>1) or more", _set_value,
                      config=BASE.replace("n: 6", "n: 0")), id="below-range-parameter"),
    pytest.param(Case(_validate(), "a number of at most 4,611,686,018,427,387,904",
                      r"set (?P<key>budget\.nodes) to (?P<value>[\d_]+) or less", _set_value,
                      config=BASE + "budget: {nodes: 99999999999999999999}\n"),
                 id="above-range"),
    pytest.param(Case(_validate(), "a number greater than 0",
                      r"set (?P<key>budget\.seconds) to a number above (?P<value>0)",
                      lambda c, m: c.edit("seconds: 0", "seconds: 0.5"),
                      config=BASE + "budget: {seconds: 0}\n"), id="above-strict-bound"),
    pytest.param(Case(_validate(), "one of 'first', 'count' or 'estimate'",
                      r"did you mean '(count)'\?", lambda c, m: c.edit("cuont", m[1]),
                      config=BASE.replace("mode: count", "mode: cuont")), id="bad-value-close"),
    pytest.param(Case(_validate(), "one of 'first', 'count' or 'estimate'",
                      r"set (?P<key>fixed\.mode) to one of the values listed, e\.g\. "
                      r"(?P<value>first)", _set_value,
                      config=BASE.replace("mode: count", "mode: zzzz")), id="bad-value"),
    pytest.param(Case(_validate(), "found:    'n_queen'", r"did you mean '(n_queens)'\?",
                      lambda c, m: c.edit("n_queen\n", m[1] + "\n"),
                      config=BASE.replace("n_queens", "n_queen")), id="unknown-problem"),
    pytest.param(Case(_validate(), "a list of values", r"write (strategy: \[\"recursive\"\])",
                      lambda c, m: c.edit("strategy: recursive", m[1]),
                      config=BASE.replace("[recursive, iterative, bitmask]", "recursive")),
                 id="matrix-scalar"),
    pytest.param(Case(_validate(), "a non-empty list", r"or delete (matrix\.strategy)",
                      lambda c, m: c.edit("matrix:\n  strategy: []\n", ""),
                      config=BASE.replace("[recursive, iterative, bitmask]", "[]")),
                 id="matrix-empty"),
    pytest.param(Case(_validate(), "each parameter either fixed or swept",
                      r"delete (fixed\.n) or matrix\.n", lambda c, m: c.edit("n: 6, ", ""),
                      config=BASE + "  n: [5, 6]\n"), id="fixed-and-swept"),
    pytest.param(Case(_validate(), "a range A..B with A <= B", r"write (seed: 1\.\.5)",
                      lambda c, m: c.edit("seed: 5..1", m[1]),
                      config=BASE + "  seed: 5..1\n"), id="range-backwards"),
    pytest.param(Case(_validate(), "a mapping, e.g.", r"write (budget: \{nodes: [\d_]+\}) in the "
                      r"file", lambda c, m: c.edit("budget: [5000]", m[1]),
                      config=BASE + "budget: [5000]\n"), id="section-not-mapping"),
    pytest.param(Case(_validate("budget=5000"), "override 1 (budget=5000)",
                      r"or (budget='\{nodes: 5000\}') as an override",
                      lambda c, m: c.replace_arg("budget=5000", shlex.split(m[1])[0]),
                      config=BASE + "budget: {seconds: 60}\n"), id="override-section-not-mapping"),
    pytest.param(Case(_validate(), "a list of mappings",
                      r"put the mapping in a list: (include: \[.*\])",
                      lambda c, m: c.edit("include: {strategy: amb}", m[1]),
                      config=BASE + "include: {strategy: amb}\n"), id="include-not-list"),
    # ------------------------------------------------------------------ YAML
    pytest.param(Case(_validate(), "well-formed YAML", r"fix the syntax near that position",
                      lambda c, m: _drop_line(c, "oops: [1, 2"),
                      config=BASE + "oops: [1, 2\n"), id="bad-yaml"),
    pytest.param(Case(_validate(), "a tab in the indentation of line 5",
                      r"indent line (5) with spaces instead of the tab",
                      lambda c, m: c.edit("\tstrategy", "  strategy"),
                      config=BASE.replace("  strategy", "\tstrategy")), id="bad-yaml-tab"),
    # ------------------------------------------------------------------ overrides
    pytest.param(Case(_validate("budget.nodes=abc"), "a valid integer",
                      r"e\.g\. (\d+)", lambda c, m: c.replace_arg("budget.nodes=abc",
                                                                  f"budget.nodes={m[1]}"),
                      config=BASE + "budget: {nodes: 5000}\n"), id="override-bad-type"),
    pytest.param(Case(_validate("fixed.n=0"), "override 1 (fixed.n=0)",
                      r"set (?P<key>fixed\.n) to (?P<value>1) or more", _override_value),
                 id="override-below-range"),
    pytest.param(Case(_validate("+fixed.n=5"), "fixed.n is already there",
                      r"use (fixed\.n=5) to change it",
                      lambda c, m: c.replace_arg("+fixed.n=5", m[1])), id="override-add-existing"),
    pytest.param(Case(_validate("~fixed.zz"), "no key fixed.zz", r"or drop the override",
                      lambda c, m: c.argv.remove("~fixed.zz")), id="override-delete-missing"),
    pytest.param(Case(_validate("fixed.mode=cuont"), "override 1 (fixed.mode=cuont)",
                      r"did you mean '(count)'\?",
                      lambda c, m: c.replace_arg("fixed.mode=cuont", f"fixed.mode={m[1]}")),
                 id="override-bad-value"),
    pytest.param(Case(_validate("~fixed.board"), "the parameter 'board' in fixed or matrix",
                      r"drop the override (~fixed\.board)$", lambda c, m: c.argv.remove(m[1]),
                      config="name: kt\nproblem: knights_tour\nfixed: {board: 5}\n"),
                 id="override-deletes-a-parameter"),
    # ------------------------------------------------------------------ plug-ins
    pytest.param(Case(_validate(), "no module named 'fxrules_a'",
                      r"run btlab from the folder that holds (fxrules_a)\.py",
                      lambda c, m: (c.monkeypatch.chdir(c.root / "plugs"),
                                    c.replace_arg("c.yaml", str(c.config))),
                      config=_knights("fxrules_a"),
                      prepare=lambda c: _plugin(c, "fxrules_a", RULES)), id="plugin-not-found"),
    pytest.param(Case(_validate(), "'cornr' defined in module fxrules_b",
                      r"write (fxrules_b:corner)",
                      lambda c, m: c.edit("fxrules_b:cornr", m[1]),
                      config=_knights("fxrules_b").replace(":corner", ":cornr"),
                      prepare=lambda c: _plugin(c, "fxrules_b", RULES, ".")),
                 id="plugin-misspelt-name"),
    pytest.param(Case(_validate(), "'nothing_like_it' defined in module fxrules_c",
                      r"define nothing_like_it in (\S+fxrules_c\.py), or write the name",
                      lambda c, m: Path(m[1]).write_text(
                          RULES + "nothing_like_it = corner\n"),
                      config=_knights("fxrules_c").replace(":corner", ":nothing_like_it"),
                      prepare=lambda c: _plugin(c, "fxrules_c", RULES, ".")),
                 id="plugin-missing-name"),
    pytest.param(Case(_validate(), "ZeroDivisionError while importing it",
                      r"fix the error in (\S+fxrules_d\.py):(\d+)",
                      lambda c, m: _fix_line(Path(m[1]), int(m[2]), "SCALE = 1"),
                      config=_knights("fxrules_d"),
                      prepare=lambda c: _plugin(c, "fxrules_d", "SCALE = 1 / 0\n" + RULES, ".")),
                 id="plugin-raises-on-import"),
    pytest.param(Case(_validate(), "SyntaxError while importing it",
                      r"fix the error in (\S+fxrules_e\.py):(\d+)",
                      lambda c, m: _fix_line(Path(m[1]), int(m[2]),
                                             "def corner(board, square, candidates):"),
                      config=_knights("fxrules_e"),
                      prepare=lambda c: _plugin(c, "fxrules_e", RULES.replace(
                          "candidates):", "candidates)"), ".")),
                 id="plugin-syntax-error"),
    pytest.param(Case(_validate(), "it imports 'no_such_dependency_x', which is not installed",
                      r"or remove the import from (fxrules_f)",
                      lambda c, m: (c.root / f"{m[1]}.py").write_text(RULES),
                      config=_knights("fxrules_f"),
                      prepare=lambda c: _plugin(c, "fxrules_f", "import no_such_dependency_x\n"
                                                + RULES, ".")),
                 id="plugin-missing-dependency"),
    pytest.param(Case(_validate(), "a heuristic rule callable as rule(board, square, candidates)",
                      r"define it in (fxrules_g) as (def corner\(board, square, candidates\)):",
                      lambda c, m: (c.root / f"{m[1]}.py").write_text(
                          f"{m[2]}:\n    return sorted(candidates)\n"),
                      config=_knights("fxrules_g"),
                      prepare=lambda c: _plugin(c, "fxrules_g", "def corner(board):\n"
                                                "    return []\n", ".")),
                 id="plugin-wrong-signature"),
    # ------------------------------------------------------------------ results folders
    pytest.param(Case(_run(), "holds results of config 'fx' (n_queens), not of 'fx2'",
                      r"write elsewhere with --out (\S+), or start over", _follow_out,
                      prepare=_other_config), id="folder-of-another-config"),
    pytest.param(Case(_run(), "damaged part file",
                      r"move it out of the folder \((mkdir -p \S+ && mv \S+ \S+)\), then run "
                      r"the same `btlab run` command again", _shell, prepare=_damage),
                 id="damaged-part"),
    pytest.param(Case(["show", "r"], "damaged part file",
                      r"move it out of the folder \((mkdir -p \S+ && mv \S+ \S+)\)", _shell,
                      prepare=_damage, later="no btlab results here"), id="damaged-part-show"),
    pytest.param(Case(_run(), "r/notes.txt: not a part file",
                      r"move it out of the folder \((mkdir -p \S+ && mv \S+ \S+)\)", _shell,
                      prepare=_stray), id="stray-file"),
    pytest.param(Case(_run(), "written by a newer btlab (schema version 99)",
                      r"write this btlab's runs elsewhere, e.g. --out (\S+)", _follow_out,
                      prepare=_newer), id="newer-schema"),
    pytest.param(Case(_run(), "another btlab run (pid", r"wait for it to finish", _release_lock,
                      prepare=_hold_lock), id="locked-folder"),
    pytest.param(Case(_run("c.yaml"), "the output path is a file, not a folder",
                      r"give --out a folder, e\.g\. --out (\S+)", _follow_out),
                 id="out-is-a-file"),
    pytest.param(Case(_run("c.yaml/sub"), "c.yaml is a file, not a folder",
                      r"give --out a path outside it, e\.g\. --out (\S+)", _follow_out),
                 id="out-below-a-file"),
    pytest.param(Case(_run(), "r: not writable", r"e\.g\. --out (\S+)$", _tmp_out,
                      prepare=_unwritable), id="out-not-writable"),
    pytest.param(Case(_run("r/sub"), "is inside the results folder",
                      r"write elsewhere with --out, e\.g\. (\S+)", _follow_out,
                      prepare=_one_run), id="out-inside-results"),
    pytest.param(Case(["show", "rr"], "rr: no btlab results here",
                      r"did you mean (r)\?$",
                      lambda c, m: c.replace_arg("rr", m[1]), prepare=_one_run),
                 id="show-missing-folder"),
    pytest.param(Case(["show", "c.yaml"], "c.yaml: no btlab results here",
                      r"give the folder that config's run writes, (results/fx) \(`(btlab run "
                      r"c\.yaml)` writes it\)",
                      lambda c, m: (run_main("run", "c.yaml", "--backend", "serial", "--quiet"),
                                    c.replace_arg("c.yaml", m[1]))), id="show-a-config-file"),
    pytest.param(Case(_run("file://r"), "File URI cannot be relative",
                      r"after three slashes: (file:///\S+), or give", _follow_out),
                 id="relative-file-uri"),
    pytest.param(Case(["report", "r", "k", "-o", "both.html"],
                      "the results folders hold different problems",
                      r"one report per problem, e\.g\. btlab (report r -o r\.html);",
                      lambda c, m: c.argv.__setitem__(slice(None), shlex.split(m[1])),
                      prepare=lambda c: (_one_run(c), run_main(
                          "run", _write(c.root / "k.yaml", LIBRARY_SWEEP), "--backend",
                          "serial", "--quiet", "--out", "k"))), id="report-of-two-problems"),
    # ------------------------------------------------------------------ report output
    pytest.param(Case(["report", "r", "-o", "out"], "it is a directory, not a regular file",
                      r"name a file inside it, e\.g\. (\S+)$",
                      lambda c, m: c.replace_arg("out", m[1]),
                      prepare=lambda c: (_one_run(c), (c.root / "out").mkdir())),
                 id="report-to-a-folder"),
    pytest.param(Case(["report", "r", "-o", "r/rep.html"], "inside the results folder r",
                      r"give a path outside it, e\.g\. (\S+)$",
                      lambda c, m: c.replace_arg("r/rep.html", m[1]), prepare=_one_run),
                 id="report-inside-results"),
    pytest.param(Case(["report", "r", "-o", "c.yaml/rep.html"], "a folder on the way is a file",
                      r"give a path beside it, e\.g\. (\S+)$",
                      lambda c, m: c.replace_arg("c.yaml/rep.html", m[1]), prepare=_one_run),
                 id="report-below-a-file"),
]


def _write(path: Path, text: str) -> Path:
    path.write_text(text)
    return path


def _fix_line(path: Path, line: int, text: str) -> None:
    lines = path.read_text().splitlines()
    lines[line - 1] = text
    path.write_text("\n".join(lines) + "\n")


def _forget_plugins() -> None:
    for name in [n for n in sys.modules if n.startswith("fxrules_")]:
        del sys.modules[name]


@pytest.fixture
def scratch(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "path", list(sys.path))  # the plug-in loader adds the cwd
    yield tmp_path
    _forget_plugins()


def _fix_of(err: str) -> str:
    lines = [line for line in err.splitlines() if line.strip().startswith("fix:")]
    assert len(lines) == 1, err
    return lines[0].split("fix:", 1)[1].strip()


@pytest.mark.parametrize("case", CASES)
def test_the_fix_line_works_when_followed(case: Case, scratch, monkeypatch, capsys):
    ctx = Ctx(scratch, [a.replace("{c}", "c.yaml") for a in case.argv], monkeypatch)
    ctx.config.write_text(case.config)
    try:
        if case.prepare:
            case.prepare(ctx)
        capsys.readouterr()
        assert run_main(*ctx.argv) == 2
        err = capsys.readouterr().err
        assert case.error in err, err
        fix = _fix_of(err)
        assert "Traceback" not in err
        assert not re.search(r"<[a-z_ ]+>|\.\.\.|\bVALUE\b", fix), fix  # no placeholder
        match = re.search(case.fix, fix)
        assert match, (case.fix, err)
        case.apply(ctx, match)
        _forget_plugins()  # each btlab command is a new process: plug-ins import afresh
        code = run_main(*ctx.argv)
        out = capsys.readouterr()
        if case.later is None:
            assert code == 0, out.err
            assert "fix:" not in out.err
        else:
            assert code == 2 and case.later in out.err and case.error not in out.err, out.err
    finally:
        if "lock" in ctx.extra:
            ctx.extra["lock"].release()


def test_every_fix_line_kind_leaves_the_folder_readable_by_pandas(scratch, capsys):
    """A file moved aside as the fix says goes where readers of the parent folder do not
    look: ``pd.read_parquet`` of the folder above reads the sweep's rows only."""
    parent = scratch / "results"
    parent.mkdir()
    (scratch / "c.yaml").write_text(BASE)
    assert run_main("run", "c.yaml", "--backend", "serial", "--quiet", "--out",
                    "results/fx") == 0
    (parent / "fx" / "notes.txt").write_text("mine\n")
    capsys.readouterr()
    assert run_main("show", "results/fx") == 2
    fix = _fix_of(capsys.readouterr().err)
    command = re.search(r"\((mkdir -p \S+ && mv \S+ \S+)\)", fix)[1]
    assert shlex.split(command)[2] == "results/.fx.aside"
    subprocess.run(command, shell=True, cwd=scratch, check=True)
    assert len(pd.read_parquet(parent)) == 3
    assert (parent / ".fx.aside" / "notes.txt").read_text() == "mine\n"


def test_a_bad_progress_interval_names_a_value_that_works(scratch, monkeypatch, capsys):
    (scratch / "c.yaml").write_text(BASE)
    monkeypatch.setenv("BTLAB_PROGRESS_INTERVAL", "soon")
    argv = ["run", "c.yaml", "--backend", "serial", "--out", "r"]
    assert run_main(*argv) == 2
    fix = _fix_of(capsys.readouterr().err)
    name, value = re.search(r"e\.g\. (\w+)=(\d+)", fix).groups()
    monkeypatch.setenv(name, value)
    assert run_main(*argv) == 0
    assert len(pd.read_parquet(scratch / "r")) == 3


@pytest.mark.slow  # a Ray start in a subprocess; then the session's Ray
def test_an_unreachable_ray_address_is_left_out_as_the_fix_says(scratch, ray_session, capsys):
    (scratch / "c.yaml").write_text(BASE)
    argv = ["run", "c.yaml", "--out", "r", "--quiet"]
    env = {k: v for k, v in __import__("os").environ.items() if k != "RAY_ADDRESS"}
    done = subprocess.run([sys.executable, "-m", "btlab", *argv, "--address", "127.0.0.1:1"],
                          capture_output=True, text=True, cwd=scratch, env=env, timeout=300)
    assert done.returncode == 2, done.stderr
    assert "could not reach a Ray cluster at 127.0.0.1:1" in done.stderr
    assert "or leave it out for an embedded local Ray" in _fix_of(done.stderr)
    assert run_main(*argv) == 0  # left out: the local Ray (the session's, here)
    assert len(pd.read_parquet(scratch / "r")) == 3


@needs_token_auth
@pytest.mark.slow  # a real head node with token authentication, 6 drivers: 92 s on 2 busy cores
def test_a_refused_ray_token_is_fixed_by_copying_the_heads_token(tmp_path):
    """Each kind of token refusal (no token here, another token, RAY_AUTH_MODE=disabled)
    says what to copy or unset; done as it says, the same command runs."""
    config = tmp_path / "tiny.yaml"
    config.write_text(TINY)
    owner = cluster_user(tmp_path / "owner")
    (tmp_path / "owner" / ".ray").mkdir()
    head_token = tmp_path / "owner" / ".ray" / "auth_token"
    head_token.write_text(secrets.token_hex(32))
    kinds = {"none": {}, "other": {"RAY_AUTH_MODE": "token"},
             "disabled": {"RAY_AUTH_MODE": "disabled"}}
    with ray_cli_cluster() as cluster:
        cluster.start_node(owner if head_turns_token_auth_on()
                           else {**owner, "RAY_AUTH_MODE": "token"}, head=True)
        for kind, extra in kinds.items():
            home = tmp_path / kind
            env = cluster_user(home, **extra)
            if kind == "other":
                (home / ".ray").mkdir()
                (home / ".ray" / "auth_token").write_text(secrets.token_hex(32))
            argv = ("run", config, "--address", cluster.address, "--out", tmp_path / f"r-{kind}",
                    "--quiet")
            refused = cluster_btlab(*argv, env=env)
            assert refused.returncode == 2, refused.stderr[-3000:]
            fix = _fix_of(refused.stderr)
            assert fix.startswith("unset RAY_AUTH_MODE (btlab then sends this machine's token) "
                                  "and copy the head's" if kind == "disabled" else
                                  "copy the head's ~/.ray/auth_token to ~/.ray/auth_token "
                                  "here"), fix
            if fix.startswith("unset RAY_AUTH_MODE"):
                env.pop("RAY_AUTH_MODE")
            (home / ".ray").mkdir(exist_ok=True)
            (home / ".ray" / "auth_token").write_text(head_token.read_text())
            done = cluster_btlab(*argv, env=env)
            assert done.returncode == 0, (kind, done.stderr[-3000:])
            assert len(pd.read_parquet(tmp_path / f"r-{kind}")) == 4


# --------------------------------------------------------------------------- the library

@pytest.fixture(scope="module")
def knights_rows(tmp_path_factory):
    """50 trials of 5 x 5 knight's tours, plain and Warnsdorff, from every start."""
    import btlab

    folder = tmp_path_factory.mktemp("lib")
    (folder / "lib.yaml").write_text(LIBRARY_SWEEP)
    return btlab.run(folder / "lib.yaml", backend="serial", out=folder / "r")


def _keyword(fix: str) -> dict:
    """The keyword arguments a fix line gives: ``alpha=0.05 for ...``, ``a={...}, b={...}``."""
    import ast

    out = {}
    for m in re.finditer(r"\b(\w+)=", fix):
        rest = fix[m.end():]
        for end in range(len(rest), 0, -1):  # the longest Python literal that follows
            try:
                out[m[1]] = ast.literal_eval(rest[:end].strip().rstrip(","))
                break
            except (ValueError, SyntaxError):
                continue
    return out


LIBRARY = [
    pytest.param("survival", dict(by="heuristic", alpha=2), "alpha must be a number in (0, 1)",
                 id="survival-alpha"),
    pytest.param("solved_share", dict(by="heuristic", alpha=1.5),
                 "alpha must be a number in (0, 1)", id="solved-share-alpha"),
    pytest.param("quantiles", dict(by="heuristic", q=2), "q must be numbers in (0, 1)",
                 id="quantiles-levels"),
    pytest.param("survival", dict(by="heuristic", metric="heuristic"),
                 "metric 'heuristic' is not a cost", id="survival-metric"),
    pytest.param("logrank", dict(a={"heuristic": "warnsdorff"}, b={"rows": 5}),
                 "trial(s) are on both sides", id="logrank-overlap"),
]


@pytest.mark.parametrize("name, kwargs, error", LIBRARY)
def test_a_library_fix_line_works_when_followed(knights_rows, name, kwargs, error):
    from btlab import analysis

    function = getattr(analysis, name)
    with pytest.raises(ValueError) as caught:
        function(knights_rows, **kwargs)
    assert error in str(caught.value)
    given = _keyword(_fix_of(str(caught.value)))
    assert given and set(given) <= set(kwargs), given
    result = function(knights_rows, **{**kwargs, **given})
    if name == "logrank":  # b given the plain searches: two groups of 25 starts
        assert given["b"] == {"rows": 5, "heuristic": "none"}
        assert 0 <= result.p_value <= 1
    else:  # rows (curve points, levels, shares) of both heuristics
        assert set(result["heuristic"]) == {"none", "warnsdorff"}
