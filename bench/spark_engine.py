"""Spark engine benchmark: the same Datalog programs as Spark jobs, in-process, and as Spark's WITH RECURSIVE.

    python bench/spark_engine.py [--repeats 3] [--record] [--peer-python PATH | --no-peer]

Workloads (seeded):

1. tc-graph  -- transitive closure (examples/tc.dl) of a uniform random directed
   graph G(2,000, 6,000) (`--nodes`, `--edges`; duplicates and self-loops kept):
   cyclic, so a UNION ALL recursion never terminates. Spark's WITH RECURSIVE runs
   on its DAG version instead (each edge oriented from the lower to the higher
   id, self-loops dropped): every path is a row there, and their number explodes.
2. tc-forest -- transitive closure of a random forest (`--forest-nodes` nodes,
   `--trees` roots; node i >= trees has a parent drawn uniformly below i), edges
   child -> parent: one path per pair, so UNION ALL gives the set and all three
   engines compute the same relation.
3. sg-forest -- same generation (examples/same_generation.dl, number columns) on
   that forest: each pair has one derivation, so UNION ALL is exact again.

Engines, in the same run on the same data:

- in-process: `compile_datalog` + `session.insert` + `commit()` (wall and CPU);
- Spark engine: `compiler.spark_engine.run_plan` on local[2] (inputs cached and
  counted first, not timed), timing until the outputs are counted; iterations of
  each fixpoint loop, and the time per iteration;
- per-iteration overhead: the Spark engine on a path graph as deep as the
  workload's loop (as many iterations, a handful of rows), time / iterations;
- Spark's own WITH RECURSIVE (UNION ALL) on local[2]: recursive CTEs execute
  from Spark 4.1 (4.0, which deltalog runs on, fails planning them), so the
  peer runs in a separate interpreter that has pyspark 4.1 (`--peer-python`;
  by default bench/.peer-venv, created with `python -m venv` and pip on first
  use). Its recursion limits are Spark's defaults; hitting one is reported.
  On tc-graph it also runs on the cyclic graph itself, to show what happens
  there: UNION ALL keeps one row per path, cycles make the paths endless, so
  the query can only end at one of Spark's recursion limits (reported, with
  the limits' values) or at the bench's guard (`--cyclic-timeout` seconds).

Every answer is checked: Spark engine = in-process rows, and the peer's rows
as a set = the in-process relation of the same input (the DAG version's for
tc-graph), its row count = the set's size where paths are unique.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # run from a checkout without installing
RESULTS = Path(__file__).resolve().parent / "RESULTS.md"
PEER_VENV = Path(__file__).resolve().parent / ".peer-venv"
PEER_SPARK = "pyspark>=4.1,<4.2"

TC = (ROOT / "examples" / "tc.dl").read_text()
SG = (ROOT / "examples" / "same_generation.dl").read_text().replace("symbol", "number")

PEER_SQL = {
    "tc": """WITH RECURSIVE path(x, y) AS (
                 SELECT x, y FROM edge
                 UNION ALL
                 SELECT path.x, edge.y FROM path JOIN edge ON path.y = edge.x)
             SELECT x, y FROM path""",
    "sg": """WITH RECURSIVE sg(x, y) AS (
                 SELECT a.child, b.child FROM parent a JOIN parent b ON a.parent = b.parent WHERE a.child <> b.child
                 UNION ALL
                 SELECT a.child, b.child FROM sg JOIN parent a ON a.parent = sg.x JOIN parent b ON b.parent = sg.y
                 WHERE a.child <> b.child)
             SELECT x, y FROM sg""",
}

# The peer: one query over Parquet tables in an interpreter with pyspark 4.1; prints JSON.
PEER_SCRIPT = r"""
import json, re, sys, time
from pyspark.sql import SparkSession
tables, sql, out = json.loads(sys.argv[1]), sys.argv[2], sys.argv[3]
spark = (SparkSession.builder.master("local[2]").config("spark.ui.enabled", "false")
         .config("spark.ui.showConsoleProgress", "false").config("spark.sql.shuffle.partitions", "4").getOrCreate())
spark.sparkContext.setLogLevel("ERROR")
for name, path in tables.items():
    df = spark.read.parquet(path).cache()
    df.count()
    df.createOrReplaceTempView(name)
def limit(key):
    try:
        return spark.conf.get(key)
    except Exception:  # not a setting of this Spark version
        return "?"
