"""A node's first start on a fresh install: numba's cache cold.

Real processes, each with a new empty ``NUMBA_CACHE_DIR`` (a fresh install, whatever
this checkout's own cache holds): a cold start says in the log that it compiles and
where the kernels go; SIGINT or SIGTERM during that warm-up ends it at once, like a
normal shutdown; ``rnea-precompile`` fills the cache so that the nodes' start compiles
nothing.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from rnea_ros.nodes.precompile import main as precompile_main
from rnea_ros.samples import robot_files

ROOT = Path(__file__).resolve().parents[2]


def node_process(node: str, robot: str, cache: Path, *params: str) -> subprocess.Popen[str]:
    """``ros2 run rnea_ros <node>`` with the robot's parameter file and numba's cache in
    ``cache``."""
    files = robot_files(robot)
    config = files.controller if node == "controller" else files.simulator
    command = [sys.executable, "-m", f"rnea_ros.nodes.{node}", "--ros-args",
               "--params-file", str(config), "-p", f"urdf_path:={files.urdf}",
               "-r", "__ns:=/startup_test"]
    for p in params:
        command += ["-p", p]
    env = dict(os.environ, NUMBA_CACHE_DIR=str(cache), PYTHONPATH=str(ROOT))
    return subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            text=True, bufsize=1)


def read_until(process: subprocess.Popen[str], text: str, timeout: float) -> list[str]:
    """The process's output lines up to the first containing ``text`` (AssertionError
    when it ends or ``timeout`` passes first)."""
    assert process.stdout is not None
    lines: list[str] = []
    deadline = time.monotonic() + timeout
    os.set_blocking(process.stdout.fileno(), False)
    while time.monotonic() < deadline:
        line = process.stdout.readline()
        if line:
            lines.append(line)
            if text in line:
                return lines
        elif process.poll() is not None:
            break
        else:
            time.sleep(0.02)
    process.kill()
    raise AssertionError(f"no '{text}' within {timeout} s:\n{''.join(lines)}")


def wait_for_exit(process: subprocess.Popen[str], since: float, timeout: float = 30.0
                  ) -> tuple[int | None, float, str]:
    """Wait up to ``timeout`` s for ``process`` to end (then kill it): its exit code (None:
    still running), the seconds from ``since`` to its end, the rest of its output."""
    try:
        rc: int | None = process.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        rc = None
    finally:
        process.kill()
        process.wait()
    elapsed = time.monotonic() - since
    assert process.stdout is not None
    return rc, elapsed, process.stdout.read()


def signal_and_wait(process: subprocess.Popen[str], signum: int, timeout: float = 30.0
                    ) -> tuple[int | None, float, str]:
    """Send ``signum`` to ``process``, then :func:`wait_for_exit` from that moment."""
    sent = time.monotonic()
    process.send_signal(signum)
    return wait_for_exit(process, sent, timeout)


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
def test_a_signal_during_the_cold_warm_up_stops_the_node_at_once(
        signum: signal.Signals, tmp_path: Path) -> None:
    """The five-bar controller compiles for seconds on a cold cache; it says so (robot,
    cache directory) before, and a signal then ends it within seconds, exit code 0, no
    traceback (before: the signal only set a flag read after the warm-up, ~15 s)."""
    process = node_process("controller", "five_bar", tmp_path)
    lines = read_until(process, "compiling kernels", 60.0)
    assert "compiling kernels for five_bar, first start only" in lines[-1]
    assert f"numba caches them in {tmp_path} (NUMBA_CACHE_DIR)" in lines[-1]
    time.sleep(0.3)  # well inside the compilation (seconds)
    rc, elapsed, rest = signal_and_wait(process, signum, 10.0)
    assert rc == 0, rest
    assert elapsed < 10.0
    assert "Traceback" not in rest
    assert f"{signum.name} while starting: stopped" in rest
    assert "commanding" not in rest  # it stopped before finishing its start


# Runs a node as ``python -m rnea_ros.nodes.<node>`` does, with numba's object-cache hook
# (Python, called by LLVM through llvmlite's ctypes callback once a kernel's machine code
# exists) sending the process ``SIGNUM`` once, when the node's handlers are installed:
# Python then runs the handler inside that foreign frame, where the race put it.
SIGNAL_IN_CALLBACK = textwrap.dedent("""
    import os, runpy, signal, sys
    from numba.core import codegen
    original = codegen.JITCodeLibrary._object_compiled_hook
    sent = []
    def hook(cls, ll_module, buf):
        if not sent and signal.getsignal(signal.SIGINT) is not signal.default_int_handler:
            sent.append(True)
            print("sending the signal in the object-cache callback", flush=True)
            os.kill(os.getpid(), SIGNUM)
        original(ll_module, buf)
    codegen.JITCodeLibrary._object_compiled_hook = classmethod(hook)
    runpy.run_module("rnea_ros.nodes.controller", run_name="__main__", alter_sys=True)
