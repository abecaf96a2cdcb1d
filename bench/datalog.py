"""Datalog benchmark: compiled Datalog programs against DuckDB's recursive CTEs, in one run.

Three programs from examples/, compiled with `compiler.compile_datalog` and run
through `program.session()` (insert the facts, one `commit()`), each against the
same query as a DuckDB recursive CTE with UNION on the same data:

1. tc       -- transitive closure (examples/tc.dl) on seeded uniform random
   directed graphs G(n, m): m edges with `src` and `dst` drawn uniformly from n
   nodes (duplicates and self-loops kept: the input is a multiset). Sizes
   G(1,000, 2,000), G(2,000, 6,000), G(5,000, 10,000).
2. sg       -- same generation (examples/same_generation.dl) on a random forest:
   the first `trees` nodes are roots, node i >= trees has a parent drawn
   uniformly from the nodes 0..i-1 (random recursive trees, depth ~ ln n).
3. andersen -- Andersen points-to (examples/andersen.dl) on a random program of
   n variables (objects share the variables' id space, so `*p` of an object is
   defined): 0.5 n address-of, 0.7 n assign, 0.1 n load and 0.1 n store
   statements with uniformly random operands (below the density where one
   giant cycle makes everything point to everything). The program has
   non-linear rules (points_to twice in a body); DuckDB evaluates them with
   `USING KEY` and `recurring.points_to` (the CTE's whole table; a plain
   reference is only the last iteration's rows, which would lose derivations).

sg and andersen declare `symbol` columns; the benchmark compiles them with
`number` columns instead (integer ids on both sides, as DuckDB gets them).

What is measured (wall clock, `time.perf_counter`), every run in a fresh
subprocess (`--worker`), so each has its own peak memory:

- batch: deltalog = `session.insert` of every relation + `session.commit()`
  (which returns every output change as columns, consolidated, decoded to
  tuples only when read; the table also shows the part spent in `dataflow.step()`);
  compiling is excluded (reported in the notes). DuckDB = the recursive CTE
  with `SELECT count(*)` over it, on tables loaded beforehand (loading
  excluded). Both engines are timed warm: DuckDB's worker has run its loading
  queries first, and deltalog's runs `warmup()` first (numba's start-up, the
  kernels loaded from their cache, a 3-edge TC program), whose seconds go to
  the notes: a fresh process's first commit pays them once. Median and spread
  over `--repeats` runs, fewer when one run takes longer than `--rep-budget`
  seconds.
- update: `--updates` rounds, each removing 1% of every input relation's rows
  (chosen uniformly) and inserting as many new ones (same distribution; for sg
  the removed (child, parent) rows are re-parented, so the input stays a
  forest), in one commit (deltalog: `remove` + `insert` + `commit`). DuckDB:
  DELETE + INSERT of the same rows, then the CTE again from scratch.
- CPU seconds (`time.process_time` of the worker; DuckDB's summed over its
  threads) go to the notes: on a shared machine wall clock measures the
  neighbours too, CPU time less so.
- peak memory: `ru_maxrss` of the worker process after the batch run (peak
  RSS), and that minus `ru_maxrss` just before it, after imports and data
  generation (the increase, i.e. what the evaluation itself needed).

Checks (in the first deltalog run of each workload, after its timings): the
output relation equals DuckDB's rows on the same data -- row count and set
equality -- after the batch and after the last update. Exit status 1 if one
fails.

Targets (issue 15): the batch, answer as columns included, within 1.0x of
DuckDB on TC G(2,000, 6,000) and G(5,000, 10,000), same generation and
Andersen; a 1% update at least 5x faster than DuckDB's recompute (every
workload).

    python bench/datalog.py --quick            # smallest sizes, under a minute
    python bench/datalog.py                    # the full run
    python bench/datalog.py --profile tc-2k    # cProfile deltalog's batch run of one workload
    python bench/datalog.py --profile tc-1k --profile-phase update   # ... or its first 1% update

The table goes to stdout, progress to stderr; `--record` appends a dated
section to bench/RESULTS.md.
"""

from __future__ import annotations

import argparse
import cProfile
import datetime
import io
import json
import os
import platform
import pstats
import resource
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # run from a checkout without installing

