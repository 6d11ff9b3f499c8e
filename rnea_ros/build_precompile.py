"""``colcon build`` compiles the nodes' kernels (issue 39, "cold start"): setup.py's
``install`` command runs ``rnea-precompile`` on the package it has just installed.

Read by setup.py as text (like ``commands.py``: standard library only, nothing of the
package imported at build time). colcon builds an ``ament_python`` package with
``setup.py ... install --record FILE --single-version-externally-managed`` into
``<ws>/install/rnea_ros`` (no ``--root``); its ``build_py``/``install_lib`` copies keep
the sources' modification times, and numba's cache index is keyed on a module's path,
modification time and size, so kernels compiled against the installed files stay valid
until the next build changes them. After that install, :func:`run_after_install` starts
``python3 -m rnea_ros.nodes.precompile`` (every shipped robot, every mode) with the
installed package first on ``sys.path``, the interpreter the ``ros2 run`` wrappers use
(:func:`interpreter`); numba writes next to the installed modules
(``<prefix>/lib/pythonX.Y/site-packages/rnea_ros/*/__pycache__``), where the nodes look.

Never for a wheel or a staged install (``--root``: pip, ``bdist_wheel``, distribution
packaging -- the paths would not be the final ones), nor for ``pip install -e`` /
``colcon build --symlink-install`` (``develop``: ``make env`` runs precompile itself),
nor when ``RNEA_ROS_BUILD_PRECOMPILE=0``. A failed precompile is one warning line: the
build still succeeds (the nodes then compile on their first start).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

SWITCH = "RNEA_ROS_BUILD_PRECOMPILE"  # "0": no compile during the build


def decision(root: str | None, externally_managed: bool, record: str | None,
             environ: Mapping[str, str]) -> tuple[bool, str]:
    """Whether this ``install`` should precompile, and why (one line for the build log).

    ``root``, ``externally_managed`` (``--single-version-externally-managed``) and
    ``record`` are the ``install`` command's options: colcon's layout is no root, both
    of the others set."""
    if environ.get(SWITCH, "").strip() == "0":
        return False, f"{SWITCH}=0"
    if root:
        return False, f"staged install (--root {root}: a wheel or a package build)"
    if not (externally_managed and record):
        return False, "not a colcon-style install (--single-version-externally-managed " \
                      "--record)"
    return True, "colcon-style install into a prefix"


def interpreter(prefix: str, environ: Mapping[str, str]) -> str:
    """The Python the installed ``lib/rnea_ros`` wrappers run (setup.py's ``WRAPPER``):
    ``<prefix>/bin/python3`` when executable, else ``python3`` on the PATH; the build's
    own interpreter when neither exists."""
    own = Path(prefix) / "bin" / "python3"
    if os.access(own, os.X_OK):
        return str(own)
    return shutil.which("python3", path=environ.get("PATH")) or sys.executable


def runtime_paths(lib: str, prefix: str, environ: Mapping[str, str]) -> dict[str, str]:
    """``PYTHONPATH`` and ``AMENT_PREFIX_PATH`` as ``source install/setup.bash`` sets
    them, this package's install first: the nodes find their URDFs and parameter files
    (``<prefix>/share/rnea_ros``) through the ament index, which colcon's build of the
    package itself does not list yet."""
    def first(value: str, name: str) -> str:
        return os.pathsep.join([value, *filter(None, [environ.get(name)])])
    return {"PYTHONPATH": first(lib, "PYTHONPATH"),
            "AMENT_PREFIX_PATH": first(prefix, "AMENT_PREFIX_PATH")}


def run_after_install(command: Any, environ: Mapping[str, str] | None = None) -> bool:
    """After ``command`` (setuptools' ``install``) ran: precompile into what it installed
    when :func:`decision` says so. Returns whether a precompile succeeded; never raises."""
    env = dict(os.environ if environ is None else environ)
    go, why = decision(command.root, bool(command.single_version_externally_managed),
                       command.record, env)
    if not go:
        print(f"rnea_ros: no build-time precompile: {why}", flush=True)
        return False
    lib = str(Path(command.install_lib).resolve())
    python = interpreter(command.install_base, env)
    env.update(runtime_paths(lib, str(Path(command.install_base).resolve()), env))
    print(f"rnea_ros: compiling the nodes' kernels into the install with {python} "
          f"(rnea-precompile; {SWITCH}=0 skips it)", flush=True)
    started = time.monotonic()
    try:  # cwd = the install: `python -m` puts it first, never the source tree
        done = subprocess.run([python, "-m", "rnea_ros.nodes.precompile"], cwd=lib,
                              env=env, check=False)
        ok = done.returncode == 0
        outcome = f"exit code {done.returncode}"
    except OSError as exc:
        ok, outcome = False, str(exc)
    took = time.monotonic() - started
    if ok:
        print(f"rnea_ros: build-time precompile done in {took:.0f} s", flush=True)
    else:
        print(f"rnea_ros: WARNING: build-time precompile failed ({outcome}, {took:.0f} s);"
              " the nodes compile on their first start instead (`ros2 run rnea_ros "
              "precompile` after the build does it ahead)", flush=True)
    return ok
