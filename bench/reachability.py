"""Reachability benchmark: deltalog's incremental runtime against DuckDB, in one run.

The query is graph reachability from a fixed set of 10 roots (nodes 0..9):

    reach(root, root)  :- roots(root).
    reach(root, dst)   :- reach(root, node), edges(node, dst).

built directly on the runtime (`runtime.Dataflow`, an `iterate` of
join + distinct). Graphs are seeded uniform random directed graphs (`src` and
`dst` drawn uniformly from the nodes; duplicate edges and self-loops are kept,
edges form a multiset). An *update* removes the oldest edge and adds a new
random one, at its own logical time: update `t` is submitted at time `t`, then
all inputs advance to `t + 1` and the dataflow steps to quiescence. The initial
graph is loaded at time 0. Updates are submitted with `update_columns` (the
int64 column form of `insert`/`remove`).

What is measured (wall clock, `time.perf_counter`; workload 1 also records each
update's CPU seconds, `time.process_time`, which other load on a shared machine
does not inflate), after every runtime kernel is compiled or loaded from numba's
cache (`runtime.jit.compile_all`), so no timing includes a first call's compiling:

1. single  -- 1,000 nodes / 2,000 edges. Per-update latency (submit + advance +
   step) over updates 1..W, and over the last W of `--updates` updates (the
   issue asks for the window after 100,000 updates), plus single-update
   throughput (updates / total seconds of the whole run).
2. batched -- the same graph; W updates at W distinct times submitted together,
   one `advance_to` past all of them and one `step()`: throughput in updates/s
   (submit + step, load excluded). Check: the `(row, time, diff)` changes at
   those times equal the changes of the same updates applied one at a time in a
   second dataflow, so every output change keeps its input's exact time.
3. large   -- 100,000 nodes / 200,000 edges: load + fixpoint seconds, then
   per-update latency over ~200 updates.
4. bulk    -- 500,000 nodes / 1,000,000 edges: load + fixpoint seconds (as many
   runs as DuckDB's recomputes, each into a fresh dataflow).
5. duckdb  -- the same query as a recursive CTE with UNION, recomputed from
   scratch: on the 1,000-node graph after each update (DELETE + INSERT of the
   changed edges, then the query, timed together), and once per repetition on
   the large and bulk graphs. Check: DuckDB's reach set equals deltalog's on the
   1,000-node graph after the same updates.
6. compiled -- the same query compiled from examples/reach.dl
   (`compiler.compile_file` + `session()`: `remove` + `insert` + `commit()` per
   update) against the hand-built dataflow above, on the same 1,000-node graph
   and the same update sequence, interleaved in one run (update i goes to
   both, alternating which goes first): per-update latency p50/p90/p99 of each.
   Check: both reach sets are equal after every 100 updates and at the end.

Targets (issue 15): deltalog p50 / DuckDB p50 on the 1,000-node graph
<= 0.1; p50 after 100,000 updates within 10% of p50 after 1,000; batched
throughput >= 20,000 updates/s; the compiled plan's p50 at most 1.1x the
hand-built dataflow's; the 100,000-node graph's single-update p50 <= 1 ms; the
bulk load + fixpoint <= 2x DuckDB's recompute (medians of as many runs each).

    python bench/reachability.py --quick      # smoke run, well under a minute
    python bench/reachability.py              # the full run (100,000 updates)
    python bench/reachability.py --profile 200  # cProfile the single-update path

The table goes to stdout, progress to stderr; `--record` appends a dated section
to bench/RESULTS.md. Exit status 1 if a correctness check fails.
"""

from __future__ import annotations

import argparse
import cProfile
import datetime
import gc
import io
import os
import platform
import pstats
import subprocess
import sys
import time
from dataclasses import dataclass, field, replace
from functools import cached_property
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # run from a checkout without installing

from runtime import Dataflow, iterate, jit  # noqa: E402

