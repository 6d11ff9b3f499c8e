"""Ctrl-C or SIGTERM while a node command is still importing (numpy, numba, rclpy, the
package: one to several seconds before ``main`` runs) stops it like a signal later in
the start-up: one line, exit 0, no traceback (``rnea_ros.commands.StartSignals``).

Before, SIGINT there ended in a ``KeyboardInterrupt`` traceback and SIGTERM killed the
process (exit -15). The signal is delivered provably during the imports, on any
schedule: a ``sitecustomize`` of this test's, on the child's ``PYTHONPATH``, holds the
first import of ``rclpy`` (numpy already imported, the package's node module
half-imported) and says so on stderr; the test signals only after reading that line.
The child runs exactly what ``ros2 run rnea_ros <node>`` runs (the ``lib/rnea_ros``
wrapper's command, read from setup.py) and pip's console script.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import textwrap
import types
from pathlib import Path

import pytest
from test_startup import read_until, signal_and_wait

from rnea_ros import commands

ROOT = Path(__file__).resolve().parents[2]
STOP_WITHIN = 30.0  # [s] from the signal to the exit, on any schedule
HOLD = textwrap.dedent("""\
    import sys, time

    class HoldImport:
        '''Holds the first import of rclpy (in the import machinery's own call).'''

        def find_spec(self, fullname, path=None, target=None):
            if fullname == "rclpy":
                sys.meta_path.remove(self)
                print(f"holding the import of rclpy; numpy imported: {'numpy' in sys.modules}",
                      file=sys.stderr, flush=True)
                deadline = time.monotonic() + 120.0
                while time.monotonic() < deadline:
                    time.sleep(0.01)
            return None

    sys.meta_path.insert(0, HoldImport())
    """)
NODES = [name for name, spec in commands.COMMANDS.items() if spec.node]


def wrapper_code(name: str) -> str:
    """The Python code the ``lib/rnea_ros`` wrapper of command ``name`` runs (setup.py's
    ``WRAPPER``: ``exec "$py" -c '<code>' "$@"``)."""
    text = (ROOT / "setup.py").read_text(encoding="utf-8")
    match = re.search(r"""exec "\$py" -c '([^']+)' "\$@\"""", text)
    assert match, "setup.py's WRAPPER no longer runs python -c '<code>'"
    return match.group(1).replace("{command}", name)


def held_process(command: list[str], hooks: Path) -> subprocess.Popen[str]:
    """``command`` with the import hold of :data:`HOLD` (stdout and stderr merged)."""
    hooks.mkdir(exist_ok=True)
    (hooks / "sitecustomize.py").write_text(HOLD, encoding="utf-8")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(hooks), str(ROOT)]))
    return subprocess.Popen([*command, "--ros-args", "-r", "__ns:=/entry_signals"], env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            bufsize=1)


def stop_while_importing(command: list[str], hooks: Path, signum: signal.Signals,
                         name: str) -> None:
    """Start ``command``, signal it while its import of rclpy is held, and check the
    exit: 0 within STOP_WITHIN, no traceback, one line naming the command and signal."""
    process = held_process(command, hooks)
    try:
        held = read_until(process, "holding the import of rclpy", 120.0)
        assert "numpy imported: True" in held[-1], held
        rc, elapsed, rest = signal_and_wait(process, signum, STOP_WITHIN)
    finally:
        process.kill()
        process.wait()
    print(f"{name} {signum.name}: exit code {rc} after {elapsed:.2f} s: {rest!r}")
    assert "Traceback" not in rest and "KeyboardInterrupt" not in rest, rest
    assert rc == 0, rest
    lines = [line for line in rest.splitlines() if line.strip()]
    assert lines == [f"{name}: {signum.name} while starting: stopped"], rest


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
@pytest.mark.parametrize("name", NODES)
def test_a_signal_while_the_ros2_run_wrapper_imports_stops_it_cleanly(
        name: str, signum: signal.Signals, tmp_path: Path) -> None:
    stop_while_importing([sys.executable, "-c", wrapper_code(name)], tmp_path / "hooks",
                         signum, name)


