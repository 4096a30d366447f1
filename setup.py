"""Build hook: record the git commit the package is built from (the rest is in pyproject.toml).

``pip install .`` from a clone (and ``python -m build``) write
``btlab/_build_info.py`` into the build -- never into the source tree -- with
the clone's HEAD and whether tracked files had uncommitted changes; an sdist
carries the file, so a wheel built from the sdist has it too. At run time
:func:`btlab.store.provenance.code_state` reads it (see that module).
"""

from __future__ import annotations

import importlib.util
import shutil
from pathlib import Path

from setuptools import find_packages, setup
from setuptools.command.build_py import build_py
from setuptools.command.sdist import sdist

ROOT = Path(__file__).resolve().parent


def _provenance():
    """runner/store/provenance.py, loaded by path (standard library only; deps may be absent)."""
    spec = importlib.util.spec_from_file_location("_btlab_provenance",
                                                  ROOT / "runner" / "store" / "provenance.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


#: What a build folder may hold from an earlier build: the package, and the two top-level
#: packages of btlab 0.1 (``runner``, ``experiments``). A wheel takes every file under the
#: build folder, so a stale copy would install a second top-level name or a module since
#: removed; each build starts from none of them.
STALE_BUILD_ENTRIES = ("btlab", "runner", "experiments")


class BuildPy(build_py):
    def run(self):
        if not self.dry_run and not getattr(self, "editable_mode", False):
            for name in STALE_BUILD_ENTRIES:
                shutil.rmtree(Path(self.build_lib) / name, ignore_errors=True)
        super().run()
        if not self.dry_run and not getattr(self, "editable_mode", False):
            # an editable install runs the clone itself, which is asked at run time
            _provenance().write_build_info(Path(self.build_lib) / "btlab", ROOT)


class Sdist(sdist):
    def make_release_tree(self, base_dir, files):
        super().make_release_tree(base_dir, files)
        _provenance().write_build_info(Path(base_dir) / "runner", ROOT)


#: The one import name: the folder runner/ is the package ``btlab`` and experiments/ is
#: ``btlab.experiments`` (the repository keeps its two top-level folders; nothing else installs).
PACKAGE_DIR = {"btlab": "runner", "btlab.experiments": "experiments"}


def packages() -> list[str]:
    """``btlab``, ``btlab.experiments`` and every package below them, from the two folders."""
    found = ["btlab", "btlab.experiments"]
    for name, folder in PACKAGE_DIR.items():
        found += [f"{name}.{sub}" for sub in find_packages(str(ROOT / folder))
                  if not sub.startswith("experiments")]
    return sorted(set(found))


setup(packages=packages(), package_dir=PACKAGE_DIR,
      cmdclass={"build_py": BuildPy, "sdist": Sdist})