result = {"spark": spark.version, "limits": {k: limit(k) for k in
          ("spark.sql.cteRecursionLevelLimit", "spark.sql.cteRecursionRowLimit")}}
began = time.perf_counter()
try:
    df = spark.sql(sql)
    df.write.mode("overwrite").parquet(out)
    result["seconds"] = time.perf_counter() - began
except Exception as e:
    result["seconds"] = time.perf_counter() - began
    # Py4J's first line only names the failed call; the cause is the line with
    # Spark's error class ([RECURSION_LEVEL_LIMIT_EXCEEDED] ...) or, failing
    # that, the first Java exception.
    lines = [l.strip() for l in str(e).strip().splitlines() if l.strip()]
    cause = next((l for l in lines if re.search(r"\[[A-Z_]+(\.[A-Z_]+)?\]", l)), None) \
        or next((l for l in lines if "Exception" in l), lines[0])
    result["error"] = re.sub(r"^(: |Caused by: )?([\w$]+\.)+[\w$]*(Exception|Error): ", "", cause)[:600]
print("PEER " + json.dumps(result))
spark.stop()
"""


# -- data ---------------------------------------------------------------------------


def random_graph(nodes: int, edges: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return rng.integers(0, nodes, (2, edges), dtype=np.int64)


def dag_version(edge: np.ndarray) -> np.ndarray:
    keep = edge[0] != edge[1]
    return np.vstack([np.minimum(edge[0], edge[1])[keep], np.maximum(edge[0], edge[1])[keep]])


def random_forest(nodes: int, trees: int, seed: int) -> np.ndarray:
    """(child, parent) rows: node i >= trees has a parent drawn uniformly among 0..i-1."""
    rng = np.random.default_rng(seed)
    child = np.arange(trees, nodes, dtype=np.int64)
    return np.vstack([child, (rng.random(nodes - trees) * child).astype(np.int64)])


def rows(block: np.ndarray) -> list[tuple]:
    return list(zip(*(c.tolist() for c in block)))


# -- engines --------------------------------------------------------------------------


def in_process(text: str, inputs: dict, output: str) -> dict:
    import compiler

    program = compiler.compile_datalog(text)
    session = program.session(capture="outputs")
    wall, cpu = time.perf_counter(), time.process_time()
    for name, block in inputs.items():
        session.insert(name, rows(block))
    session.commit()
    result = {"seconds": time.perf_counter() - wall, "cpu": time.process_time() - cpu}
    result["answer"] = set(session.read(output))
    return result


def spark_engine(spark, text: str, inputs: dict, output: str, keep_answer: bool = True) -> dict:
    import compiler
    from compiler.spark_engine import run_plan
    from compiler.spark_engine.relations import schema

    program = compiler.compile_datalog(text)
    frames = {}
    for name, block in inputs.items():
        df = spark.createDataFrame(rows(block), schema(program.relations[name].types)).cache()
        df.count()
        frames[name] = df
    began = time.perf_counter()
    result = run_plan(program.plan, spark, frames)
    out = result.outputs[output].cache()
    count = out.count()
    seconds = time.perf_counter() - began
    answer = {tuple(r) for r in out.collect()} if keep_answer else None
    out.unpersist()
    for df in frames.values():
        df.unpersist()
    iterations = sum(loop.iterations for loop in result.loops)
    return {"seconds": seconds, "rows": count, "iterations": iterations, "methods": [l.method for l in result.loops],
            "answer": answer}


def deep_and_tiny(kind: str, depth: int) -> np.ndarray:
    """A handful of rows needing about `depth` iterations: for tc a path of `depth`
    edges; for sg two chains of `depth` (child, parent) edges hanging from one root."""
    if kind == "tc":
        nodes = np.arange(depth + 1, dtype=np.int64)
        return np.vstack([nodes[:-1], nodes[1:]])
    a = np.arange(1, depth + 1, dtype=np.int64)
    b = a + depth
    return np.vstack([np.concatenate([a, b]), np.concatenate([a - 1, np.concatenate([[0], b[:-1]])])])


def peer_python(args) -> str | None:
    if args.no_peer:
        return None
    if args.peer_python:
        return args.peer_python
    python = PEER_VENV / "bin" / "python"
    if not python.exists():
        print(f"creating {PEER_VENV} with {PEER_SPARK} for the WITH RECURSIVE peer (once)", file=sys.stderr)
        subprocess.run([sys.executable, "-m", "venv", str(PEER_VENV)], check=True)
        subprocess.run([str(python), "-m", "pip", "install", "-q", PEER_SPARK, "pyarrow"], check=True)
    return str(python)


def run_peer(python: str, kind: str, inputs: dict, workdir: Path, timeout: float = 3600) -> dict:
    import pyarrow as pa
    import pyarrow.parquet as pq

    tables = {}
    for name, block in inputs.items():
        cols = ("x", "y") if kind == "tc" else ("child", "parent")
        path = workdir / f"{kind}-{name}.parquet"
        pq.write_table(pa.table({cols[0]: block[0], cols[1]: block[1]}), path)
        tables[name] = str(path)
    out = workdir / f"{kind}-peer-out"
    began = time.perf_counter()
    try:
        proc = subprocess.run([python, "-c", PEER_SCRIPT, json.dumps(tables), PEER_SQL[kind], str(out)],
                              capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return {"error": f"stopped by the bench after {timeout:.0f} s (no answer yet)", "seconds": time.perf_counter() - began}
    line = [l for l in proc.stdout.splitlines() if l.startswith("PEER ")]
    if not line:
        return {"error": f"peer failed (exit {proc.returncode}): {proc.stderr.strip().splitlines()[-1:]}"}
    result = json.loads(line[0][5:])
    if "error" not in result:
        table = pq.read_table(out)
        values = [c.to_pylist() for c in table.columns]
        result["rows"] = table.num_rows
        result["answer"] = set(zip(*values))
    return result


# -- the run ---------------------------------------------------------------------------


def median_spread(samples: list[float]) -> tuple[float, str]:
    med = statistics.median(samples)
    return med, (f"{min(samples):.2f}–{max(samples):.2f} s" if len(samples) > 1 else "")


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--nodes", type=int, default=2000)
    p.add_argument("--edges", type=int, default=6000)
    p.add_argument("--forest-nodes", type=int, default=5000)
    p.add_argument("--trees", type=int, default=100)
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--peer-python", help="an interpreter with pyspark 4.1 for the WITH RECURSIVE peer")
    p.add_argument("--no-peer", action="store_true", help="skip Spark's WITH RECURSIVE")
    p.add_argument("--cyclic-timeout", type=float, default=600, help="seconds before the cyclic WITH RECURSIVE run is stopped")
    p.add_argument("--record", action="store_true", help="append a dated section to bench/RESULTS.md")
    args = p.parse_args()

    from runtime.spark.session import SparkProvider

    graph = random_graph(args.nodes, args.edges, args.seed)
    forest = random_forest(args.forest_nodes, args.trees, args.seed + 1)
    workloads = [
        ("tc-graph", f"G({args.nodes:,}, {args.edges:,}); peer on its DAG version ({dag_version(graph).shape[1]:,} edges)",
         "tc", TC, {"edge": graph}, "path", {"edge": dag_version(graph)}),
        ("tc-forest", f"{args.forest_nodes:,} nodes, {args.trees} trees (child -> parent edges)",
         "tc", TC, {"edge": forest}, "path", None),
        ("sg-forest", f"{args.forest_nodes:,} nodes, {args.trees} trees", "sg", SG, {"parent": forest}, "sg", None),
    ]  # None: the peer reads the same inputs (paths are unique, so UNION ALL computes the set)
    python = peer_python(args)
    provider = SparkProvider("local[2]", {})
    spark = provider.get()
    table, checks, notes = [], [], []
    try:
        with tempfile.TemporaryDirectory() as tmp:
            for name, sizes, kind, text, inputs, output, peer_inputs in workloads:
                print(f"{name}: in-process", file=sys.stderr)
                local = [in_process(text, inputs, output) for _ in range(args.repeats)]
                answer = local[0]["answer"]
                print(f"{name}: Spark engine", file=sys.stderr)
                remote = [spark_engine(spark, text, inputs, output, keep_answer=(i == 0)) for i in range(args.repeats)]
                iterations = remote[0]["iterations"]
                checks.append((f"{name}: Spark engine rows = in-process rows ({len(answer):,})", remote[0]["answer"] == answer))
                depth = max(iterations - 1, 1)
                tiny_inputs = {k: deep_and_tiny(kind, depth) for k in inputs}
                tiny = [spark_engine(spark, text, tiny_inputs, output, keep_answer=False) for _ in range(args.repeats)]
                wall, spread = median_spread([r["seconds"] for r in local])
                cpu = statistics.median(r["cpu"] for r in local)
                table.append((name, sizes, "in-process: insert + commit", f"{wall:.2f} s", spread, f"{len(answer):,} rows; CPU {cpu:.2f} s"))
                swall, sspread = median_spread([r["seconds"] for r in remote])
                table.append((name, "", f"Spark engine, local[2] ({', '.join(remote[0]['methods'])})", f"{swall:.2f} s", sspread,
                              f"{iterations} iterations, {swall / iterations:.2f} s each"))
                twall, tspread = median_spread([r["seconds"] for r in tiny])
                table.append((name, f"{tiny_inputs[next(iter(tiny_inputs))].shape[1]} rows, {depth} deep", "Spark engine: per-iteration overhead",
                              f"{twall / tiny[0]['iterations']:.2f} s", "",
                              f"{tiny[0]['iterations']} iterations in {twall:.2f} s"))
                if python:
                    print(f"{name}: Spark WITH RECURSIVE (peer)", file=sys.stderr)
                    peer = run_peer(python, kind, peer_inputs or inputs, Path(tmp))
                    version = peer.get("spark", "?")
                    label = f"Spark {version} WITH RECURSIVE (UNION ALL){' on the DAG version' if peer_inputs else ''}"
                    if "error" in peer:
                        table.append((name, "", label, f"{peer.get('seconds', 0):.2f} s", "", f"failed: {peer['error']}"))
                    elif peer_inputs is None:
                        table.append((name, "", label, f"{peer['seconds']:.2f} s", "", f"{peer['rows']:,} rows"))
                        checks.append((f"{name}: WITH RECURSIVE rows = in-process set, no duplicates", peer["answer"] == answer and peer["rows"] == len(answer)))
                    else:  # the DAG version: compare with the in-process relation of the same edges
                        dag = in_process(text, peer_inputs, output)["answer"]
                        table.append((name, "", label, f"{peer['seconds']:.2f} s", "",
                                      f"{peer['rows']:,} rows: one per path, {len(dag):,} distinct pairs"))
                        checks.append((f"{name}: WITH RECURSIVE rows on the DAG version, as a set = in-process on it ({len(dag):,})",
                                       peer["answer"] == dag))
                    if peer_inputs:  # and on the cyclic input itself
                        print(f"{name}: Spark WITH RECURSIVE on the cyclic graph (peer, guarded)", file=sys.stderr)
                        cyclic = run_peer(python, kind, inputs, Path(tmp), timeout=args.cyclic_timeout)
                        limits = ", ".join(f"{k.split('.')[-1]} {v}" for k, v in peer.get("limits", {}).items())
                        outcome = (f"did not finish: {cyclic['error']}" if "error" in cyclic
                                   else f"finished: {cyclic['rows']:,} rows (unexpected on a cyclic graph)")
                        table.append((name, "cyclic, as given", f"Spark {version} WITH RECURSIVE (UNION ALL)",
                                      f"{cyclic.get('seconds', 0):.2f} s", "", f"{outcome}; limits: {limits}"))
    finally:
        provider.stop()
    render(table, checks, notes, args)


def render(table, checks, notes, args) -> None:
    lines = ["| workload | sizes | engine | median | spread | notes |", "|---|---|---|---:|---|---|"]
    lines += ["| " + " | ".join(c.replace("|", "/") for c in r) + " |" for r in table]
    lines += ["", "| check | result |", "|---|---|"]
    lines += [f"| {c} | {'PASS' if ok else 'FAIL'} |" for c, ok in checks]
    text = "\n".join(lines)
    print(text)
    if args.record:
        import pyspark

        commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True).stdout.strip()
        dirty = subprocess.run(["git", "status", "--porcelain", "--", "runtime", "compiler"], cwd=ROOT, capture_output=True, text=True).stdout.strip()
        load = os.getloadavg()
        header = (f"\n## Spark engine, {datetime.datetime.now():%Y-%m-%d %H:%M}\n\n"
                  f"commit {commit}{' + uncommitted changes' if dirty else ''}; Python {platform.python_version()}, pyspark {pyspark.__version__}"
                  f" (engine), {platform.machine()}, {os.cpu_count()} cores, load average {load[0]:.1f} / {load[1]:.1f} / {load[2]:.1f} at the end;"
                  f" `python bench/spark_engine.py {' '.join(a for a in sys.argv[1:] if a != '--record')}`\n\n")
        with open(RESULTS, "a") as f:
            f.write(header + text + "\n")
    if not all(ok for _, ok in checks):
        sys.exit(1)


if __name__ == "__main__":
    main()
