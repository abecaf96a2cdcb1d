"""Data-flow benchmark: examples/dataflow.dl on a generated program, beside DuckDB.

The workload is examples/dataflow.dl (reaching definitions and possibly-undefined
variables by a gen/kill component, def-use chains as records, findings as an ADT) on
a generated program of `--methods` methods (default 2,000: about 116,000 facts), each
of 25 statements in a chain with random forward branches (15% of statements) and
loops back (5%), 6 local variables, an assignment at 40% of the statements and a
read at 50%, all seeded.

Measured, in one run:

- CLI: `deltalog run examples/dataflow.dl --facts-dir DIR --reader arrow --format csv`
  on the generated fact files (wall clock of the subprocess, compiling and Python's
  start included); its outputs -- records and ADT values in Soufflé's text -- are
  read back and must equal DuckDB's answer.
- batch: in process, `session.insert` of every input relation + `session.commit()`
  (compiling excluded), median and spread over `--repeats` fresh sessions; DuckDB:
  the same answer as two recursive CTEs (one per gen/kill instance) and the def-use
  and finding queries over them, on tables loaded beforehand.
- update: `--updates` rounds, each removing 1% of the rows of `cfg_edge`, `assigns`
  and `reads` (chosen uniformly) and inserting as many new ones (same distribution),
  in one commit; DuckDB: DELETE + INSERT of the same rows, then the queries again.

After the batch and after the last update, deltalog's def_use and finding equal
DuckDB's (row counts and sets); exit status 1 if not.

    python bench/dataflow.py [--methods 2000] [--repeats 3] [--updates 3]
"""

from __future__ import annotations

import argparse
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # run from a checkout without installing

PROGRAM = ROOT / "examples" / "dataflow.dl"
NODES, VARS = 25, 6  # statements and local variables per method
INPUTS = ("cfg_edge", "entry", "local", "assigns", "reads")
UPDATED = ("cfg_edge", "assigns", "reads")
UPDATE_FRACTION = 0.01


# ---- the generated program -------------------------------------------------------------------


def variables(method: int) -> list[int]:
    return [method * 100 + k for k in range(VARS)]


def new_row(relation: str, rnd: random.Random, methods: int) -> tuple[int, int]:
    """A random row of `relation`, as the generator draws them."""
    m = rnd.randrange(methods)
    i = rnd.randrange(NODES - 1)
    if relation == "cfg_edge":
        return m * NODES + i, m * NODES + min(NODES - 1, i + rnd.randint(2, 5))
    return m * NODES + i, rnd.choice(variables(m))


def generate(methods: int, seed: int = 1) -> dict[str, list[tuple[int, int]]]:
    rnd = random.Random(seed)
    rel = {name: set() for name in INPUTS}
    for m in range(methods):
        base, vs = m * NODES, variables(m)
        rel["entry"].add((base, m))
        rel["local"].update((m, v) for v in vs)
        for i in range(NODES):
            if i < NODES - 1:
                rel["cfg_edge"].add((base + i, base + i + 1))
                if rnd.random() < 0.15:
                    rel["cfg_edge"].add((base + i, base + min(NODES - 1, i + rnd.randint(2, 5))))
                if rnd.random() < 0.05 and i > 3:
                    rel["cfg_edge"].add((base + i, base + i - rnd.randint(1, 3)))
            if rnd.random() < 0.4:
                rel["assigns"].add((base + i, rnd.choice(vs)))
            if rnd.random() < 0.5:
                rel["reads"].add((base + i, rnd.choice(vs)))
    return {name: sorted(rows) for name, rows in rel.items()}


def update(rel: dict, rnd: random.Random, methods: int) -> tuple[dict, dict]:
    """Replace 1% of the rows of the updated relations: (removed, added) per relation."""
    removed, added = {}, {}
    for name in UPDATED:
        present = set(rel[name])
        k = max(1, round(UPDATE_FRACTION * len(present)))
        gone = rnd.sample(sorted(present), k)
        present -= set(gone)
        new = set()
        while len(new) < k:
            row = new_row(name, rnd, methods)
            if row not in present:
                new.add(row)
        removed[name], added[name] = gone, sorted(new)
        rel[name] = sorted(present | new)
    return removed, added


