"""The package's commands, in one table: their names on the PATH (pip), their names for
``ros2 run rnea_ros NAME`` (colcon and pip alike), the function each runs and the extra
that installs what it needs.

``setup.py`` reads :data:`COMMANDS` (without importing the package) to declare the
console scripts and to write the ``lib/rnea_ros`` wrappers ``ros2`` runs. Each command
enters through :func:`run`, which imports its module only then: a missing optional
dependency is one line naming the extra to install, and exit 1, never a traceback.
This module imports nothing beyond the standard library.
"""

from __future__ import annotations

import importlib
import sys
from typing import NamedTuple


class Command(NamedTuple):
    """``target`` (``module:function``), ``extra`` (``pip install 'rnea_ros[extra]'``),
    ``ros_name`` (``ros2 run rnea_ros ros_name``)."""

    target: str
    extra: str
    ros_name: str


COMMANDS: dict[str, Command] = {
    "rnea-controller": Command("rnea_ros.nodes.controller:main", "ros", "controller"),
    "rnea-simulator": Command("rnea_ros.nodes.simulator:main", "ros,oracle", "simulator"),
    "rnea-rate-limiter": Command("rnea_ros.nodes.rate_limiter:main", "ros", "rate_limiter"),
    "rnea-demo": Command("rnea_ros.demo:main", "all", "demo"),
    "rnea-precompile": Command("rnea_ros.nodes.precompile:main", "ros", "precompile"),
    "rnea-bag": Command("rnea_ros.tools.bag.cli:main", "tools", "rnea_bag"),
    "rnea-fleet": Command("rnea_ros.tools.fleet.cli:main", "fleet", "rnea_fleet"),
    "rnea-identify": Command("rnea_ros.identification.cli:main", "identification",
                             "rnea_identify"),
    "rnea-plan": Command("rnea_ros.planning.cli:main", "planning", "rnea_plan"),
    "rnea-config": Command("rnea_ros.control.starting_config:main", "", "rnea_config"),
    "rnea-sample": Command("rnea_ros.tools.sample:main", "tools", "rnea_sample"),
}
PACKAGE = "rnea_ros"


def missing_dependency(name: str, exc: ModuleNotFoundError) -> str | None:
    """The one-line hint for ``exc`` raised while starting command ``name``, or None when
    the missing module is this package's own (a broken install: let it raise)."""
    module = (exc.name or "").split(".")[0]
    if not module or module == PACKAGE:
        return None
    extra = COMMANDS[name].extra
    install = f"pip install '{PACKAGE}[{extra}]'" if extra else f"pip install {module}"
    return (f"{name}: error: the Python module '{module}' is not installed; {install} "
            "(or, under ROS, rosdep install --from-paths <src> for package.xml's keys)")


def run(name: str, argv: list[str] | None = None) -> int:
    """Run command ``name``: its ``main(argv)``'s exit code, or 1 with one line when an
    optional dependency is missing."""
    module_name, function = COMMANDS[name].target.split(":")
    try:
        module = importlib.import_module(module_name)
    except ModuleNotFoundError as exc:
        hint = missing_dependency(name, exc)
        if hint is None:
            raise
        print(hint, file=sys.stderr)
        return 1
    main = getattr(module, function)
    code = main() if argv is None else main(argv)
    return int(code or 0)


def controller() -> int:
    return run("rnea-controller")


def simulator() -> int:
    return run("rnea-simulator")


def rate_limiter() -> int:
    return run("rnea-rate-limiter")


def demo() -> int:
    return run("rnea-demo")


def precompile() -> int:
    return run("rnea-precompile")


def rnea_bag() -> int:
    return run("rnea-bag")


def rnea_fleet() -> int:
    return run("rnea-fleet")


def rnea_identify() -> int:
    return run("rnea-identify")


def rnea_plan() -> int:
    return run("rnea-plan")


def rnea_config() -> int:
    return run("rnea-config")


def rnea_sample() -> int:
    return run("rnea-sample")