RESULTS = Path(__file__).resolve().parent / "RESULTS.md"
EXAMPLES = ROOT / "examples"
TARGET_BATCH, TARGET_UPDATE = 1.0, 5.0
UPDATE_FRACTION = 0.01


# -- programs, data and updates ------------------------------------------------------


@dataclass(frozen=True)
class Program:
    """A Datalog example, its DuckDB query and the columns of its input tables."""

    name: str
    source: str  # file in examples/
    output: str
    columns: dict  # input relation -> (column, column)
    cte: str  # WITH RECURSIVE <output>(...) AS (...), without the final SELECT

    def text(self) -> str:
        return (EXAMPLES / self.source).read_text().replace(": symbol", ": number")


TC = Program("tc", "tc.dl", "path", {"edge": ("x", "y")}, """
WITH RECURSIVE path(x, y) AS (
    SELECT x, y FROM edge
    UNION
    SELECT path.x, edge.y FROM path JOIN edge ON path.y = edge.x
)""")

SG = Program("sg", "same_generation.dl", "sg", {"parent": ("child", "parent")}, """
WITH RECURSIVE sg(x, y) AS (
    SELECT a.child, b.child FROM parent a JOIN parent b ON a.parent = b.parent WHERE a.child <> b.child
    UNION
    SELECT a.child, b.child FROM sg JOIN parent a ON a.parent = sg.x JOIN parent b ON b.parent = sg.y
    WHERE a.child <> b.child
)""")

ANDERSEN = Program(
    "andersen", "andersen.dl", "points_to",
    {"address_of": ("p", "o"), "assign": ("p", "q"), "load": ("p", "q"), "store": ("p", "q")}, """
WITH RECURSIVE points_to(p, o) USING KEY (p, o) AS (
    SELECT p, o FROM address_of
    UNION
    SELECT * FROM (
        SELECT a.p, pt.o FROM assign a JOIN points_to pt ON pt.p = a.q
        UNION SELECT l.p, b.o FROM load l JOIN points_to a ON a.p = l.q JOIN recurring.points_to b ON b.p = a.o
        UNION SELECT l.p, b.o FROM load l JOIN recurring.points_to a ON a.p = l.q JOIN points_to b ON b.p = a.o
        UNION SELECT a.o, b.o FROM store s JOIN points_to a ON a.p = s.p JOIN recurring.points_to b ON b.p = s.q
        UNION SELECT a.o, b.o FROM store s JOIN recurring.points_to a ON a.p = s.p JOIN points_to b ON b.p = s.q
    )
)""")

PROGRAMS = {p.name: p for p in (TC, SG, ANDERSEN)}
ANDERSEN_MIX = {"address_of": 0.5, "assign": 0.7, "load": 0.1, "store": 0.1}


@dataclass(frozen=True)
class Spec:
    """One workload: a program on generated data of given sizes."""

    key: str
    program: str
    sizes: tuple[int, ...]  # tc: (nodes, edges); sg: (nodes, trees); andersen: (variables,)
    stream: int  # seed stream, so each workload has its own data

    @property
    def label(self) -> str:
        if self.program == "tc":
            return f"G({self.sizes[0]:,}, {self.sizes[1]:,})"
        if self.program == "sg":
            return f"{self.sizes[0]:,} nodes, {self.sizes[1]:,} trees"
        n = self.sizes[0]
        stmts = sum(int(f * n) for f in ANDERSEN_MIX.values())
        return f"{n:,} vars, {stmts:,} stmts"


WORKLOADS = {s.key: s for s in (
    Spec("tc-1k", "tc", (1_000, 2_000), 1),
    Spec("tc-2k", "tc", (2_000, 6_000), 2),
    Spec("tc-5k", "tc", (5_000, 10_000), 3),
    Spec("sg", "sg", (40_000, 200), 4),
    Spec("andersen", "andersen", (1_000,), 5),
    Spec("sg-small", "sg", (5_000, 100), 6),
    Spec("andersen-small", "andersen", (300,), 7),
)}
FULL = ("tc-1k", "tc-2k", "tc-5k", "sg", "andersen")
QUICK = ("tc-1k", "sg-small", "andersen-small")
BATCH_TARGETS = ("tc-2k", "tc-5k", "sg", "andersen")


