"""The other modes' kernels compiled in the background (cold start, issue 39 §2).

A controller node compiles, before its first command, the kernels of the mode it starts
in; on a cold numba cache (the first start after ``colcon build``, which runs no
``rnea-precompile``) compiling every other mode and elastic law as well
(:meth:`~rnea_ros.nodes.controller.ControllerNode.warm_other_modes`) put the first
command of the Delta 40 s after the process started. A node started by
``rnea-controller``/``ros2 run`` instead hands that to :class:`BackgroundWarmUp`: a daemon
thread that configures a private copy of the controller (the same model, never the live
one) in each other mode, so numba compiles (or loads) those kernels while the node
commands. numba's compiled code is shared by every caller; the live controller finds them
ready at a switch.

The thread starts with the node's first command (numba compiles under one lock per
process: a kernel the first command still needed would otherwise wait for the whole
background compile), or at a switch requested before it. A mode switch requested while
the thread still runs is refused with the reason (retry in a few seconds): it would
compile in the parameter callback and stall the command stream.
While the thread compiles, the interpreter's switch interval is lowered to
:data:`SWITCH_INTERVAL` (numba's compiler is Python code holding the GIL; LLVM's passes
release it), so the executor thread gets the GIL back within about that long, and the
garbage collector is off (numba's intermediate objects would trigger full collections,
each holding the GIL); what the compile leaves is frozen with the start-up heap
(``gc.freeze``, as :func:`rnea_ros.nodes.common.run` does), a one-time cost in memory.
"""

from __future__ import annotations

import gc
import sys
import threading
import time
from collections.abc import Callable, Mapping
from typing import Any

from rnea_ros.control.config import CONTROLLER_PARAMETERS, controller_config
from rnea_ros.core.errors import RneaError

SWITCH_INTERVAL = 2e-4  # [s] the GIL's switch interval while compiling (Python: 5e-3)


class BackgroundWarmUp:
    """Runs ``warm(values)`` (configure a copy of the controller in every other mode) in a
    daemon thread from :meth:`start`; ``done`` once it returned, ``error`` its failure
    text, ``seconds`` how long it took. ``log(message)`` reports the end (one INFO
    line)."""

    def __init__(self, warm: Callable[[Mapping[str, Any]], None], values: Mapping[str, Any],
                 log: Callable[[str], object]) -> None:
        self.warm, self.values, self.log = warm, dict(values), log
        self.started = time.monotonic()
        self.seconds = float("nan")
        self.error = ""
        self.done = threading.Event()
        self.thread = threading.Thread(target=self.run, name="rnea-warm-up", daemon=True)
        self.begun = False

    def start(self) -> None:
        """Start the thread (once): at the node's first command, so that the first
        command's own kernels never wait for numba's compiler lock held by this thread."""
        if not self.begun:
            self.begun = True
            self.started = time.monotonic()
            self.thread.start()

    def run(self) -> None:
        interval = sys.getswitchinterval()
        sys.setswitchinterval(SWITCH_INTERVAL)
        collecting = gc.isenabled()
        gc.disable()  # numba's IR would trigger full collections, each holding the GIL
        try:
            self.warm(self.values)
        except Exception as exc:  # (reported; the live controller is untouched)
            self.error = f"{type(exc).__name__}: {exc}"
        finally:
            if collecting:  # what the compile left is permanent (kernels, types): frozen
                gc.freeze()  # out of later collections, as the start-up heap is
                gc.enable()
            sys.setswitchinterval(interval)
            self.seconds = time.monotonic() - self.started
            self.done.set()
        self.log(f"other modes' kernels ready after {self.seconds:.1f} s in the background"
                 + (f" (failed: {self.error})" if self.error else ""))

    def refusal(self) -> str | None:
        """Why a mode switch must wait, or None once the kernels are ready."""
        if self.done.is_set():
            return None
        self.start()  # (no command yet: begin now)
        return (f"the other modes' kernels are still being prepared in the background "
                f"(compiled, or loaded where numba's cache holds them; "
                f"{time.monotonic() - self.started:.1f} s so far): switching now would "
                "stall the commands; retry in a moment (rnea-precompile fills the cache "
                "once)")

    def wait(self, timeout: float | None = None) -> bool:
        """Block until the kernels are ready (``rnea-precompile``, tests)."""
        return self.done.wait(timeout)


__all__ = ["SWITCH_INTERVAL", "BackgroundWarmUp", "configure_other_modes"]


def configure_other_modes(c: Any, values: Mapping[str, Any], loops: Any) -> None:
    """Configure controller ``c`` once in every other mode (and elastic law) its robot
    accepts (the parameter table's choices), then back to its own: their kernels are
    compiled or loaded now."""
    current = c.config
    laws = CONTROLLER_PARAMETERS["elastic.law"].choices
    for mode in CONTROLLER_PARAMETERS["mode"].choices:
        for law in laws if mode == "elastic" else (values["elastic.law"],):
            if (mode, law) == (values["mode"], values["elastic.law"]):
                continue
            try:
                other = controller_config({**values, "mode": mode, "elastic.law": law},
                                          c.base_model, c.elastic, loops)
            except (RneaError, ValueError, TypeError):
                continue  # (not a mode of this robot)
            c.configure(other)
    c.configure(current)