ROOTS = np.arange(10, dtype=np.int64)
RESULTS = Path(__file__).resolve().parent / "RESULTS.md"
TARGET_RATIO, TARGET_DRIFT, TARGET_BATCHED = 0.1, 0.10, 20_000
TARGET_LARGE_MS, TARGET_BULK = 1.0, 2.0  # 100k/200k single-update p50; bulk load / DuckDB
ISSUE_UPDATES = 100_000


@dataclass(frozen=True)
class Sizes:
    small: tuple[int, int] = (1_000, 2_000)  # nodes, edges
    updates: int = ISSUE_UPDATES  # workload 1: total single updates
    window: int = 1_000  # workload 1 windows; workload 2 batch size
    large: tuple[int, int] = (100_000, 200_000)
    large_updates: int = 200
    bulk: tuple[int, int] = (500_000, 1_000_000)
    duckdb_updates: int = 200
    repeats: int = 3  # batched runs and DuckDB recomputes on the large/bulk graphs
    compiled_updates: int = 2_000  # workload 6


FULL = Sizes()
QUICK = Sizes(updates=300, window=100, large=(10_000, 20_000), large_updates=50,
              bulk=(50_000, 100_000), duckdb_updates=100, repeats=2, compiled_updates=200)


# -- measurement helpers ---------------------------------------------------------


def timed(fn, *args, **kwargs) -> tuple[float, object]:
    """(seconds, result) of one call."""
    start = time.perf_counter()
    result = fn(*args, **kwargs)
    return time.perf_counter() - start, result


def latency_stats(seconds) -> dict:
    """p50/p90/p99 in milliseconds of per-update latencies given in seconds."""
    p50, p90, p99 = np.percentile(np.asarray(seconds) * 1e3, [50, 90, 99])
    return {"p50": p50, "p90": p90, "p99": p99, "n": len(seconds)}


