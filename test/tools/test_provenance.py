"""The offline CLIs' shared hygiene: --version, defaults and help in --help, output
modes that honour the umask, stamps, temporary files removed on SIGTERM."""

from __future__ import annotations

import argparse
import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import rnea_ros
from rnea_ros.identification.cli import excite_parser
from rnea_ros.identification.cli import parser as identify_parser
from rnea_ros.planning.cli import _parser as plan_parser
from rnea_ros.tools.files import atomic_path, write_text
from rnea_ros.tools.provenance import digest, exit_on_signals, parser, stamp

PARSERS = {"rnea-plan": plan_parser, "rnea-identify": identify_parser,
           "rnea-identify excite": excite_parser}


@pytest.mark.parametrize("prog", sorted(PARSERS))
def test_version_prints_the_package_version(prog: str, capsys) -> None:
    with pytest.raises(SystemExit) as stop:
        PARSERS[prog]().parse_args(["--version"])
    assert stop.value.code == 0
    assert capsys.readouterr().out.strip() == f"{prog} {rnea_ros.__version__}"


@pytest.mark.parametrize("prog", sorted(PARSERS))
def test_every_option_has_help_and_defaults_are_shown(prog: str) -> None:
    p = PARSERS[prog]()
    for action in p._actions:
        assert action.help, f"{prog}: {action.option_strings or action.dest} has no help"
    text = p.format_help()
    for action in p._actions:
        if action.option_strings and action.default not in (None, False, [],
                                                              argparse.SUPPRESS):
            default = action.default
            shown = " ".join(map(str, default)) if isinstance(default, list) else default
            assert f"(default: {shown})" in " ".join(text.split()), \
                (prog, action.option_strings)


def test_atomic_outputs_honour_the_umask(tmp_path: Path) -> None:
    """mkstemp creates 0600 files; an output gets what open() would give it."""
    old = os.umask(0o022)
    try:
        write_text(tmp_path / "a.txt", "x")
        os.umask(0o002)
        with atomic_path(tmp_path / "b.png") as temporary:
            temporary.write_bytes(b"png")
    finally:
        os.umask(old)
    assert (tmp_path / "a.txt").stat().st_mode & 0o777 == 0o644
    assert (tmp_path / "b.png").stat().st_mode & 0o777 == 0o664


def test_stamp_names_version_command_and_input_digests(tmp_path: Path) -> None:
    f = tmp_path / "robot.urdf"
    f.write_text("<robot/>")
    bag = tmp_path / "bag"
    bag.mkdir()
    (bag / "metadata.yaml").write_text("a")
    s = stamp("rnea-x", ["--urdf", str(f), "--out", "my dir"], [f, None, bag])
    assert s["version"] == rnea_ros.__version__
    assert s["command"] == f"rnea-x --urdf {f} --out 'my dir'"
    assert s["inputs"][str(f)] == digest(f) and digest(f).startswith("sha256:")
    before = digest(bag)
    (bag / "metadata.yaml").write_text("b")
    assert digest(bag) != before
    assert digest(tmp_path / "none") == "missing"


def test_sigterm_removes_the_temporary_file(tmp_path: Path) -> None:
    """A CLI killed by SIGTERM while writing leaves no '.name.*.tmp' file behind."""
    script = textwrap.dedent(f"""
        import sys, time
        from pathlib import Path
        from rnea_ros.tools.files import atomic_path
        from rnea_ros.tools.provenance import exit_on_signals
        exit_on_signals()
        with atomic_path(Path({str(tmp_path)!r}) / "validation.png") as t:
            t.write_bytes(b"half")
            print("writing", flush=True)
            time.sleep(60)
    """)
    env = {**os.environ, "PYTHONPATH": str(Path(rnea_ros.__file__).parents[1])}
    proc = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, env=env,
                            text=True)
    assert proc.stdout is not None and proc.stdout.readline().strip() == "writing"
    proc.send_signal(signal.SIGTERM)
    assert proc.wait(timeout=30) == 128 + signal.SIGTERM
    assert sorted(p.name for p in tmp_path.iterdir()) == []


def test_exit_on_signals_outside_the_main_thread_is_a_no_op() -> None:
    import threading

    errors: list[BaseException] = []
    thread = threading.Thread(target=lambda: exit_on_signals())
    thread.start()
    thread.join()
    assert not errors


def test_parser_help_keeps_descriptions_and_skips_empty_defaults() -> None:
    p = parser("rnea-x", "line one\n  kept")
    p.add_argument("--a", type=int, default=3, help="an a")
    p.add_argument("--b", help="a b")
    text = p.format_help()
    assert "an a (default: 3)" in text and "a b (default" not in text
    assert "line one\n  kept" in text
