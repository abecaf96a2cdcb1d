"""CLI benchmark: `deltalog run` stage by stage, both readers, Parquet and CSV output, against DuckDB.

Workloads (inputs written as Parquet into a temporary directory first):

- tc-2k      -- transitive closure (examples/tc.dl) on G(2,000, 6,000), the
  seeded uniform random graph of bench/datalog.py (3.56M answer rows);
- reach-100k -- reachability from 10 roots (examples/reach.dl) on a uniform
  random graph of 100,000 nodes and 200,000 edges;
- reach-200k -- the same on 200,000 nodes and 400,000 edges.

Each is run as a user runs it, one fresh process per run:
`python -m compiler.cli run PROGRAM --input-dir DIR --output-dir OUT --format F
--reader R --timings --quiet`, for both readers (spark: Spark reads and writes;
arrow: pyarrow reads and writes, Spark never starts) and both output formats
(parquet, csv). The table shows the process's wall clock and the stages its
`--timings` line reports (spark start, read, compile, compute, write). The peer
in the same run is DuckDB doing the CLI's job in a fresh Python process:
read the Parquet tables, evaluate the recursive CTE, write the answer as
Parquet (`COPY ... TO`), timed from process start like the CLI.

Checks: every run's output has DuckDB's number of rows. Targets (issue 18), on
tc-2k with Parquet output: write <= 3 s with both readers; with `--reader arrow`
the whole run <= compute + 3 s; with Spark <= compute + spark start + 6 s
(compute includes kernel compiles, which happen on a first run only).

    python bench/cli.py                      # every workload, 1 repeat
    python bench/cli.py --workloads tc-2k --repeats 3
"""

from __future__ import annotations

import argparse
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.datalog import TC, WORKLOADS, State  # noqa: E402

REACH_CTE = """
WITH RECURSIVE reach(r, n) AS (
    SELECT r, r FROM root
    UNION
    SELECT reach.r, edge.dst FROM reach JOIN edge ON reach.n = edge.src
)"""
PROGRAMS = {"tc": ("tc.dl", "path", TC.cte), "reach": ("reach.dl", "reach", REACH_CTE)}
SIZES = {"tc-2k": ("tc", None), "reach-100k": ("reach", (100_000, 200_000)), "reach-200k": ("reach", (200_000, 400_000))}
STAGES = ("spark start", "read", "compile", "compute", "write")


def make_inputs(workload: str, directory: Path, seed: int) -> None:
    program, sizes = SIZES[workload]
    directory.mkdir(parents=True)
    if program == "tc":
        x, y = State(WORKLOADS["tc-2k"], seed).rels["edge"]
        pq.write_table(pa.table({"x": x, "y": y}), directory / "edge.parquet")
        return
    nodes, edges = sizes
    rng = np.random.default_rng([seed, nodes])
    pq.write_table(pa.table({"src": rng.integers(0, nodes, edges), "dst": rng.integers(0, nodes, edges)}), directory / "edge.parquet")
    pq.write_table(pa.table({"r": np.arange(10, dtype=np.int64)}), directory / "root.parquet")


def run_cli(workload: str, data: Path, out: Path, reader: str, fmt: str) -> dict:
    source, output, _ = PROGRAMS[SIZES[workload][0]]
    command = [sys.executable, "-m", "compiler.cli", "run", str(ROOT / "examples" / source), "--input-dir", str(data),
               "--output-dir", str(out), "--format", fmt, "--reader", reader, "--timings", "--quiet"]
    began = time.perf_counter()
    done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True)
    wall = time.perf_counter() - began
    if done.returncode != 0:
        raise SystemExit(f"deltalog failed: {done.stderr}")
    line = next(l for l in done.stderr.splitlines() if l.startswith("timings:"))
    stages = {name: float(seconds) for name, seconds in re.findall(r"([a-z ]+?) ([0-9.]+)s", line.split(":", 1)[1].split(";")[0])}
    stages = {name.strip(" ,"): seconds for name, seconds in stages.items()}
    return {"wall": wall, **stages, "rows": output_rows(out / output, fmt)}


def output_rows(directory: Path, fmt: str) -> int:
    parts = [p for p in directory.iterdir() if p.name.startswith("part-") and not p.name.endswith(".crc")]
    if fmt == "parquet":
        return sum(pq.ParquetFile(p).metadata.num_rows for p in parts)
    return sum(max(sum(1 for _ in open(p, encoding="utf-8")) - 1, 0) for p in parts)  # minus each part's header


