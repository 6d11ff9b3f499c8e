"""``make bench``: every benchmark script, each run to its end whatever the others did,
then a summary of which passed and which failed; exit 1 if any failed (130 on Ctrl-C).

Before, ``make bench`` ran the scripts as recipe lines, and the first one that failed
stopped make: the rest never ran. Each script runs with this interpreter, its output
streamed as it comes, one after the other (the numbers of one are not disturbed by
another).

    python bench/run_all.py                         # make bench: every script in BENCHES
    python bench/run_all.py bench_core.py "bench_node.py --rounds 3 --duration 2"
"""

from __future__ import annotations

import argparse
import shlex
import signal
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import NamedTuple

HERE = Path(__file__).resolve().parent
# Each: a script of this folder and its arguments (one command line, shlex syntax).
BENCHES = (
    "bench_node.py --rounds 15 --duration 4",
    "bench_core.py",
    "bench_loops.py",
    "bench_floating.py",
    "bench_bag.py",
    "bench_derivatives.py",
    "bench_plan.py",
    "bench_identify.py",
    "bench_parallel.py",
    "bench_time_scaling.py --passes 4",
    "bench_fleet.py",
    "bench_sim.py",
)


class Result(NamedTuple):
    """One script's run: its command line, exit status (negative: killed by that
    signal), wall seconds."""

    command: str
    status: int
    seconds: float

    @property
    def passed(self) -> bool:
        return self.status == 0

    def why(self) -> str:
        """``exit 3`` or ``killed by SIGSEGV``."""
        if self.status < 0:
            try:
                return f"killed by {signal.Signals(-self.status).name}"
            except ValueError:
                return f"killed by signal {-self.status}"
        return f"exit {self.status}"


def script_command(command: str) -> list[str]:
    """The process to start for ``command`` (``script.py args...``): this interpreter
    on the script, a relative path taken in this folder."""
    words = shlex.split(command)
    if not words:
        raise ValueError("an empty benchmark command")
    script = Path(words[0])
    if not script.is_absolute():
        script = HERE / script
    return [sys.executable, str(script), *words[1:]]


def run_one(command: str) -> Result:
    """Run ``command`` to its end, its output on ours."""
    print(f"== {command}", flush=True)
    started = time.monotonic()
    status = subprocess.run(script_command(command), check=False).returncode
    return Result(command, status, time.monotonic() - started)


def summary(results: Sequence[Result], planned: int) -> str:
    """Which scripts passed and which failed, one line each, under a headline."""
    failed = [r for r in results if not r.passed]
    head = f"make bench: {len(results) - len(failed)} of {planned} scripts passed"
    if failed:
        head += "; failed: " + ", ".join(f"{r.command.split()[0]} ({r.why()})" for r in failed)
    if len(results) < planned:
        head += f"; {planned - len(results)} not run (interrupted)"
    width = max((len(r.command) for r in results), default=0)
    lines = [head] + [f"  {'ok    ' if r.passed else 'FAILED'}  {r.command:{width}s}  "
                      f"{r.seconds:7.1f} s{'' if r.passed else '  ' + r.why()}"
                      for r in results]
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("commands", nargs="*", default=list(BENCHES),
                        help="script command lines (default: every benchmark, BENCHES)")
    commands: list[str] = parser.parse_args(argv).commands
    results: list[Result] = []
    code = 0
    try:
        for command in commands:
            results.append(run_one(command))
    except KeyboardInterrupt:
        code = 130
    print(summary(results, len(commands)), flush=True)
    if code:
        return code
    return 0 if all(r.passed for r in results) else 1


if __name__ == "__main__":
    raise SystemExit(main())
