"""CI (``.ci/run``) runs the README's test command verbatim, after installing Chromium."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def readme_test_command() -> str:
    blocks = re.findall(r"```bash\n(.*?)```", (ROOT / "README.md").read_text(), re.S)
    commands = [line for block in blocks for line in block.splitlines()
                if ".venv/bin/python -m pytest" in line]
    assert len(commands) == 1, commands
    return commands[0]


def ci_commands() -> list[str]:
    lines = (ROOT / ".ci" / "run").read_text().splitlines()
    return [x for x in lines if x.strip() and not x.startswith("#")]


def test_ci_runs_the_readme_test_command_last():
    assert ci_commands()[-1] == readme_test_command()


def test_ci_installs_debian_chromium_when_missing_before_the_tests():
    commands = ci_commands()
    install = ("command -v chromium >/dev/null || "
               "(apt-get update -qq && apt-get install -y -qq chromium)")
    assert install in commands
    assert commands.index(install) < commands.index(readme_test_command())
    readme = (ROOT / "README.md").read_text()
    assert "`.ci/run`" in readme and "chromium" in readme