def test_a_signal_while_the_console_script_imports_stops_it_cleanly(tmp_path: Path) -> None:
    """pip's ``rnea-controller`` (the venv's bin/, which ``make env`` installs)."""
    script = Path(sys.executable).parent / "rnea-controller"
    assert script.is_file(), f"{script}: the console script of `pip install -e .`"
    stop_while_importing([sys.executable, str(script)], tmp_path / "hooks", signal.SIGINT,
                         "rnea-controller")


def test_a_signal_swallowed_by_the_import_still_stops_before_main(monkeypatch,
                                                                  capsys) -> None:
    """The first signal's exception lost inside the import (a ctypes callback, a
    library's ``except BaseException``): the noted signal stops the command when the
    import returns, before its ``main`` runs."""
    called: list[object] = []
    fake = types.SimpleNamespace(main=lambda *args: called.append(args) or 0)

    def import_swallowing_a_signal(module_name: str) -> types.SimpleNamespace:
        try:
            os.kill(os.getpid(), signal.SIGTERM)
            for _ in range(1000):  # the handler runs at one of these bytecodes
                pass
        except BaseException:  # what a careless library does
            pass
        return fake

    saved = {s: signal.getsignal(s) for s in (signal.SIGINT, signal.SIGTERM)}
    monkeypatch.setattr(commands.importlib, "import_module", import_swallowing_a_signal)
    signal.signal(signal.SIGTERM, lambda *args: None)  # (where run installs none: not fatal)
    try:
        assert commands.run("rnea-rate-limiter", ["--ros-args"]) == 0
    finally:
        for signum, handler in saved.items():
            signal.signal(signum, handler)
    assert called == []
    assert capsys.readouterr().err == "rnea-rate-limiter: SIGTERM while starting: stopped\n"


def test_a_node_command_restores_the_signal_handlers_it_found(monkeypatch) -> None:
    """Run in process (tests, tools calling ``run``), a node command that returns leaves
    SIGINT/SIGTERM as it found them."""
    saved = {s: signal.getsignal(s) for s in (signal.SIGINT, signal.SIGTERM)}
    fake = types.SimpleNamespace(main=lambda *args: 3)
    monkeypatch.setattr(commands.importlib, "import_module", lambda name: fake)
    assert commands.run("rnea-simulator", ["--ros-args"]) == 3
    assert {s: signal.getsignal(s) for s in saved} == saved


def test_a_signal_whose_exception_the_import_converts_still_stops_cleanly(monkeypatch,
                                                                          capsys) -> None:
    """numpy's C extension imports ``datetime``; interrupted there, it reports an
    ``ImportError`` ("PyCapsule_Import could not import module \"datetime\"") and numpy
    raises its own ImportError from it: seen at 30-40 ms after the start of
    ``rnea-controller``. The import failed because of the signal: one line, exit 0."""

    def import_converting_a_signal(module_name: str) -> None:
        try:
            os.kill(os.getpid(), signal.SIGINT)
            for _ in range(1000):  # the handler runs at one of these bytecodes
                pass
        except BaseException as exc:  # what numpy's C extension does
            raise ImportError('PyCapsule_Import could not import module "datetime"') from exc

    saved = {s: signal.getsignal(s) for s in (signal.SIGINT, signal.SIGTERM)}
    monkeypatch.setattr(commands.importlib, "import_module", import_converting_a_signal)
    signal.signal(signal.SIGINT, lambda *args: None)  # (where run installs none)
    try:
        assert commands.run("rnea-controller", ["--ros-args"]) == 0
    finally:
        for signum, handler in saved.items():
            signal.signal(signum, handler)
    assert capsys.readouterr().err == "rnea-controller: SIGINT while starting: stopped\n"
