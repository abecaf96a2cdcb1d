"""Stages of a CLI command (compiler.cli.progress): what the status line says, and the times.

The status line itself is checked on a pseudo-terminal by tests/e2e/test_cli_columnar.py;
here a `Stages` that records its labels shows what a computation reports, and a kernel
compiled inside it is counted as compiling, not computing.
"""

import numba

import compiler
from compiler.cli.progress import Stages

TC = """
.decl edge(x: number, y: number)
.input edge
path(x, y) :- edge(x, y).
path(x, z) :- path(x, y), edge(y, z).
"""


class Recorded(Stages):
    def __init__(self):
        super().__init__(show=False)
        self.labels = []

    def show(self, label, force=True):
        self.labels.append(label)
        super().show(label, force)


def test_computing_reports_rounds_and_rows_and_counts_compiles_apart():
    @numba.njit  # not cached: compiled on its first call, inside the stage
    def twice(x):
        return 2 * x

    session = compiler.compile_datalog(TC).session()
    session.insert("edge", [(i, i + 1) for i in range(30)])
    stages = Recorded()
    with stages.computing(session):
        twice(21)
        session.commit()
    assert "compiling kernels (first run only)" in stages.labels
    rounds = [label for label in stages.labels if label.startswith("computing: round")]
    assert rounds and rounds[-1].endswith(f"{session.output_updates():,} output rows so far")
    assert session.dataflow.on_sweep is None
    assert stages.seconds["compile"] > 0 and stages.seconds["compute"] >= 0
    summary = stages.summary()
    assert summary.startswith("timings: compile ") and ", compute " in summary


def test_a_stage_inside_another_is_counted_once(monkeypatch):
    from compiler.cli import progress

    ticks = iter([0.0, 1.0, 4.0, 10.0])  # read starts, Spark starts, Spark is up, read ends
    monkeypatch.setattr(progress.time, "perf_counter", lambda: next(ticks))
    stages = Stages(show=False)
    with stages.stage("read", "reading edge"):
        with stages.stage("spark start", "starting Spark"):
            pass
    assert stages.seconds == {"read": 7.0, "spark start": 3.0}
    assert stages.summary() == "timings: spark start 3.00s, read 7.00s (0 rows); total 10.00s"


def test_a_stage_run_partly_beside_the_others_counts_whole_but_not_twice_in_the_total(monkeypatch):
    """Spark starting on a thread while the program compiles: the read waited 3 s for it,
    though the JVM took 5 s in all; the total is still the time the stages held the run up."""
    from compiler.cli import progress

    ticks = iter([0.0, 1.0, 4.0, 10.0])
    monkeypatch.setattr(progress.time, "perf_counter", lambda: next(ticks))
    stages = Stages(show=False)
    with stages.stage("read", "reading edge"):
        with stages.stage("spark start", "starting Spark"):
            pass
    stages.ran_beside("spark start", 5.0)
    assert stages.summary() == "timings: spark start 5.00s (2.00s of it beside other stages), read 7.00s (0 rows); total 10.00s"
    stages.ran_beside("read", 6.0)  # no longer than what was timed: nothing ran beside
    assert stages.seconds["read"] == 7.0 and "read" not in stages.beside
