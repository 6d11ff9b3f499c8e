"""A pip-installed wheel in a fresh venv (issue 39 §4): every command's ``--help`` and
``--version``, a launch file run with ``python`` (no ``ros2`` after a pip install).

    python bench/check_pip_install.py [--extras tools,planning] [--keep]

Builds the wheel of this source tree (``pip wheel --no-deps``), makes a venv in a
temporary folder (never the project's: a pip of another prefix once uninstalled the
editable install), installs the wheel with its dependencies (and ``--extras``), then runs,
from outside the source tree:

* ``<cmd> --version`` for every command of ``rnea_ros/commands.py``: exit 0, one line
  ``<cmd> <version>``;
* ``<cmd> --help``: exit 0 with the help, or -- its extra not installed -- exit 1 with one
  line naming the extra (``pip install 'rnea_ros[tools]'``), never a traceback;
* ``python <venv>/share/rnea_ros/launch/sim.launch.py robot:=arm7``: without
  ``launch``/``launch_ros`` (not on PyPI), exit 1 with one line saying what to install.

Prints a table; exit status 1 when a check failed. Minutes (the install), so not part of
``make test``; ``test/test_install_wheel.py`` checks the wheel's contents and the answers
in the suite.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from rnea_ros import __version__  # noqa: E402
from rnea_ros.commands import COMMANDS  # noqa: E402


def sh(args: list[str], cwd: Path, timeout: float = 900) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    return subprocess.run(args, capture_output=True, text=True, timeout=timeout, cwd=cwd,
                          env=env)


def verdict(out: subprocess.CompletedProcess[str], flag: str, name: str) -> tuple[bool, str]:
    """Whether ``name flag`` behaved, and a short description."""
    text = (out.stdout + out.stderr).strip()
    lines = text.splitlines()
    if "Traceback" in text:
        return False, "traceback"
    if flag == "--version":
        return out.returncode == 0 and text == f"{name} {__version__}", text[:60]
    if out.returncode == 0:
        return bool(lines) and lines[0].startswith("usage:"), f"help, {len(lines)} lines"
    extra = f"pip install 'rnea_ros[{COMMANDS[name].extra}]'"
    return (out.returncode == 1 and len(lines) == 1 and extra in text,
            f"one line: {text[:90]}")


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--extras", default="", help="extras to install with the wheel")
    p.add_argument("--keep", action="store_true", help="keep the temporary folder")
    a = p.parse_args(argv)
    work = Path(tempfile.mkdtemp(prefix="rnea_pip_check_"))
    failed = 0
    try:
        t0 = time.monotonic()
        sh([sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(work),
            str(ROOT)], work).check_returncode()
        (wheel,) = work.glob("rnea_ros-*.whl")
        venv = work / "venv"
        sh([sys.executable, "-m", "venv", str(venv)], work).check_returncode()
        target = f"{wheel}[{a.extras}]" if a.extras else str(wheel)
        install = sh([str(venv / "bin" / "python"), "-m", "pip", "install", "-q", target],
                     work)
        if install.returncode:
            print(install.stderr[-2000:])
            return 1
        print(f"wheel {wheel.name}, venv {venv}, installed in {time.monotonic() - t0:.0f} s"
              f"{' with ' + a.extras if a.extras else ''}")
        print(f"{'command':<20} {'flag':<10} {'rc':>3}  result")
        for name in sorted(COMMANDS):
            for flag in ("--version", "--help"):
                out = sh([str(venv / "bin" / name), flag], work, timeout=300)
                ok, what = verdict(out, flag, name)
                failed += not ok
                print(f"{name:<20} {flag:<10} {out.returncode:>3}  {'ok' if ok else 'FAIL'}: "
                      f"{what}")
        launch_file = venv / "share" / "rnea_ros" / "launch" / "sim.launch.py"
        out = sh([str(venv / "bin" / "python"), str(launch_file), "robot:=arm7"], work)
        text = (out.stdout + out.stderr).strip()
        refused = out.returncode == 1 and text.count("\n") == 0 and "Traceback" not in text
        ran = out.returncode == 0
        failed += not (refused or ran)
        print(f"{'sim.launch.py':<20} {'':<10} {out.returncode:>3}  "
              f"{'ok' if refused or ran else 'FAIL'}: {text[:160]}")
    finally:
        if a.keep:
            print(f"kept {work}")
        else:
            shutil.rmtree(work, ignore_errors=True)
    print(f"{failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