def write_facts(rel: dict, directory: Path) -> None:
    directory.mkdir(parents=True, exist_ok=True)
    for name, rows in rel.items():
        (directory / f"{name}.facts").write_text("".join(f"{a}\t{b}\n" for a, b in rows))


# ---- DuckDB -------------------------------------------------------------------------------------

COLUMNS = {"cfg_edge": ("a", "b"), "entry": ("n", "m"), "local": ("m", "v"), "assigns": ("n", "v"), "reads": ("n", "v")}

# rd_out(n, site, var): definition [site, var] holds after n; und_out(n, v): v may be undefined after n.
QUERIES = """
WITH RECURSIVE rd_out(n, site, var) AS (
    SELECT n, n, v FROM assigns
    UNION
    SELECT e.b, o.site, o.var FROM rd_out o JOIN cfg_edge e ON e.a = o.n
    WHERE NOT EXISTS (SELECT 1 FROM assigns k WHERE k.n = e.b AND k.v = o.var)
),
und_out(n, v) AS (
    SELECT e.n, l.v FROM entry e JOIN local l ON l.m = e.m
    WHERE NOT EXISTS (SELECT 1 FROM assigns k WHERE k.n = e.n AND k.v = l.v)
    UNION
    SELECT e.b, o.v FROM und_out o JOIN cfg_edge e ON e.a = o.n
    WHERE NOT EXISTS (SELECT 1 FROM assigns k WHERE k.n = e.b AND k.v = o.v)
),
def_use AS (
    SELECT DISTINCT o.site, o.var, r.n AS u FROM reads r JOIN cfg_edge e ON e.b = r.n JOIN rd_out o ON o.n = e.a AND o.var = r.v
),
uninitialized AS (
    SELECT DISTINCT r.n, r.v FROM reads r JOIN cfg_edge e ON e.b = r.n JOIN und_out o ON o.n = e.a AND o.v = r.v
),
dead AS (
    SELECT a.n, a.v FROM assigns a WHERE NOT EXISTS (SELECT 1 FROM def_use d WHERE d.site = a.n AND d.var = a.v)
)
SELECT 'def_use', site, var, u FROM def_use
UNION ALL SELECT 'uninitialized', n, v, NULL FROM uninitialized
UNION ALL SELECT 'dead', n, v, NULL FROM dead
"""


def _arrow(rows: list, c0: str, c1: str):
    import pyarrow as pa

    return pa.table({c0: pa.array([a for a, _ in rows], pa.int64()), c1: pa.array([b for _, b in rows], pa.int64())})


def duckdb_load(rel: dict):
    import duckdb

    con = duckdb.connect()
    for name, (c0, c1) in COLUMNS.items():
        con.register("rows", _arrow(rel[name], c0, c1))
        con.execute(f"CREATE TABLE {name} AS SELECT * FROM rows")
        con.unregister("rows")
    return con


def duckdb_apply(con, removed: dict, added: dict) -> None:
    for name in UPDATED:
        c0, c1 = COLUMNS[name]
        con.register("gone", _arrow(removed[name], c0, c1))
        con.execute(f"DELETE FROM {name} WHERE ({c0}, {c1}) IN (SELECT ({c0}, {c1}) FROM gone)")
        con.register("new", _arrow(added[name], c0, c1))
        con.execute(f"INSERT INTO {name} SELECT * FROM new")
        con.unregister("gone")
        con.unregister("new")


def duckdb_answer(con) -> tuple[set, set]:
    def_use, findings = set(), set()
    for kind, a, b, u in con.execute(QUERIES).fetchall():
        if kind == "def_use":
            def_use.add(((a, b), u))
        else:
            findings.add((kind, a, b))
    return def_use, findings


# ---- deltalog ------------------------------------------------------------------------------------


def deltalog_answer(session) -> tuple[set, set]:
    def_use = set(session.read("def_use"))
    findings = set()
    for (f,) in session.read("finding"):
        findings.add(("uninitialized", *f.args) if f.name == "Uninitialized" else ("dead", *f.args[0]))
    return def_use, findings