""")


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
def test_a_signal_inside_llvms_object_cache_callback_stops_the_node(
        signum: signal.Signals, tmp_path: Path) -> None:
    """A signal that Python handles inside llvmlite's ctypes callback (what a Ctrl-C
    during a cold start often hits: issue 22 §9) stops the start-up all the same, within
    seconds, exit code 0, nothing printed about the callback (before: the handler's
    exception was "ignored on calling ctypes callback function", the start-up went on)."""
    files = robot_files("five_bar")
    script = SIGNAL_IN_CALLBACK.replace("SIGNUM", str(int(signum)))
    command = [sys.executable, "-c", script, "--ros-args", "--params-file",
               str(files.controller), "-p", f"urdf_path:={files.urdf}",
               "-r", "__ns:=/startup_test"]
    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path), PYTHONPATH=str(ROOT))
    process = subprocess.Popen(command, env=env, stdout=subprocess.PIPE,
                               stderr=subprocess.STDOUT, text=True, bufsize=1)
    read_until(process, "sending the signal in the object-cache callback", 120.0)
    rc, elapsed, rest = wait_for_exit(process, time.monotonic())
    print(f"{signum.name}: stopped {elapsed:.2f} s after the signal")
    assert "ctypes callback" not in rest and "Traceback" not in rest, rest
    assert rc == 0, f"exit code {rc} (None: still running 30 s after the signal):\n{rest}"
    assert f"{signum.name} while starting: stopped" in rest, rest
    assert "commanding" not in rest, rest
    assert elapsed < 10.0



def test_precompile_fills_the_cache_the_nodes_start_from(tmp_path: Path) -> None:
    """``rnea-precompile --robot arm7 five_bar`` into an empty cache; then, in a new
    process, building every node it covers (controller in each mode, simulator, arm7 on
    a moving base with its IMU) compiles nothing; and a real controller process starts
    without the cold-start line."""
    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path), PYTHONPATH=str(ROOT))
    done = subprocess.run([sys.executable, "-m", "rnea_ros.nodes.precompile", "--robot", "arm7",
                           "five_bar"], env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout + done.stderr
    assert f"numba's cache: {tmp_path} (NUMBA_CACHE_DIR)" in done.stdout
    assert "controller inverse_dynamics + IMU" in done.stdout
    assert "controller gravity + contacts" in done.stdout  # (contact.enable: its kernels)
    assert any(tmp_path.rglob("*.nbi")) and any(tmp_path.rglob("*.nbc"))
    check = textwrap.dedent("""
        import numba.core.event as ev
        from rnea_ros.nodes import precompile as pc
        from rnea_ros.samples import robot_files
        compiled = []
        class Listener(ev.Listener):
            def on_start(self, event):
                compiled.append(event.data["dispatcher"].py_func.__qualname__)
            def on_end(self, event):
                pass
        ev.register("numba:compile", Listener())
        built = 0
        with pc.quiet_context() as context:
            for robot in ("arm7", "five_bar"):
                files = robot_files(robot)
                for variant in pc.variants(files):
                    pc.build(variant, files, context)
                    built += 1
        print(built, compiled)
    """)
    out = subprocess.run([sys.executable, "-c", check], env=env, capture_output=True,
                         text=True, timeout=300)
    assert out.returncode == 0, out.stdout + out.stderr
    assert out.stdout.split()[:2] == ["10", "[]"], out.stdout  # 7 arm7 + 3 five_bar nodes
    process = node_process("controller", "arm7", tmp_path, "mode:=inverse_dynamics")
    try:
        lines = read_until(process, "commanding", 60.0)
    finally:
        process.send_signal(signal.SIGINT)
        process.wait(timeout=10.0)
    assert not any("compiling kernels" in line for line in lines), lines


def test_ctrl_c_stops_precompile_promptly(tmp_path: Path) -> None:
    """``rnea-precompile`` on an empty cache, SIGINT a few seconds in: it stops at numba's
    next compiler pass with a line saying so, exit code 130 (128 + SIGINT), no traceback
    (before: a KeyboardInterrupt's traceback, or none at all when it landed in llvmlite's
    ctypes callback and the compilation went on)."""
    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path), PYTHONPATH=str(ROOT))
    process = subprocess.Popen([sys.executable, "-m", "rnea_ros.nodes.precompile", "--robot",
                                "five_bar"], env=env, stdout=subprocess.PIPE,
                               stderr=subprocess.STDOUT, text=True, bufsize=1)
    read_until(process, "compiling the nodes' kernels", 60.0)
    time.sleep(3.0)  # compiling (a minute on a cold cache)
    rc, elapsed, rest = signal_and_wait(process, signal.SIGINT)
    assert "Traceback" not in rest and "ctypes" not in rest, rest
    assert rc == 128 + signal.SIGINT, rest
    assert "SIGINT: stopped after" in rest and "done in" not in rest, rest
    assert elapsed < 10.0


def test_precompile_cli(capsys: pytest.CaptureFixture[str]) -> None:
    """``main(argv)``: one robot and the tools (whatever this checkout's cache holds:
    compiles what is missing), its nodes listed; an unknown robot is refused by
    argparse, listing them."""
    assert precompile_main(["--robot", "mixed_3dof", "--tools"]) == 0
    out = capsys.readouterr().out
    assert "mixed_3dof" in out and "controller elastic (hua law)" in out
    assert "rnea-plan, rnea-identify" in out
    assert "the nodes' next starts load their kernels from the cache" in out
    with pytest.raises(SystemExit) as exc:
        precompile_main(["--robot", "ur5e"])
    assert exc.value.code == 2
    assert "invalid choice: 'ur5e'" in capsys.readouterr().err