class State:
    """The input relations of a workload, each a (2, n) int64 block with row ids (for DuckDB's DELETE)."""

    def __init__(self, spec: Spec, seed: int):
        self.spec = spec
        rng = np.random.default_rng([seed, spec.stream])
        self.updates_rng = np.random.default_rng([seed, spec.stream, 1])
        if spec.program == "tc":
            n, m = spec.sizes
            self.rels = {"edge": rng.integers(0, n, size=(2, m), dtype=np.int64)}
        elif spec.program == "sg":
            n, trees = spec.sizes
            child = np.arange(trees, n, dtype=np.int64)
            self.rels = {"parent": np.vstack([child, (rng.random(n - trees) * child).astype(np.int64)])}
        else:
            (n,) = spec.sizes
            self.rels = {r: rng.integers(0, n, size=(2, int(f * n)), dtype=np.int64) for r, f in ANDERSEN_MIX.items()}
        self.ids = {}
        self.next_id = 0
        for name, rows in self.rels.items():
            self.ids[name] = self._new_ids(rows.shape[1])

    def _new_ids(self, k: int) -> np.ndarray:
        ids = np.arange(self.next_id, self.next_id + k, dtype=np.int64)
        self.next_id += k
        return ids

    def update(self) -> tuple[dict, dict, dict, dict]:
        """Replace 1% of every relation's rows: (removed rows, removed ids, added rows, added ids) per relation."""
        rng = self.updates_rng
        removed, removed_ids, added, added_ids = {}, {}, {}, {}
        for name, rows in self.rels.items():
            n = rows.shape[1]
            k = max(1, round(UPDATE_FRACTION * n))
            idx = rng.choice(n, size=k, replace=False)
            old = rows[:, idx].copy()
            if self.spec.program == "tc":
                new = rng.integers(0, self.spec.sizes[0], size=(2, k), dtype=np.int64)
            elif self.spec.program == "sg":  # re-parent: a new parent among the nodes before the child
                new = np.vstack([old[0], (rng.random(k) * old[0]).astype(np.int64)])
            else:
                new = rng.integers(0, self.spec.sizes[0], size=(2, k), dtype=np.int64)
            removed[name], removed_ids[name] = old, self.ids[name][idx].copy()
            added[name], added_ids[name] = new, self._new_ids(k)
            rows[:, idx] = new
            self.ids[name][idx] = added_ids[name]
        return removed, removed_ids, added, added_ids


def as_tuples(block: np.ndarray) -> list[tuple]:
    """The session API's row form: a list of tuples of Python ints."""
    return list(map(tuple, block.T.tolist()))


