"""Progress you can see: a status line for each stage of a command, and the stages' times.

A command's work falls into stages: starting Spark, reading each table,
compiling kernels (first run only), computing, writing each output. `Stages`
times each one (`summary()` is the one line `--timings` prints) and, when
shown -- stderr is a terminal and `--quiet` was not given -- keeps a `rich`
status line on stderr saying what runs now: the table and the rows read so
far, the dataflow's rounds (each carries every running loop one iteration)
and the output rows so far, the output being written. On a pipe nothing is
shown; answers go to stdout either way.

Kernels: numba compiles the runtime's kernels on first use and caches them
next to the sources. A compile (a cache miss; loading from the cache is not
one) is numba's "numba:compile" event, so the stage is shown exactly while one
runs, and its time is counted as compiling, not computing.
"""

from __future__ import annotations

import sys
import time
from contextlib import contextmanager

_REFRESH = 0.1  # seconds between updates of a stage's counters on the status line


class Stages:
    def __init__(self, show: bool):
        self.seconds: dict[str, float] = {}
        self.beside: dict[str, float] = {}  # of a stage's seconds, those spent on a thread beside other stages
        self.rows_read = 0
        self._inner: list[float] = []  # per open stage: seconds spent in stages inside it
        self._status = None
        self._label = ""
        self._shown_at = 0.0
        if show:
            import os

            from rich.console import Console
            from rich.live import Live
            from rich.spinner import Spinner

            # A duplicate of the terminal's descriptor: Spark's start sends fd 2 to its log file.
            terminal = os.fdopen(os.dup(sys.stderr.fileno()), "w", buffering=1)
            self._spinner = Spinner("dots")
            # Not redirecting stdout: answers printed meanwhile stay on stdout.
            self._status = Live(self._spinner, console=Console(file=terminal, force_terminal=True), transient=True,
                                redirect_stdout=False, redirect_stderr=False, refresh_per_second=10)

    @staticmethod
    def for_terminal(quiet: bool) -> "Stages":
        return Stages(show=not quiet and sys.stderr.isatty())

    @contextmanager
    def stage(self, name: str, label: str):
        """Time the block as stage `name` (times of a name add up), shown as `label`. A stage
        inside another (Spark starting during the first read) is not counted in the outer one."""
        outer, began = self._label, time.perf_counter()
        self._inner.append(0.0)
        self.show(label)
        try:
            yield self
        finally:
            spent = time.perf_counter() - began
            self.seconds[name] = self.seconds.get(name, 0.0) + spent - self._inner.pop()
            if self._inner:
                self._inner[-1] += spent
            self.show(outer)

    def show(self, label: str, force: bool = True) -> None:
        """Put `label` on the status line (at most every _REFRESH seconds unless `force`)."""
        self._label = label
        if self._status is None:
            return
        now = time.perf_counter()
        if not force and now - self._shown_at < _REFRESH:
            return
        self._shown_at = now
        if label:
            self._spinner.update(text=label)
            self._status.start()
        else:
            self._status.stop()

    def reading(self, relation: str):
        """The stage of reading `relation`; its `rows(n)` counts rows as they arrive."""
        stage = self.stage("read", f"reading {relation}")
        counted = 0

        def rows(n: int) -> None:
            nonlocal counted
            counted += n
            self.rows_read += n
            self.show(f"reading {relation}: {counted:,} rows", force=False)

        return stage, rows

    @contextmanager
    def computing(self, session, name: str = "compute", label: str = "computing"):
        """Stage `name` around `session`'s work, showing rounds and output rows so far;
        kernel compiles inside it are stage "compile" (see the module)."""
        dataflow = session.dataflow
        rounds = 0

        def swept() -> None:
            nonlocal rounds
            rounds += 1
            self.show(f"{label}: round {rounds:,}, {session.output_updates():,} output rows so far", force=False)

        listener = _CompileListener(self)
        with self.stage(name, label), listener.installed():
            dataflow.on_sweep = swept
            try:
                yield
            finally:
                dataflow.on_sweep = None
        compiled = self.seconds.get("compile", 0.0) - listener.before
        self.seconds[name] -= compiled

    def ran_beside(self, name: str, seconds: float) -> None:
        """Stage `name` took `seconds` in all, though only its timed part held the others up
        (Spark starting on a thread while the program compiles): the stage is given its whole
        time, and the summary says how much of it was spent beside other stages."""
        hidden = seconds - self.seconds.get(name, 0.0)
        if hidden > 0:
            self.seconds[name] = seconds
            self.beside[name] = hidden

    def summary(self, order=("spark start", "read", "compile", "compute", "changes", "write")) -> str:
        parts = []
        for name in order:
            if name in self.seconds:
                extra = f" ({self.rows_read:,} rows)" if name == "read" else ""
                if name in self.beside:
                    extra = f" ({self.beside[name]:.2f}s of it beside other stages)"
                parts.append(f"{name} {self.seconds[name]:.2f}s{extra}")
        total = sum(self.seconds.values()) - sum(self.beside.values())
        return "timings: " + ", ".join(parts) + f"; total {total:.2f}s"

    def close(self) -> None:
        if self._status is not None:
            self._status.stop()
            self._status.console.file.close()


class _CompileListener:
    """Shows stage "compile" while numba compiles a kernel (outermost compiles only)."""

    def __init__(self, stages: Stages):
        self.stages = stages
        self.before = stages.seconds.get("compile", 0.0)

    @contextmanager
    def installed(self):
        try:
            from numba.core import event
        except ImportError:  # no numba events: compiling counts as computing
            yield
            return
        stages, depth, began, outer = self.stages, 0, 0.0, ""

        class Listener(event.Listener):
            def on_start(self, _event):
                nonlocal depth, began, outer
                depth += 1
                if depth == 1:
                    began, outer = time.perf_counter(), stages._label
                    stages.show("compiling kernels (first run only)")

            def on_end(self, _event):
                nonlocal depth
                depth -= 1
                if depth == 0:
                    stages.seconds["compile"] = stages.seconds.get("compile", 0.0) + time.perf_counter() - began
                    stages.show(outer)

        with event.install_listener("numba:compile", Listener()):
            yield