DUCKDB_JOB = """
import os, sys, duckdb
data, out, cte, output = sys.argv[1:]
con = duckdb.connect()
con.execute("SET enable_progress_bar = false")
for name in ("edge", "root"):
    if os.path.exists(f"{data}/{name}.parquet"):
        con.execute(f"CREATE VIEW {name} AS SELECT * FROM read_parquet('{data}/{name}.parquet')")
con.execute(f"COPY ({cte} SELECT * FROM {output}) TO '{out}' (FORMAT parquet)")
print(con.execute(f"SELECT count(*) FROM read_parquet('{out}')").fetchone()[0])
"""


def run_duckdb(workload: str, data: Path, out: Path) -> dict:
    _, output, cte = PROGRAMS[SIZES[workload][0]]
    began = time.perf_counter()
    done = subprocess.run([sys.executable, "-c", DUCKDB_JOB, str(data), str(out), cte, output], capture_output=True, text=True)
    wall = time.perf_counter() - began
    if done.returncode != 0:
        raise SystemExit(f"duckdb failed: {done.stderr}")
    return {"wall": wall, "rows": int(done.stdout.strip())}


def median(samples: list[dict], key: str) -> str:
    values = [s[key] for s in samples if key in s]
    if not values:
        return "-"
    m = statistics.median(values)
    spread = f" ({min(values):.2f}-{max(values):.2f})" if len(values) > 1 else ""
    return f"{m:.2f}{spread}"


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--workloads", nargs="+", choices=sorted(SIZES), default=list(SIZES))
    p.add_argument("--repeats", type=int, default=1)
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args(argv)
    rows, failures = [], []
    with tempfile.TemporaryDirectory(prefix="deltalog-bench-cli-") as tmp:
        tmp = Path(tmp)
        for workload in args.workloads:
            data = tmp / workload / "in"
            make_inputs(workload, data, args.seed)
            peer = [run_duckdb(workload, data, tmp / workload / f"duck{i}.parquet") for i in range(args.repeats)]
            expected = peer[0]["rows"]
            rows.append((workload, "duckdb", "parquet", peer))
            for reader in ("arrow", "spark"):
                for fmt in ("parquet", "csv"):
                    runs = []
                    for i in range(args.repeats):
                        print(f"{workload}: {reader} reader, {fmt} ({i + 1}/{args.repeats})", file=sys.stderr, flush=True)
                        runs.append(run_cli(workload, data, tmp / workload / f"out-{reader}-{fmt}-{i}", reader, fmt))
                        if runs[-1]["rows"] != expected:
                            failures.append(f"{workload} {reader} {fmt}: {runs[-1]['rows']} rows, DuckDB {expected}")
                    rows.append((workload, reader, fmt, runs))
    print("| workload | run | output | wall s | " + " | ".join(f"{s} s" for s in STAGES) + " | rows |")
    print("|---|---|---|---:|" + "---:|" * len(STAGES) + "---:|")
    for workload, who, fmt, runs in rows:
        stages = " | ".join(median(runs, s) for s in STAGES)
        print(f"| {workload} | {who} | {fmt} | {median(runs, 'wall')} | {stages} | {runs[0]['rows']:,} |")
    for line in targets(rows):
        print(line)
    for failure in failures:
        print(f"CHECK FAILED: {failure}")
    return 1 if failures else 0


def targets(rows) -> list[str]:
    """Issue 18's targets on tc-2k with Parquet output (medians)."""
    found = []
    for workload, who, fmt, runs in rows:
        if workload != "tc-2k" or fmt != "parquet" or who == "duckdb":
            continue
        med = {k: statistics.median(r.get(k, 0.0) for r in runs) for k in ("wall", "write", "compute", "compile", "spark start")}
        compute = med["compute"] + med["compile"]
        found.append(f"target tc-2k {who}: write {med['write']:.2f}s <= 3s: {'met' if med['write'] <= 3 else 'MISSED'}")
        limit = compute + 3 if who == "arrow" else compute + med["spark start"] + 6
        what = "compute + 3s" if who == "arrow" else "compute + spark start + 6s"
        found.append(f"target tc-2k {who}: run {med['wall']:.2f}s <= {what} = {limit:.2f}s: {'met' if med['wall'] <= limit else 'MISSED'}")
    return found


if __name__ == "__main__":
    raise SystemExit(main())