def sorted_rows(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """(2, n) rows sorted lexicographically."""
    order = np.lexsort((b, a))
    return np.vstack([a[order], b[order]])


# -- DuckDB side -----------------------------------------------------------------------


def duckdb_tables(prog: Program, state: State):
    import duckdb

    con = duckdb.connect()
    for name, (c0, c1) in prog.columns.items():
        frame = {"id": state.ids[name], c0: state.rels[name][0], c1: state.rels[name][1]}  # noqa: F841
        con.execute(f"CREATE TABLE {name} AS SELECT id, {c0}, {c1} FROM frame")
    return con


def duckdb_apply(con, prog: Program, removed_ids: dict, added: dict, added_ids: dict) -> None:
    for name, (c0, c1) in prog.columns.items():
        gone = {"id": removed_ids[name]}  # noqa: F841
        con.execute(f"DELETE FROM {name} WHERE id IN (SELECT id FROM gone)")
        new = {"id": added_ids[name], c0: added[name][0], c1: added[name][1]}  # noqa: F841
        con.execute(f"INSERT INTO {name} SELECT id, {c0}, {c1} FROM new")


def duckdb_count(con, prog: Program) -> int:
    return con.execute(f"{prog.cte}\nSELECT count(*) FROM {prog.output}").fetchone()[0]


def duckdb_answer(con, prog: Program) -> np.ndarray:
    cols = con.execute(f"{prog.cte}\nSELECT * FROM {prog.output}").fetchnumpy()
    a, b = (np.asarray(v, dtype=np.int64) for v in cols.values())
    return sorted_rows(a, b)


# -- deltalog side ---------------------------------------------------------------------


def deltalog_answer(session, relation: str) -> np.ndarray:
    """The relation's current rows, (2, n) sorted, from the capture's consolidated updates (numpy, no tuples)."""
    batch = session._built.captures[relation].op.updates()
    data, diff = batch.data, batch.diff
    order = np.lexsort(data[::-1])
    data, diff = data[:, order], diff[order]
    if not len(diff):
        return data
    first = np.ones(len(diff), dtype=bool)
    first[1:] = (data[:, 1:] != data[:, :-1]).any(axis=0)
    starts = np.flatnonzero(first)
    counts = np.add.reduceat(diff, starts)
    if (counts < 0).any() or (counts > 1).any():
        raise AssertionError(f"{relation} is not a set: counts {sorted(set(counts.tolist()))[:5]}")
    return data[:, starts[counts > 0]]


class StepTimer:
    """Wraps a session's dataflow.step to add up the seconds spent in it."""

    def __init__(self, dataflow):
        self.seconds = 0.0
        inner = dataflow.step

        def step(*args, **kwargs):
            start = time.perf_counter()
            try:
                return inner(*args, **kwargs)
            finally:
                self.seconds += time.perf_counter() - start

        dataflow.step = step


# -- workers: one system, one workload, one fresh process ------------------------------


def maxrss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # Linux: kilobytes


def progress(msg: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


def worker(cfg: dict) -> None:
    """Run one measurement and append its results as JSON lines to cfg['out'] (flushed as they come)."""
    spec, prog = WORKLOADS[cfg["workload"]], PROGRAMS[WORKLOADS[cfg["workload"]].program]
    out = open(cfg["out"], "a")

    def emit(**record):
        out.write(json.dumps(record) + "\n")
        out.flush()

    if cfg["system"] == "deltalog":
        deltalog_worker(spec, prog, cfg, emit)
    else:
        duckdb_worker(spec, prog, cfg, emit)


def deltalog_worker(spec: Spec, prog: Program, cfg: dict, emit) -> None:
    import compiler

    state = State(spec, cfg["seed"])
    rows = {name: as_tuples(block) for name, block in state.rels.items()}
    text = prog.text()
    start = time.perf_counter()
    warmup()
    warm_s = time.perf_counter() - start
    base = maxrss_mb()
    start = time.perf_counter()
    program = compiler.compile_datalog(text)
    session = program.session(capture="outputs")
    compile_s = time.perf_counter() - start
    timer = StepTimer(session.dataflow)
    start, cpu = time.perf_counter(), time.process_time()
    for name, r in rows.items():
        session.insert(name, r)
    changes = session.commit()
    seconds, cpu = time.perf_counter() - start, time.process_time() - cpu
    peak = maxrss_mb()
    emit(phase="batch", seconds=seconds, cpu=cpu, step=timer.seconds, compile=compile_s, warmup=warm_s,
         rows=len(changes.get(prog.output, [])), rss_base=base, rss_peak=peak)
    del changes, rows
    if not cfg["updates"]:
        return
    answers = [deltalog_answer(session, prog.output)] if cfg["check"] else []
    times, steps, sizes, cpus = [], [], [], []
    for i in range(cfg["updates"]):
        removed, _, added, _ = state.update()
        r_rows = {n: as_tuples(b) for n, b in removed.items()}
        a_rows = {n: as_tuples(b) for n, b in added.items()}
        timer.seconds = 0.0
        start, cpu = time.perf_counter(), time.process_time()
        for name in prog.columns:
            session.remove(name, r_rows[name])
            session.insert(name, a_rows[name])
        changes = session.commit()
        times.append(time.perf_counter() - start)
        cpus.append(time.process_time() - cpu)
        steps.append(timer.seconds)
        sizes.append(len(changes.get(prog.output, [])))
        progress(f"  deltalog {spec.key}: update {i + 1}/{cfg['updates']} {times[-1]:.3f} s, {sizes[-1]:,} output changes")
    emit(phase="update", seconds=times, cpu=cpus, step=steps, changes=sizes, rss_peak=maxrss_mb(),
         removed=sum(b.shape[1] for b in removed.values()))
    if not cfg["check"]:
        return
    answers.append(deltalog_answer(session, prog.output))
    progress(f"  deltalog {spec.key}: checking against DuckDB")
    initial = State(spec, cfg["seed"])
    for label, st, ours in (("batch", initial, answers[0]), (f"after {cfg['updates']} updates", state, answers[1])):
        con = duckdb_tables(prog, st)
        theirs = duckdb_answer(con, prog)
        con.close()
        same = ours.shape == theirs.shape and bool(np.array_equal(ours, theirs))
        emit(phase="check", label=label, ok=same, ours=int(ours.shape[1]), theirs=int(theirs.shape[1]))


def duckdb_worker(spec: Spec, prog: Program, cfg: dict, emit) -> None:
    import duckdb

    state = State(spec, cfg["seed"])
    start = time.perf_counter()
    con = duckdb_tables(prog, state)
    load = time.perf_counter() - start
    base = maxrss_mb()
    start, cpu = time.perf_counter(), time.process_time()
    count = duckdb_count(con, prog)
    seconds, cpu = time.perf_counter() - start, time.process_time() - cpu
    emit(phase="batch", seconds=seconds, cpu=cpu, load=load, rows=count, rss_base=base, rss_peak=maxrss_mb(),
         threads=con.execute("SELECT current_setting('threads')").fetchone()[0], version=duckdb.__version__)
    times, counts, cpus = [], [], []
    for _ in range(cfg["updates"]):
        _, removed_ids, added, added_ids = state.update()
        start, cpu = time.perf_counter(), time.process_time()
        duckdb_apply(con, prog, removed_ids, added, added_ids)
        counts.append(duckdb_count(con, prog))
        times.append(time.perf_counter() - start)
        cpus.append(time.process_time() - cpu)
    if cfg["updates"]:
        emit(phase="update", seconds=times, cpu=cpus, rows=counts, rss_peak=maxrss_mb())


def warmup() -> None:
    """Compile the runtime's numba kernels (or load them from their cache) before anything is timed."""
    import compiler
    from runtime import jit

    jit.compile_all()  # kernels compile at first call: the workload may call some this warm-up does not

    session = compiler.compile_datalog(TC.text()).session()
    session.insert("edge", [(1, 2), (2, 3), (3, 1)])
    session.commit()
    session.remove("edge", [(2, 3)])
    session.commit()


# -- the driver --------------------------------------------------------------------------


@dataclass
class Runs:
    """The records of the runs of one system on one workload."""

    batch: list = field(default_factory=list)
    update: dict | None = None
    checks: list = field(default_factory=list)
    timeout: str | None = None  # phase that timed out


def run_worker(system: str, spec: Spec, args, first: bool, runs: Runs) -> float | None:
    """One fresh-process run; its records go into `runs`. Seconds of its batch run, None if none."""
    with tempfile.NamedTemporaryFile("r", suffix=".jsonl") as out:
        cfg = {"system": system, "workload": spec.key, "seed": args.seed, "out": out.name,
               "updates": args.updates if first else 0, "check": first and system == "deltalog"}
        cmd = [sys.executable, str(Path(__file__).resolve()), "--worker", json.dumps(cfg)]
        timed_out = False
        try:
            proc = subprocess.run(cmd, timeout=args.timeout, stdout=subprocess.DEVNULL)
            if proc.returncode:
                progress(f"  {system} {spec.key}: worker exited with status {proc.returncode}")
        except subprocess.TimeoutExpired:
            timed_out = True
        records = [json.loads(line) for line in out.read().splitlines() if line.strip()]
    phases = {r["phase"] for r in records}
    for r in records:
        if r["phase"] == "batch":
            runs.batch.append(r)
        elif r["phase"] == "update":
            runs.update = r
        else:
            runs.checks.append(r)
    if timed_out:
        runs.timeout = "batch" if "batch" not in phases else "update" if "update" not in phases else "check"
        progress(f"  {system} {spec.key}: timed out after {args.timeout:.0f} s in the {runs.timeout} phase")
    batch = [r for r in records if r["phase"] == "batch"]
    return batch[0]["seconds"] if batch else None


def measure(spec: Spec, args) -> dict[str, Runs]:
    results = {}
    for system in ("duckdb", "deltalog"):
        runs = Runs()
        for rep in range(args.repeats):
            progress(f"{spec.key} ({spec.label}): {system} run {rep + 1}")
            seconds = run_worker(system, spec, args, rep == 0, runs)
            if seconds is None or runs.timeout or seconds > args.rep_budget:
                break
        results[system] = runs
    return results


# -- output ------------------------------------------------------------------------------


def fmt_s(x: float) -> str:
    return f"{x:.3f} s" if x < 10 else f"{x:.1f} s"


def summary(samples) -> tuple[float | None, str]:
    """(median, 'median (min–max, n)') of seconds."""
    if not samples:
        return None, "—"
    a = np.asarray(samples, dtype=float)
    med = float(np.median(a))
    if len(a) == 1:
        return med, f"{fmt_s(med)} (1 run)"
    return med, f"{fmt_s(med)} ({fmt_s(a.min())[:-2]}–{fmt_s(a.max())}, n={len(a)})"


def memory(runs: Runs) -> str:
    if not runs.batch:
        return "—"
    peak = max(r["rss_peak"] for r in runs.batch)
    grew = max(r["rss_peak"] - r["rss_base"] for r in runs.batch)
    return f"{peak:,.0f} MB (+{grew:,.0f})"


@dataclass
class Table:
    rows: list = field(default_factory=list)  # (workload, sizes, figure, deltalog, d_mem, duckdb, q_mem, ratio, target, result)
    checks: list = field(default_factory=list)  # (label, ok or None)
    notes: list = field(default_factory=list)

    @property
    def passed(self) -> bool:
        return all(ok is not False for _, ok in self.checks)


def tabulate(spec: Spec, res: dict[str, Runs], args, table: Table) -> None:
    ours, theirs = res["deltalog"], res["duckdb"]
    timeout = f"timeout (> {args.timeout:.0f} s)"

    d_med, d_txt = summary([r["seconds"] for r in ours.batch])
    q_med, q_txt = summary([r["seconds"] for r in theirs.batch])
    if ours.timeout == "batch" and not ours.batch:
        d_txt = timeout
    if theirs.timeout == "batch" and not theirs.batch:
        q_txt = timeout
    target, result, ratio = "—", "", "—"
    if d_med is not None and q_med is not None:
        ratio = f"{d_med / q_med:.1f}x slower" if d_med >= q_med else f"{q_med / d_med:.1f}x faster"
    if spec.key in BATCH_TARGETS:
        target = f"<= {TARGET_BATCH:.0f}x DuckDB"
        result = "PASS" if d_med is not None and q_med is not None and d_med <= TARGET_BATCH * q_med else "MISS"
    rows_out = ours.batch[0]["rows"] if ours.batch else theirs.batch[0]["rows"] if theirs.batch else 0
    size = f"{spec.label}; {rows_out:,} {PROGRAMS[spec.program].output} rows"
    table.rows.append((spec.key, size, "batch: insert + commit / CTE", d_txt, memory(ours), q_txt, memory(theirs),
                       ratio, target, result))
    if ours.batch:
        s_med, s_txt = summary([r["step"] for r in ours.batch])
        table.rows.append((spec.key, "", "  of which dataflow.step()", s_txt, "", "", "", "", "", ""))
        table.notes.append(f"{spec.key}: warm-up before the timings (a fresh worker's start-up) "
                           f"{np.median([r['warmup'] for r in ours.batch]):.3f} s; "
                           f"compile_datalog + session() {np.median([r['compile'] for r in ours.batch]):.3f} s; "
                           f"commit() outside dataflow.step() (consolidating {rows_out:,} changes as columns) "
                           f"{d_med - s_med:.1f} s of {d_med:.1f} s")

    if args.updates:
        d_up = ours.update["seconds"] if ours.update else []
        q_up = theirs.update["seconds"] if theirs.update else []
        d_med, d_txt = summary(d_up)
        q_med, q_txt = summary(q_up)
        if not d_up and ours.timeout in ("batch", "update"):
            d_txt = timeout
        if not q_up and theirs.timeout in ("batch", "update"):
            q_txt = timeout
        k = ours.update["removed"] if ours.update else None
        figure = f"update: -{k:,}/+{k:,} rows, one commit" if k else "update: 1% out, 1% in, one commit"
        ratio, result = "—", "MISS"
        if d_med is not None and q_med is not None:
            ratio = f"{q_med / d_med:.1f}x faster" if q_med >= d_med else f"{d_med / q_med:.1f}x slower"
            result = "PASS" if q_med >= TARGET_UPDATE * d_med else "MISS"
        table.rows.append((spec.key, "", figure, d_txt, "", q_txt, "", ratio,
                           f">= {TARGET_UPDATE:.0f}x faster than recompute", result))
        if ours.update:
            table.rows.append((spec.key, "", "  of which dataflow.step()", summary(ours.update["step"])[1],
                               "", "", "", "", "", ""))
            table.notes.append(f"{spec.key}: output changes per update: {', '.join(f'{c:,}' for c in ours.update['changes'])}")

    cpu = []
    for label, d_recs, q_recs in (("batch", ours.batch, theirs.batch),
                                  ("update", [ours.update] if ours.update else [], [theirs.update] if theirs.update else [])):
        d = [x for r in d_recs if "cpu" in r for x in np.atleast_1d(r["cpu"])]
        q = [x for r in q_recs if "cpu" in r for x in np.atleast_1d(r["cpu"])]
        if d and q:
            cpu.append(f"{label} deltalog {np.median(d):.2f} s, DuckDB {np.median(q):.2f} s (all threads), "
                       f"deltalog / DuckDB {np.median(d) / np.median(q):.1f}")
    if cpu:
        table.notes.append(f"{spec.key}: CPU seconds (process_time, medians): {'; '.join(cpu)}")
    for c in ours.checks:
        table.checks.append((f"{spec.key}: {c['label']}: deltalog {c['ours']:,} rows, DuckDB {c['theirs']:,} rows, "
                             f"{'equal sets' if c['ok'] else 'DIFFERENT'}", c["ok"]))
    if ours.batch and theirs.batch and ours.batch[0]["rows"] != theirs.batch[0]["rows"]:
        table.checks.append((f"{spec.key}: batch row count: deltalog {ours.batch[0]['rows']:,} vs DuckDB "
                             f"{theirs.batch[0]['rows']:,}", False))
    if not ours.checks and args.updates:
        table.checks.append((f"{spec.key}: answers not checked (deltalog {ours.timeout or 'failed'})", None))


HEAD = ("workload", "sizes", "figure", "deltalog median (spread)", "deltalog peak RSS (+growth)",
        "DuckDB median (spread)", "DuckDB peak RSS (+growth)", "ratio", "target", "result")


def markdown(table: Table, title: str) -> str:
    lines = [f"### {title}", "", "| " + " | ".join(HEAD) + " |", "|" + "---|" * len(HEAD)]
    lines += ["| " + " | ".join(r) + " |" for r in table.rows]
    lines += ["", "| check | result |", "|---|---|"]
    lines += [f"| {label} | {'PASS' if ok else 'FAIL' if ok is False else 'not run'} |" for label, ok in table.checks]
    lines += [""] + [f"- {n}" for n in table.notes]
    return "\n".join(lines)


def render(table: Table, title: str) -> None:
    try:
        from rich.console import Console
        from rich.table import Table as RichTable
    except ImportError:
        print(markdown(table, title))
        return
    console = Console(width=None if sys.stdout.isatty() else 220)
    t = RichTable(title=title)
    for col in HEAD:
        t.add_column(col)
    for r in table.rows:
        t.add_row(*r[:-1], {"PASS": "[green]PASS[/]", "MISS": "[red]MISS[/]"}.get(r[-1], r[-1]))
    console.print(t)
    c = RichTable(title="checks")
    c.add_column("check")
    c.add_column("result")
    for label, ok in table.checks:
        c.add_row(label, "[green]PASS[/]" if ok else "[red]FAIL[/]" if ok is False else "not run")
    console.print(c)
    for n in table.notes:
        console.print(f"note: {n}", highlight=False)


def git_revision() -> str:
    try:
        rev = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True, check=True)
        dirty = subprocess.run(["git", "status", "--porcelain", "runtime", "compiler"], cwd=ROOT, capture_output=True, text=True)
    except (OSError, subprocess.CalledProcessError):
        return "unknown commit"
    return f"commit {rev.stdout.strip()}{' + uncommitted changes in runtime/ or compiler/' if dirty.stdout.strip() else ''}"


def record(table: Table, args, duckdb_info: str) -> None:
    stamp = datetime.datetime.now().strftime("%Y-%m-%d %H:%M")
    try:
        load = "load average %.1f / %.1f / %.1f at the end" % os.getloadavg()
    except OSError:
        load = ""
    env = (f"{git_revision()}; Python {platform.python_version()}, numpy {np.__version__}, {duckdb_info}, "
           f"{platform.machine()}, {os.cpu_count()} cores, shared with other engineers' work while measuring ({load}); "
           f"`python bench/datalog.py {' '.join(args.argv)}`")
    section = f"\n## Datalog, {stamp}\n\n{env}\n\n{markdown(table, 'Results')}\n"
    with RESULTS.open("a") as fh:
        fh.write(section)
    progress(f"recorded to {RESULTS}")


def profile(key: str, seed: int, phase: str, top: int = 25) -> None:
    """cProfile deltalog's batch run (insert + commit) of one workload, or its first update, in this
    process, warmed up first as the timed runs are."""
    import compiler

    warmup()
    spec = WORKLOADS[key]
    prog = PROGRAMS[spec.program]
    state = State(spec, seed)
    rows = {name: as_tuples(block) for name, block in state.rels.items()}
    session = compiler.compile_datalog(prog.text()).session(capture="outputs")
    prof = cProfile.Profile()

    def batch():
        for name, r in rows.items():
            session.insert(name, r)
        session.commit()

    if phase == "batch":
        prof.runcall(batch)
    else:
        batch()
        removed, _, added, _ = state.update()
        r_rows = {n: as_tuples(b) for n, b in removed.items()}
        a_rows = {n: as_tuples(b) for n, b in added.items()}

        def update():
            for name in prog.columns:
                session.remove(name, r_rows[name])
                session.insert(name, a_rows[name])
            session.commit()

        prof.runcall(update)
    for order in ("cumulative", "tottime"):
        out = io.StringIO()
        pstats.Stats(prof, stream=out).sort_stats(order).print_stats(top)
        print(out.getvalue())


def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--quick", action="store_true", help=f"smallest sizes, one run each ({', '.join(QUICK)})")
    p.add_argument("--workloads", help=f"comma list (default {','.join(FULL)}; all: {','.join(WORKLOADS)})")
    p.add_argument("--repeats", type=int, help="runs per system and workload (default 3; quick 1)")
    p.add_argument("--rep-budget", type=float, default=60.0,
                   help="no further runs once one batch run took longer than this (seconds, default 60)")
    p.add_argument("--updates", type=int, help="update rounds of 1%% out / 1%% in (default 3; 0 skips)")
    p.add_argument("--timeout", type=float, help="seconds per worker process (one system, one workload; default 1200, quick 120)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--record", action="store_true", help="append a dated section to bench/RESULTS.md")
    p.add_argument("--profile", metavar="WORKLOAD", help="only cProfile deltalog's batch run (or first update) of WORKLOAD")
    p.add_argument("--profile-phase", choices=("batch", "update"), default="batch", help="what --profile profiles")
    p.add_argument("--worker", help=argparse.SUPPRESS)
    p.add_argument("--warmup", action="store_true", help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    args.argv = argv
    if args.repeats is None:
        args.repeats = 1 if args.quick else 3
    if args.updates is None:
        args.updates = 3
    if args.timeout is None:
        args.timeout = 120.0 if args.quick else 1200.0
    keys = args.workloads.split(",") if args.workloads else QUICK if args.quick else FULL
    unknown = [k for k in keys if k not in WORKLOADS]
    if unknown:
        p.error(f"unknown workload(s) {', '.join(unknown)}; known: {', '.join(WORKLOADS)}")
    args.keys = keys
    return args


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    args = parse_args(argv)
    if args.worker:
        worker(json.loads(args.worker))
        return 0
    if args.warmup:
        warmup()
        return 0
    if args.profile:
        profile(args.profile, args.seed, args.profile_phase)
        return 0
    started = time.perf_counter()
    progress("warming up (numba kernel cache)")
    subprocess.run([sys.executable, str(Path(__file__).resolve()), "--warmup"], check=True)
    table = Table()
    duckdb_info = "duckdb ?"
    for key in args.keys:
        spec = WORKLOADS[key]
        res = measure(spec, args)
        if res["duckdb"].batch:
            b = res["duckdb"].batch[0]
            duckdb_info = f"duckdb {b['version']} ({b['threads']} threads)"
        tabulate(spec, res, args, table)
    progress(f"done in {time.perf_counter() - started:.0f}s")
    render(table, f"deltalog Datalog benchmark ({'quick' if args.quick else 'full'}, seed {args.seed})")
    if args.record:
        record(table, args, duckdb_info)
    return 0 if table.passed else 1


if __name__ == "__main__":
    sys.exit(main())
