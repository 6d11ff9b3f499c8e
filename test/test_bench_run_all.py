"""``make bench`` (bench/run_all.py) runs every script even after one fails, prints
which passed and which failed, and exits non-zero if any failed. Before, make stopped
at the first failing script and the rest never ran."""

from __future__ import annotations

import sys
from pathlib import Path
from types import ModuleType

import pytest
from bench_scripts import BENCH, load_bench


def _run_all() -> ModuleType:
    return load_bench("run_all.py")


def scripts(folder: Path) -> tuple[Path, Path, Path]:
    """A failing script (exit 3), a passing one that records its arguments, and the
    file it records them in."""
    record = folder / "ran.txt"
    bad = folder / "bad.py"
    bad.write_text("import sys\nprint('bad: broken')\nsys.exit(3)\n")
    good = folder / "good.py"
    good.write_text(f"import sys\nopen({str(record)!r}, 'a').write(' '.join(sys.argv[1:]) "
                    "+ '\\n')\nprint('good: fine')\n")
    return bad, good, record


def test_a_failing_script_does_not_stop_the_rest_and_the_summary_names_it(
        tmp_path: Path, capfd: pytest.CaptureFixture[str]) -> None:
    bad, good, record = scripts(tmp_path)
    code = _run_all().main([str(bad), f"{good} --rounds 2", str(good)])
    out = capfd.readouterr().out
    print(out)
    assert code == 1
    assert record.read_text().splitlines() == ["--rounds 2", ""]  # both ran, after bad
    assert "bad: broken" in out and "good: fine" in out  # their output streamed
    summary = out[out.index("make bench:"):].splitlines()
    assert summary[0] == f"make bench: 2 of 3 scripts passed; failed: {bad} (exit 3)"
    assert summary[1].split()[:2] == ["FAILED", str(bad)] and summary[1].endswith("exit 3")
    assert [line.split()[0] for line in summary[2:]] == ["ok", "ok"]


def test_every_script_passing_exits_zero(tmp_path: Path,
                                         capfd: pytest.CaptureFixture[str]) -> None:
    _, good, record = scripts(tmp_path)
    assert _run_all().main([str(good), str(good)]) == 0
    assert "make bench: 2 of 2 scripts passed\n" in capfd.readouterr().out
    assert len(record.read_text().splitlines()) == 2


def test_a_script_killed_by_a_signal_is_a_failure(tmp_path: Path,
                                                  capfd: pytest.CaptureFixture[str]) -> None:
    killed = tmp_path / "killed.py"
    killed.write_text("import os, signal\nos.kill(os.getpid(), signal.SIGKILL)\n")
    assert _run_all().main([str(killed)]) == 1
    assert "failed: " + str(killed) + " (killed by SIGKILL)" in capfd.readouterr().out


def test_the_default_list_names_scripts_of_the_bench_folder() -> None:
    run_all = _run_all()
    for command in run_all.BENCHES:
        interpreter, script, *_ = run_all.script_command(command)
        assert interpreter == sys.executable
        assert Path(script).parent == BENCH and Path(script).is_file(), command


def test_make_bench_runs_the_list_through_run_all() -> None:
    """The Makefile's bench recipe is run_all.py (the one list of scripts is BENCHES)."""
    makefile = (BENCH.parent / "Makefile").read_text()
    recipe = makefile.split("\nbench:", 1)[1].split("\n\n")[0].splitlines()[1:]
    assert [line.strip() for line in recipe] == ["$(BIN)/python bench/run_all.py"]