def cli_answer(out: Path, program) -> tuple[set, set]:
    """The CLI's CSV outputs, their records and ADT values read back from Soufflé's text."""
    import pyarrow.csv as pacsv

    from compiler.values import from_text

    def rows(name):
        kinds = program.relations[name].kinds
        for part in sorted((out / name).glob("*.csv")):
            table = pacsv.read_csv(part, convert_options=pacsv.ConvertOptions(column_types={c: "string" for c in program.relations[name].attribute_names}))
            for row in zip(*(table.column(c).to_pylist() for c in table.column_names)):
                yield tuple(from_text(v, k) if not isinstance(k, str) else int(v) for v, k in zip(row, kinds))

    def_use = set(rows("def_use"))
    findings = {("uninitialized", *f.args) if f.name == "Uninitialized" else ("dead", *f.args[0]) for (f,) in rows("finding")}
    return def_use, findings


def timed(fn) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def spread(samples: list[float]) -> str:
    median = statistics.median(samples)
    return f"{median:.3f} s ({min(samples):.3f}-{max(samples):.3f} s, n={len(samples)})"


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--methods", type=int, default=2000)
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--updates", type=int, default=3)
    args = p.parse_args(argv)

    import compiler

    rel = generate(args.methods)
    facts = sum(len(rows) for rows in rel.values())
    print(f"[dataflow] {args.methods:,} methods, {facts:,} facts", file=sys.stderr)
    program = compiler.compile_file(PROGRAM)
    checks: list[tuple[str, bool]] = []
    table = [("system", "phase", "time", "rows")]

    con = duckdb_load(rel)
    duck_batch = [timed(lambda: duckdb_answer(con)) for _ in range(args.repeats)]
    expected = duckdb_answer(con)
    sizes = f"def_use {len(expected[0]):,}, findings {len(expected[1]):,}"
    table.append(("DuckDB", "batch: the queries", spread(duck_batch), sizes))

    with tempfile.TemporaryDirectory() as tmp:
        write_facts(rel, Path(tmp) / "facts")
        command = [sys.executable, "-m", "compiler.cli", "run", str(PROGRAM), "--facts-dir", str(Path(tmp) / "facts"),
                   "--reader", "arrow", "--format", "csv", "--output-dir", str(Path(tmp) / "out")]
        start = time.perf_counter()
        done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True)
        cli_seconds = time.perf_counter() - start
        if done.returncode != 0:
            print(done.stderr, file=sys.stderr)
            return 1
        checks.append(("CLI's outputs equal DuckDB's", cli_answer(Path(tmp) / "out", program) == expected))
    table.append(("deltalog CLI", "run --reader arrow --format csv", f"{cli_seconds:.3f} s (1 run)", sizes))

    batch = []
    for _ in range(args.repeats):
        session = program.session()

        def load():
            for name in INPUTS:
                session.insert(name, rel[name])
            session.commit()

        batch.append(timed(load))
    table.append(("deltalog", "batch: insert + commit", spread(batch), sizes))
    checks.append(("batch: deltalog equals DuckDB", deltalog_answer(session) == expected))

    rnd = random.Random(2)
    ours, theirs = [], []
    for _ in range(args.updates):
        removed, added = update(rel, rnd, args.methods)

        def apply():
            for name in UPDATED:
                session.remove(name, removed[name])
                session.insert(name, added[name])
            session.commit()

        ours.append(timed(apply))
        theirs.append(timed(lambda: (duckdb_apply(con, removed, added), duckdb_answer(con))))
    changed = sum(len(rows) for rows in removed.values())
    table.append(("deltalog", "update: 1% of cfg_edge, assigns, reads replaced, one commit", spread(ours), f"-{changed:,}/+{changed:,} rows"))
    table.append(("DuckDB", "update: DELETE + INSERT, the queries again", spread(theirs), ""))
    checks.append((f"after {args.updates} updates: deltalog equals DuckDB", deltalog_answer(session) == duckdb_answer(con)))

    print(f"| workload | {' | '.join(table[0])} |")
    print("|---|---|---|---:|---|")
    for row in table[1:]:
        print(f"| dataflow, {args.methods:,} methods, {facts:,} facts | {' | '.join(row)} |")
    batch_ratio = statistics.median(batch) / statistics.median(duck_batch)
    update_ratio = statistics.median(ours) / statistics.median(theirs)
    print(f"\nbatch: deltalog takes {batch_ratio:.1f}x DuckDB's time; 1% update: deltalog takes {update_ratio:.2f}x the time of DuckDB's recompute")
    for what, ok in checks:
        print(f"check {what}: {'PASS' if ok else 'FAIL'}")
    return 0 if all(ok for _, ok in checks) else 1


if __name__ == "__main__":
    sys.exit(main())