def progress(msg: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


@dataclass
class Row:
    workload: str
    size: str
    metric: str
    median: str
    spread: str
    n: str = ""


@dataclass
class Report:
    rows: list[Row] = field(default_factory=list)
    checks: dict[str, bool] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    figures: dict[str, float] = field(default_factory=dict)

    def latency(self, workload, size, metric, stats, key=None):
        self.rows.append(Row(workload, size, metric, f"{stats['p50']:.2f} ms",
                             f"p90 {stats['p90']:.2f} / p99 {stats['p99']:.2f} ms", f"{stats['n']:,}"))
        if key:
            self.figures[key] = stats["p50"]

    def repeated(self, workload, size, metric, samples, unit, fmt="{:.3f}", key=None):
        samples = np.asarray(samples, dtype=float)
        med = float(np.median(samples))
        spread = f"{fmt.format(samples.min())}–{fmt.format(samples.max())} {unit}" if len(samples) > 1 else "(1 run)"
        self.rows.append(Row(workload, size, metric, f"{fmt.format(med)} {unit}", spread, f"{len(samples)}"))
        if key:
            self.figures[key] = med


def size_label(nodes: int, edges: int) -> str:
    return f"{nodes:,} n / {edges:,} e"


# -- workload data ----------------------------------------------------------------


@dataclass(frozen=True)
class Workload:
    """A graph and its update stream: update i (0-based) removes `removed[:, i]`, adds `added[:, i]`.

    Edges live in a FIFO: the oldest edge is the next one removed. Edge ids
    (for DuckDB) are positions in initial edges + added edges.
    """

    nodes: int
    edges: np.ndarray  # (2, E) int64
    added: np.ndarray  # (2, U) int64

    @cached_property
    def removed(self) -> np.ndarray:
        return np.hstack([self.edges, self.added])[:, : self.added.shape[1]]

    def slice(self, start: int, stop: int) -> tuple[np.ndarray, np.ndarray]:
        return self.removed[:, start:stop], self.added[:, start:stop]


def make_workload(nodes: int, edges: int, updates: int, seed: int, stream: int) -> Workload:
    rng = np.random.default_rng([seed, stream])
    initial = rng.integers(0, nodes, size=(2, edges), dtype=np.int64)
    added = rng.integers(0, nodes, size=(2, updates), dtype=np.int64)
    return Workload(nodes, initial, added)


# -- the deltalog dataflow ----------------------------------------------------------


class Reachability:
    """reach(root, node) from the roots over the edges, maintained incrementally."""

    def __init__(self):
        self.df = Dataflow()
        self.edges_in, edges = self.df.new_input("edges", 2)
        self.roots_in, roots = self.df.new_input("roots", 1)
        seed = roots.select([0, 0])  # (root, root)
        # The loop variable holds (node, root), keyed by node as the join with edges reads it. It
        # starts empty, so the join reads distinct's output trace one iteration later instead of
        # an arrangement of its own (runtime.trace.delayed), as the compiled plan does.
        (reach,) = iterate(
            [("int", "int")],
            lambda r: [r.join(edges).select([2, 1]).concat(seed).distinct()],  # (node, root, dst) -> (dst, root)
            scope=self.df.root_scope,
        )
        self.cap = reach.select([1, 0]).capture()  # (root, node)
        self.time = 0

    def advance(self, t: int) -> None:
        self.edges_in.advance_to(t)
        self.roots_in.advance_to(t)
        self.time = t
        self.df.step()

    def load(self, edges: np.ndarray) -> None:
        """The initial graph and roots at time 0, run to fixpoint."""
        self.edges_in.update_columns(edges, diff=1, time=0)
        self.roots_in.update_columns(ROOTS.reshape(1, -1), diff=1, time=0)
        self.advance(1)

    def update(self, removed: np.ndarray, added: np.ndarray) -> None:
        """One update (a (2,) removed edge and a (2,) added edge) at the current time."""
        t = self.time
        self.edges_in.update_columns(np.stack([removed, added], axis=1), diff=np.array([-1, 1]), time=t)
        self.advance(t + 1)

    def update_batch(self, removed: np.ndarray, added: np.ndarray) -> None:
        """Updates i = 0..k-1 at their own times self.time + i, in one step."""
        k = removed.shape[1]
        times = self.time + np.arange(k, dtype=np.int64)
        self.edges_in.update_columns(removed, diff=-1, time=times)
        self.edges_in.update_columns(added, diff=1, time=times)
        self.advance(self.time + k)

    def reach_set(self) -> set[tuple[int, int]]:
        contents = self.cap.contents()
        assert all(c == 1 for c in contents.values()), "reach is a set"
        return set(contents)


def run_single_updates(flow: Reachability, removed: np.ndarray, added: np.ndarray, label: str = "", cpu=None) -> np.ndarray:
    """Apply updates one at a time; per-update seconds (and CPU seconds into `cpu`)."""
    n = removed.shape[1]
    latencies = np.empty(n)
    every = max(n // 10, 1) if n >= 5_000 else 0
    start = time.perf_counter()
    for i in range(n):
        c0 = time.process_time()
        t0 = time.perf_counter()
        flow.update(removed[:, i], added[:, i])
        latencies[i] = time.perf_counter() - t0
        if cpu is not None:
            cpu[i] = time.process_time() - c0
        if every and (i + 1) % every == 0 and label:
            elapsed = time.perf_counter() - start
            progress(f"{label}: {i + 1:,}/{n:,} updates, {elapsed:.0f}s, ~{elapsed / (i + 1) * (n - i - 1):.0f}s to go")
    return latencies


def loaded(work: Workload) -> tuple[float, Reachability]:
    flow = Reachability()
    gc.collect()
    seconds, _ = timed(flow.load, work.edges)
    return seconds, flow


# -- workloads ----------------------------------------------------------------------


def single_updates(report: Report, work: Workload, sizes: Sizes) -> None:
    """Workload 1: per-update latency early and after many updates; throughput."""
    size = size_label(*sizes.small)
    _, flow = loaded(work)
    progress(f"1 single: {sizes.updates:,} updates on {size}")
    cpu = np.empty(sizes.updates)
    total, latencies = timed(run_single_updates, flow, work.removed[:, : sizes.updates], work.added[:, : sizes.updates], "1 single", cpu)
    w = min(sizes.window, sizes.updates)
    report.latency("1 single", size, f"latency, updates 1..{w:,}", latency_stats(latencies[:w]), key="p50_first")
    report.latency("1 single", size, f"CPU time, updates 1..{w:,}", latency_stats(cpu[:w]), key="cpu_p50_first")
    if sizes.updates >= 2 * w:
        last = f"{sizes.updates - w + 1:,}..{sizes.updates:,}"
        report.latency("1 single", size, f"latency, updates {last}", latency_stats(latencies[-w:]), key="p50_last")
        report.latency("1 single", size, f"CPU time, updates {last}", latency_stats(cpu[-w:]), key="cpu_p50_last")
        # Both windows replay a random edge stream over the same graph family, but the graph
        # itself differs: how much the answer changes says how much work each window asked.
        early = len(flow.cap.change_batch(1, w + 1)) / w
        late = len(flow.cap.change_batch(sizes.updates - w + 1, sizes.updates + 1)) / w
        report.notes.append(f"workload 1: reach changes per update: {early:.2f} in updates 1..{w:,}, {late:.2f} in updates {last}")
    else:
        report.notes.append(f"workload 1: --updates {sizes.updates:,} is under two windows of {w:,}; no late window")
    report.repeated("1 single", size, "throughput, single updates", [sizes.updates / total], "upd/s", "{:,.0f}", key="single_tput")
    if sizes.updates < ISSUE_UPDATES:
        report.notes.append(
            f"workload 1 ran {sizes.updates:,} updates, not the issue's {ISSUE_UPDATES:,} (--updates); at this run's "
            f"rate {ISSUE_UPDATES:,} would take ~{ISSUE_UPDATES * total / sizes.updates / 60:.0f} min")


def batched_updates(report: Report, work: Workload, sizes: Sizes) -> None:
    """Workload 2: one step for W updates at W distinct times; exact-times check."""
    size = size_label(*sizes.small)
    k = sizes.window
    removed, added = work.slice(0, k)
    progress(f"2 batched: {k:,} updates at distinct times, {sizes.repeats} run(s), then {k:,} single updates for the check")
    rates, flow = [], None
    for _ in range(sizes.repeats):
        _, flow = loaded(work)
        seconds, _ = timed(flow.update_batch, removed, added)
        rates.append(k / seconds)
    report.repeated("2 batched", size, f"throughput, {k:,} times in one step", rates, "upd/s", "{:,.0f}", key="batched_tput")

    _, single = loaded(work)
    run_single_updates(single, removed, added)
    batched_changes = flow.cap.changes(since=1, until=k + 1)
    single_changes = single.cap.changes(since=1, until=k + 1)
    ok = batched_changes == single_changes and flow.time == single.time == k + 1
    report.checks[f"batched changes keep their exact times ({len(single_changes):,} changes)"] = ok
    if not ok:
        a, b = set(batched_changes), set(single_changes)
        report.notes.append(f"batched vs single: {len(a - b)} changes only batched, {len(b - a)} only single, "
                            f"e.g. {sorted(a - b)[:3]} / {sorted(b - a)[:3]}")


def large_graph(report: Report, sizes: Sizes, seed: int) -> None:
    """Workload 3: load the large graph, then ~200 single updates."""
    size = size_label(*sizes.large)
    work = make_workload(*sizes.large, sizes.large_updates, seed, stream=2)
    progress(f"3 large: load {size}")
    seconds, flow = loaded(work)
    report.repeated("3 large", size, "load + fixpoint", [seconds], "s", "{:.2f}", key="large_load")
    report.figures["large_reach"] = len(flow.cap.op.updates())
    progress(f"3 large: {sizes.large_updates} updates")
    latencies = run_single_updates(flow, *work.slice(0, sizes.large_updates))
    report.latency("3 large", size, "latency, single updates", latency_stats(latencies), key="large_p50")


def bulk_load(report: Report, sizes: Sizes, seed: int) -> None:
    """Workload 4: load + fixpoint of the bulk graph."""
    size = size_label(*sizes.bulk)
    work = make_workload(*sizes.bulk, 0, seed, stream=3)
    runs = []
    for rep in range(sizes.repeats):  # as many as DuckDB's recomputes: one run of each swings by a fifth
        progress(f"4 bulk: load {size} ({rep + 1}/{sizes.repeats})")
        seconds, flow = loaded(work)
        runs.append(seconds)
        del flow
    report.repeated("4 bulk", size, "load + fixpoint", runs, "s", "{:.2f}", key="bulk_load")


# -- compiled from Datalog (workload 6) ----------------------------------------------


class CompiledReachability:
    """The same query compiled from examples/reach.dl, driven through the session API."""

    def __init__(self):
        import compiler

        self.session = compiler.compile_file(Path(__file__).resolve().parent.parent / "examples" / "reach.dl").session(capture="outputs")

    def load(self, edges: np.ndarray) -> None:
        self.session.insert("edge", list(map(tuple, edges.T.tolist())))
        self.session.insert("root", [(int(r),) for r in ROOTS])
        self.session.commit()

    def update(self, removed: np.ndarray, added: np.ndarray) -> None:
        self.session.remove("edge", [(int(removed[0]), int(removed[1]))])
        self.session.insert("edge", [(int(added[0]), int(added[1]))])
        self.session.commit()

    def reach_set(self) -> set[tuple[int, int]]:
        return set(self.session.read("reach"))


def compiled_vs_handbuilt(report: Report, work: Workload, sizes: Sizes) -> None:
    """Workload 6: the compiled plan and the hand-built dataflow on the same updates, interleaved."""
    size = size_label(*sizes.small)
    n = sizes.compiled_updates
    progress(f"6 compiled: {n:,} updates on {size}, compiled plan and hand-built dataflow interleaved")
    _, hand = loaded(work)
    compiled = CompiledReachability()
    compiled.load(work.edges)
    lat = {"hand": np.empty(n), "compiled": np.empty(n)}
    same, checked = True, 0
    for i in range(n):
        removed, added = work.removed[:, i], work.added[:, i]
        for which in (("hand", "compiled") if i % 2 == 0 else ("compiled", "hand")):
            flow = hand if which == "hand" else compiled
            t0 = time.perf_counter()
            flow.update(removed, added)
            lat[which][i] = time.perf_counter() - t0
        if (i + 1) % 100 == 0 or i + 1 == n:
            same &= hand.reach_set() == compiled.reach_set()
            checked += 1
        if n >= 1_000 and (i + 1) % (n // 5) == 0:
            progress(f"6 compiled: {i + 1:,}/{n:,} updates")
    report.latency("6 compiled", size, "hand-built dataflow: latency", latency_stats(lat["hand"]), key="hand_p50")
    report.latency("6 compiled", size, "compiled plan (session): latency", latency_stats(lat["compiled"]), key="compiled_p50")
    report.checks[f"compiled reach set == hand-built's ({checked} checkpoints, {len(compiled.reach_set()):,} rows)"] = same
    paired = np.percentile(lat["compiled"] / lat["hand"], [25, 50, 75])
    report.notes.append(f"workload 6: per-update ratio compiled / hand-built on the same update: median {paired[1]:.2f} "
                        f"(quartiles {paired[0]:.2f}–{paired[2]:.2f})")


# -- DuckDB -------------------------------------------------------------------------

REACH_SQL = """
WITH RECURSIVE reach(root, node) AS (
    SELECT r, r FROM roots
    UNION
    SELECT reach.root, edges.dst FROM reach JOIN edges ON reach.node = edges.src
)
"""
COUNT_SQL = REACH_SQL + "SELECT count(*) FROM reach"
ROWS_SQL = REACH_SQL + "SELECT root, node FROM reach"


def duckdb_graph(edges: np.ndarray):
    """An in-memory DuckDB with edges(id, src, dst) and roots(r)."""
    import duckdb

    con = duckdb.connect()
    frame = {"id": np.arange(edges.shape[1], dtype=np.int64), "src": edges[0], "dst": edges[1]}  # noqa: F841
    con.execute("CREATE TABLE edges AS SELECT id, src, dst FROM frame")
    root_frame = {"r": ROOTS}  # noqa: F841
    con.execute("CREATE TABLE roots AS SELECT r FROM root_frame")
    return con


def duckdb_update(con, work: Workload, i: int) -> int:
    """Update i: delete the oldest edge by id, insert the new one, recompute."""
    n = work.edges.shape[1]
    con.execute("DELETE FROM edges WHERE id = ?", [i])
    con.execute("INSERT INTO edges VALUES (?, ?, ?)", [n + i, int(work.added[0, i]), int(work.added[1, i])])
    return con.execute(COUNT_SQL).fetchone()[0]


def duckdb_small(report: Report, work: Workload, sizes: Sizes) -> None:
    """DuckDB recompute per update on the small graph; reach-set check against deltalog."""
    size = size_label(*sizes.small)
    k = sizes.duckdb_updates
    progress(f"5 duckdb: {k} updates on {size}")
    con = duckdb_graph(work.edges)
    con.execute(COUNT_SQL).fetchone()  # warm up
    latencies = np.array([timed(duckdb_update, con, work, i)[0] for i in range(k)])
    report.latency("5 duckdb", size, "update + recompute", latency_stats(latencies), key="duckdb_p50")

    _, flow = loaded(work)
    flow.update_batch(*work.slice(0, k))
    theirs = set(con.execute(ROWS_SQL).fetchall())
    ours = flow.reach_set()
    report.checks[f"DuckDB reach set == deltalog's after {k} updates ({len(ours):,} rows)"] = ours == theirs
    if ours != theirs:
        report.notes.append(f"reach sets: {len(ours - theirs)} rows only deltalog, {len(theirs - ours)} only DuckDB")


def duckdb_recompute(report: Report, label: str, nodes_edges: tuple[int, int], sizes: Sizes, seed: int, stream: int) -> None:
    """DuckDB load time and from-scratch recompute time on a large graph."""
    size = size_label(*nodes_edges)
    work = make_workload(*nodes_edges, 0, seed, stream)
    progress(f"5 duckdb: {label} {size}")
    load, con = timed(duckdb_graph, work.edges)
    runs = [timed(lambda: con.execute(COUNT_SQL).fetchone())[0] for _ in range(sizes.repeats)]
    report.repeated("5 duckdb", size, f"{label}: recompute (load {load:.2f} s)", runs, "s", "{:.2f}", key=f"duckdb_{label}")
    con.close()


# -- output -------------------------------------------------------------------------


def targets(report: Report, sizes: Sizes) -> list[tuple[str, str, str, bool | None]]:
    """(figure, value, target, met) for the roadmap targets present in this run."""
    f = report.figures
    out = []
    if "p50_first" in f and "duckdb_p50" in f:
        ratio = f["p50_first"] / f["duckdb_p50"]
        out.append(("deltalog p50 / DuckDB p50, 1,000-node graph", f"{ratio:.2f}", f"<= {TARGET_RATIO}", ratio <= TARGET_RATIO))
    if "p50_first" in f and "p50_last" in f:
        drift = f["p50_last"] / f["p50_first"] - 1
        label = f"p50 after {sizes.updates:,} vs after {sizes.window:,} updates"
        out.append((label, f"{drift:+.1%}", f"within {TARGET_DRIFT:.0%}", abs(drift) <= TARGET_DRIFT))
    if "cpu_p50_first" in f and "cpu_p50_last" in f:
        # CPU seconds of this process: the same comparison, blind to other load on the machine.
        drift = f["cpu_p50_last"] / f["cpu_p50_first"] - 1
        label = f"CPU p50 after {sizes.updates:,} vs after {sizes.window:,} updates"
        out.append((label, f"{drift:+.1%}", f"within {TARGET_DRIFT:.0%}", abs(drift) <= TARGET_DRIFT))
    if "batched_tput" in f:
        out.append(("batched throughput", f"{f['batched_tput']:,.0f} upd/s", f">= {TARGET_BATCHED:,}", f["batched_tput"] >= TARGET_BATCHED))
    if "compiled_p50" in f:
        ratio = f["compiled_p50"] / f["hand_p50"]
        out.append(("compiled p50 / hand-built p50, same updates", f"{ratio:.2f}", "<= 1.1", ratio <= 1.1))
    if "large_p50" in f and sizes.large == FULL.large:
        out.append((f"single-update p50, {size_label(*sizes.large)}", f"{f['large_p50']:.2f} ms", f"<= {TARGET_LARGE_MS:g} ms",
                    f["large_p50"] <= TARGET_LARGE_MS))
    if "bulk_load" in f and "duckdb_bulk" in f and sizes.bulk == FULL.bulk:
        ratio = f["bulk_load"] / f["duckdb_bulk"]
        out.append(("bulk load + fixpoint / DuckDB's recompute (medians)", f"{ratio:.2f}", f"<= {TARGET_BULK:g}", ratio <= TARGET_BULK))
    return out


def render(report: Report, sizes: Sizes, args) -> None:
    tgts = targets(report, sizes)
    title = f"deltalog reachability benchmark ({'quick' if args.quick else 'full'}, seed {args.seed})"
    try:
        from rich.console import Console
        from rich.table import Table
    except ImportError:
        print(markdown(report, tgts, title))
        return
    console = Console(width=None if sys.stdout.isatty() else 150)
    table = Table(title=title)
    for col in ("workload", "size", "figure", "median / p50", "spread", "n"):
        table.add_column(col, justify="right" if col in ("median / p50", "n") else "left")
    for r in report.rows:
        table.add_row(r.workload, r.size, r.metric, r.median, r.spread, r.n)
    console.print(table)
    checks = Table(title="targets and checks")
    for col in ("figure", "value", "target", "result"):
        checks.add_column(col)
    for name, value, target, met in tgts:
        checks.add_row(name, value, target, "[green]MET[/]" if met else "[red]MISSED[/]")
    for name, ok in report.checks.items():
        checks.add_row(name, "", "", "[green]PASS[/]" if ok else "[red]FAIL[/]")
    if checks.row_count:
        console.print(checks)
    for note in report.notes:
        console.print(f"note: {note}", highlight=False)


def markdown(report: Report, tgts, title: str) -> str:
    lines = [f"### {title}", "", "| workload | size | figure | median / p50 | spread | n |", "|---|---|---|---:|---|---:|"]
    lines += [f"| {r.workload} | {r.size} | {r.metric} | {r.median} | {r.spread} | {r.n} |" for r in report.rows]
    lines += ["", "| target / check | value | target | result |", "|---|---|---|---|"]
    lines += [f"| {n} | {v} | {t} | {'MET' if m else 'MISSED'} |" for n, v, t, m in tgts]
    lines += [f"| {n} | | | {'PASS' if ok else 'FAIL'} |" for n, ok in report.checks.items()]
    lines += [""] + [f"- {note}" for note in report.notes]
    return "\n".join(lines)


def git_revision() -> str:
    """Short commit of the checkout, '+dirty' when runtime/ has uncommitted changes."""
    root = Path(__file__).resolve().parent.parent
    try:
        rev = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=root, capture_output=True, text=True, check=True)
        dirty = subprocess.run(["git", "status", "--porcelain", "runtime"], cwd=root, capture_output=True, text=True)
    except (OSError, subprocess.CalledProcessError):
        return "unknown commit"
    return f"commit {rev.stdout.strip()}{'+dirty' if dirty.stdout.strip() else ''}"


def record(report: Report, sizes: Sizes, args) -> None:
    import duckdb

    stamp = datetime.datetime.now().strftime("%Y-%m-%d %H:%M")
    env = (f"{git_revision()}; Python {platform.python_version()}, numpy {np.__version__}, duckdb {duckdb.__version__}, "
           f"{platform.machine()}, {os.cpu_count()} cores; `python bench/reachability.py {' '.join(args.argv)}`")
    header = "" if RESULTS.exists() else "# Benchmark results\n"
    section = f"{header}\n## Reachability, {stamp}\n\n{env}\n\n{markdown(report, targets(report, sizes), 'Results')}\n"
    with RESULTS.open("a") as fh:
        fh.write(section)
    progress(f"recorded to {RESULTS}")


# -- main ---------------------------------------------------------------------------


def profile_single(n: int, seed: int, top: int = 15) -> None:
    """cProfile n single updates on the small graph; top functions by cumulative time."""
    work = make_workload(*FULL.small, n, seed, stream=1)
    _, flow = loaded(work)
    removed, added = work.slice(0, n)
    prof = cProfile.Profile()
    prof.enable()
    run_single_updates(flow, removed, added)
    prof.disable()
    out = io.StringIO()
    pstats.Stats(prof, stream=out).sort_stats("cumulative").print_stats(top)
    print(out.getvalue())


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--quick", action="store_true", help="small smoke run (well under a minute)")
    p.add_argument("--updates", type=int, help=f"workload 1: total single updates (default {ISSUE_UPDATES:,}; quick {QUICK.updates})")
    p.add_argument("--seed", type=int, default=0, help="seed of graphs and update streams (default 0)")
    p.add_argument("--workloads", type=_workloads, default="1,2,3,4,5,6",
                   help=f"comma list of workloads to run, by number or name ({', '.join(f'{i} {n}' for i, n in enumerate(WORKLOAD_NAMES, 1))}; default all)")
    p.add_argument("--record", action="store_true", help="append a dated section to bench/RESULTS.md")
    p.add_argument("--profile", type=int, metavar="N", help="only cProfile N single updates on the 1,000-node graph")
    return p.parse_args(argv)


WORKLOAD_NAMES = ("single", "batched", "large", "bulk", "duckdb", "compiled")


def _workloads(text: str) -> set[int]:
    """--workloads: numbers 1-6 or names, comma-separated."""
    chosen = set()
    for word in filter(None, (w.strip() for w in text.split(","))):
        if word.isdigit() and 1 <= int(word) <= len(WORKLOAD_NAMES):
            chosen.add(int(word))
        elif word in WORKLOAD_NAMES:
            chosen.add(WORKLOAD_NAMES.index(word) + 1)
        else:
            raise argparse.ArgumentTypeError(f"unknown workload {word!r}: give numbers 1-{len(WORKLOAD_NAMES)} or names {', '.join(WORKLOAD_NAMES)}")
    return chosen


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    args = parse_args(argv)
    args.argv = argv
    if args.profile:
        profile_single(args.profile, args.seed)
        return 0
    sizes = QUICK if args.quick else FULL
    if args.updates is not None:
        sizes = replace(sizes, updates=args.updates)
    chosen = args.workloads
    report = Report()
    progress("compiling runtime kernels, or loading them from numba's cache")
    jit.compile_all()
    small = make_workload(*sizes.small, max(sizes.updates, sizes.window, sizes.duckdb_updates, sizes.compiled_updates), args.seed, stream=1)
    started = time.perf_counter()
    if 1 in chosen:
        single_updates(report, small, sizes)
    if 2 in chosen:
        batched_updates(report, small, sizes)
    if 3 in chosen:
        large_graph(report, sizes, args.seed)
    if 4 in chosen:
        bulk_load(report, sizes, args.seed)
    if 5 in chosen:
        duckdb_small(report, small, sizes)
        duckdb_recompute(report, "large", sizes.large, sizes, args.seed, stream=2)
        duckdb_recompute(report, "bulk", sizes.bulk, sizes, args.seed, stream=3)
    if 6 in chosen:
        compiled_vs_handbuilt(report, small, sizes)
    progress(f"done in {time.perf_counter() - started:.0f}s")
    render(report, sizes, args)
    if args.record:
        record(report, sizes, args)
    return 0 if all(report.checks.values()) else 1


if __name__ == "__main__":
    sys.exit(main())
