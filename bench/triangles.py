"""Triangles benchmark: the delta-query plan against the binary-join plan, and DuckDB, in one run.

The query (Datalog, compiled with `compiler.compile_datalog(..., join_plan=...)`):

    tri(a, b, c) :- edge(a, b), edge(b, c), edge(a, c).

The graph is skewed so that every binary join order materialises millions of
two-paths: node 0 is a hub with `--hub` out-neighbours (1..H) and `--hub`
in-neighbours (H+1..2H), so the paths in -> hub -> out alone number H*H
(4,000,000 for H = 2,000), plus `--random` uniform random edges among the
neighbours (which close some of those paths into triangles). The binary plan
arranges the two-paths `edge(a,b), edge(b,c)` by (a, c) to join them with
`edge(a,c)`; the delta plan arranges only `edge` (by source, by target, by
both) and streams each change through lookups.

Each plan runs in its own subprocess (so peak memory is its own): load the
whole graph at time 0 and commit, then `--updates` single-edge updates, each
committed alone (two inserts of a random edge in -> out, which turn two-paths
through the hub into triangles, then the removal of an edge inserted before).
Figures per plan:

- load: seconds to commit the initial graph;
- peak memory: the process's peak RSS (ru_maxrss) minus its RSS just before
  the load (interpreter, numba kernels and the generated graph excluded);
- maintained records: updates held in all arrangements (traces) after the load
  and after the updates (captures of the output excluded);
- update latency: per single-edge update (insert/remove + commit), p50 and p90.

DuckDB (same run, in-process): the same three-way join counted on the same
graph (`count(*)`), median of 3, and the same per-update loop (DELETE/INSERT
then recount) as its update latency. Checks: both plans and DuckDB find the
same number of triangles after the load and after the updates.

    python bench/triangles.py --quick         # small hub (smoke run)
    python bench/triangles.py --record        # the issue's sizes; append to bench/RESULTS.md

Targets (issue 15): the delta plan's load <= 3x DuckDB's three-way join; its
peak memory and maintained records <= 1/10 of the binary plan's. With
`--record`, the load average (/proc/loadavg) before and after the run is
written beside the figures: the machine is shared.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import resource
import statistics
import subprocess
import sys
import time

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

PROGRAM = """
.decl edge(a: number, b: number)
.input edge
tri(a, b, c) :- edge(a, b), edge(b, c), edge(a, c).
.output tri
"""


def graph(hub: int, random_edges: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    out_n = np.arange(1, hub + 1)
    in_n = np.arange(hub + 1, 2 * hub + 1)
    src = np.concatenate([np.zeros(hub, np.int64), in_n, rng.integers(1, 2 * hub + 1, random_edges)])
    dst = np.concatenate([out_n, np.zeros(hub, np.int64), rng.integers(1, 2 * hub + 1, random_edges)])
    edges = np.unique(np.stack([src, dst], axis=1), axis=0)
    return edges[edges[:, 0] != edges[:, 1]]


def updates(edges: np.ndarray, hub: int, n: int, seed: int) -> list[tuple[str, tuple[int, int]]]:
    """Insert two new in -> out edges (closing hub two-paths), remove an earlier insert; repeat."""
    rng = np.random.default_rng(seed + 1)
    present = set(map(tuple, edges.tolist()))
    out, inserted = [], []
    while len(out) < n:
        if len(out) % 3 != 2 or not inserted:
            e = (int(rng.integers(hub + 1, 2 * hub + 1)), int(rng.integers(1, hub + 1)))
            if e in present:
                continue
            present.add(e)
            inserted.append(e)
            out.append(("insert", e))
        else:
            e = inserted.pop(int(rng.integers(0, len(inserted))))
            present.discard(e)
            out.append(("remove", e))
    return out


def rss_mb() -> float:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return float("nan")


def maintained(dataflow) -> int:
    from runtime.operators.capture import CaptureOp
    from runtime.trace import Trace

    traces = {}
    for op in dataflow.ops:
        if isinstance(op, CaptureOp):
            continue
        for value in vars(op).values():
            if isinstance(value, Trace):
                traces[id(value)] = value
    return sum(len(t) for t in traces.values())


def run_plan(plan: str, hub: int, random_edges: int, n_updates: int, seed: int) -> dict:
    """One plan in this process: load, then single-edge updates. Returns the figures."""
    import compiler
    from runtime import jit

    edges = graph(hub, random_edges, seed)
    ups = updates(edges, hub, n_updates, seed)
    program = compiler.compile_datalog(PROGRAM, join_plan=plan)
    # Warm the numba kernels (all of them: they compile at first call) and the
    # operators on a tiny graph first (not measured).
    jit.compile_all()
    warm = program.session(capture="outputs")
    warm.insert("edge", [(1, 2), (2, 3), (1, 3)])
    warm.commit()
    del warm
    session = program.session(capture="outputs")
    base = rss_mb()
    peak_before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    start = time.perf_counter()
    session.insert("edge", [tuple(e) for e in edges.tolist()])
    session.commit()
    load = time.perf_counter() - start
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    after_load = maintained(session.dataflow)
    triangles_load = len(session.read("tri"))
    lat = []
    for kind, e in ups:
        t0 = time.perf_counter()
        (session.insert if kind == "insert" else session.remove)("edge", [e])
        session.commit()
        lat.append(time.perf_counter() - t0)
    peak = max(peak, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)
    return {
        "plan": plan,
        "edges": int(len(edges)),
        "load_s": load,
        "peak_mb": peak - max(base, peak_before) if peak > peak_before else 0.0,
        "records_load": after_load,
        "records_end": maintained(session.dataflow),
        "triangles_load": triangles_load,
        "triangles_end": len(session.read("tri")),
        "latency_ms": [x * 1e3 for x in lat],
    }


def run_duckdb(hub: int, random_edges: int, n_updates: int, seed: int) -> dict:
    import duckdb

    edges = graph(hub, random_edges, seed)
    ups = updates(edges, hub, n_updates, seed)
    con = duckdb.connect()
    con.execute("CREATE TABLE edge(a BIGINT, b BIGINT)")
    import pyarrow as pa

    con.register("frame", pa.table({"a": edges[:, 0], "b": edges[:, 1]}))
    con.execute("INSERT INTO edge SELECT a, b FROM frame")
    query = (
        "SELECT count(*) FROM edge e1 JOIN edge e2 ON e1.b = e2.a "
        "JOIN edge e3 ON e3.a = e1.a AND e3.b = e2.b"
    )
    times = []
    for _ in range(3):
        t0 = time.perf_counter()
        count_load = con.execute(query).fetchone()[0]
        times.append(time.perf_counter() - t0)
    lat = []
    for kind, (a, b) in ups:
        t0 = time.perf_counter()
        if kind == "insert":
            con.execute("INSERT INTO edge VALUES (?, ?)", [a, b])
        else:
            con.execute("DELETE FROM edge WHERE a = ? AND b = ?", [a, b])
        count = con.execute(query).fetchone()[0]
        lat.append((time.perf_counter() - t0) * 1e3)
    return {"query_s": times, "triangles_load": count_load, "triangles_end": count, "latency_ms": lat}


def loadavg() -> str:
    """The 1-, 5- and 15-minute load averages (the machine is shared)."""
    with open("/proc/loadavg") as f:
        return " / ".join(f.read().split()[:3])


def pct(xs, q):
    return float(np.percentile(np.asarray(xs), q)) if xs else float("nan")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--hub", type=int, default=2000)
    ap.add_argument("--random", type=int, default=5000)
    ap.add_argument("--updates", type=int, default=100)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--quick", action="store_true", help="hub 300, 1,000 random edges, 20 updates")
    ap.add_argument("--record", action="store_true", help="append a dated section to bench/RESULTS.md")
    ap.add_argument("--child", choices=("delta", "binary"), help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.quick:
        args.hub, args.random, args.updates = 300, 1000, 20
    if args.child:
        print(json.dumps(run_plan(args.child, args.hub, args.random, args.updates, args.seed)))
        return 0

    load_before = loadavg()
    results = {}
    for plan in ("delta", "binary"):
        print(f"running the {plan} plan ...", file=sys.stderr)
        cmd = [sys.executable, os.path.abspath(__file__), "--child", plan, "--hub", str(args.hub), "--random",
               str(args.random), "--updates", str(args.updates), "--seed", str(args.seed)]
        done = subprocess.run(cmd, capture_output=True, text=True, check=True)
        results[plan] = json.loads(done.stdout.strip().splitlines()[-1])
    print("running duckdb ...", file=sys.stderr)
    duck = run_duckdb(args.hub, args.random, args.updates, args.seed)

    d, b = results["delta"], results["binary"]
    size = f"hub {args.hub:,} in / {args.hub:,} out, {d['edges']:,} edges"
    rows = []
    for r in (d, b):
        lat = r["latency_ms"]
        rows.append((f"deltalog {r['plan']}", "load (commit of the whole graph)", f"{r['load_s']:.3f} s", "(1 run)", 1))
        rows.append((f"deltalog {r['plan']}", "peak memory over the load (RSS)", f"{r['peak_mb']:,.0f} MB", "(1 run)", 1))
        rows.append((f"deltalog {r['plan']}", "maintained records after load / after updates",
                     f"{r['records_load']:,}", f"{r['records_end']:,} after", 1))
        rows.append((f"deltalog {r['plan']}", "update latency (1 edge + commit)", f"{statistics.median(lat):.2f} ms",
                     f"p90 {pct(lat, 90):.2f} ms", len(lat)))
    q = duck["query_s"]
    rows.append(("duckdb", "three-way join count(*)", f"{statistics.median(q):.3f} s", f"{min(q):.3f}–{max(q):.3f} s", 3))
    lat = duck["latency_ms"]
    rows.append(("duckdb", "update latency (1 edge + recount)", f"{statistics.median(lat):.2f} ms",
                 f"p90 {pct(lat, 90):.2f} ms", len(lat)))
    table = ["| engine / plan | size | figure | median | spread | n |", "|---|---|---|---:|---|---:|"]
    table += [f"| {e} | {size} | {f} | {m} | {s} | {n} |" for e, f, m, s, n in rows]

    load_ratio = d["load_s"] / statistics.median(q)
    mem_ratio = d["peak_mb"] / b["peak_mb"] if b["peak_mb"] else float("nan")
    rec_ratio = d["records_load"] / b["records_load"]
    same_load = d["triangles_load"] == b["triangles_load"] == duck["triangles_load"]
    same_end = d["triangles_end"] == b["triangles_end"] == duck["triangles_end"]
    checks = ["| target / check | value | target | result |", "|---|---|---|---|"]
    checks.append(f"| delta load / DuckDB three-way join | {load_ratio:.2f}x | <= 3x | {'MET' if load_ratio <= 3 else 'MISSED'} |")
    checks.append(f"| delta / binary peak memory | {mem_ratio:.3f} | <= 0.1 | {'MET' if mem_ratio <= 0.1 else 'MISSED'} |")
    checks.append(f"| delta / binary maintained records (after load) | {rec_ratio:.4f} | <= 0.1 | {'MET' if rec_ratio <= 0.1 else 'MISSED'} |")
    checks.append(f"| triangles after load: delta = binary = DuckDB ({d['triangles_load']:,}) | | | {'PASS' if same_load else 'FAIL'} |")
    checks.append(f"| triangles after updates: delta = binary = DuckDB ({d['triangles_end']:,}) | | | {'PASS' if same_end else 'FAIL'} |")
    out = "\n".join(table) + "\n\n" + "\n".join(checks)
    print(out)
    if args.record:
        commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True).stdout.strip()
        import duckdb

        stamp = datetime.datetime.now().strftime("%Y-%m-%d %H:%M")
        head = (f"\n## Triangles (delta query vs binary joins), {stamp}\n\ncommit {commit}; Python {platform.python_version()}, "
                f"numpy {np.__version__}, duckdb {duckdb.__version__}, {platform.machine()}, {os.cpu_count()} cores, "
                f"load average {load_before} before the run and {loadavg()} after it; "
                f"`python bench/triangles.py {' '.join(sys.argv[1:])}`\n\n")
        with open(os.path.join(ROOT, "bench", "RESULTS.md"), "a") as f:
            f.write(head + out + "\n")
    return 0 if same_load and same_end else 1


if __name__ == "__main__":
    sys.exit(main())
