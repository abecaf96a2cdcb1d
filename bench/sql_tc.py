"""SQL transitive closure against the Datalog one: the same plan, the same times?

examples/tc.sql (a WITH RECURSIVE ... UNION view, compiled with
`compiler.compile_sql` over edge(x int not null, y int not null)) and
examples/tc.dl, each run in a fresh session on the same seeded uniform random
graph G(n, m) (bench/datalog.py's generator: m edges, endpoints uniform over
n nodes): batch = insert every edge + one commit, wall clock, median and
spread over --repeats runs, alternating the two. It prints whether the two
optimized plans are the same fixpoint (the SQL one adds only an alias
binding for the view) and checks the two answers are equal.

    python bench/sql_tc.py [--sizes 1000x2000,2000x6000] [--repeats 3]
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import compiler  # noqa: E402
from compiler.plan import Fixpoint  # noqa: E402
from compiler.sql import compile_sql  # noqa: E402


def graph(n: int, m: int, seed: int = 1) -> list[tuple[int, int]]:
    rnd = random.Random(seed)
    return [(rnd.randrange(n), rnd.randrange(n)) for _ in range(m)]


def batch(program, output: str, edges):
    session = program.session(capture="outputs")
    start = time.perf_counter()
    session.insert("edge", edges)
    session.commit()
    elapsed = time.perf_counter() - start
    return elapsed, session.read(output)


def fixpoint_shape(program) -> list:
    """The fixpoints' bodies with binding names taken out (explain text)."""
    from compiler.plan import explain_node

    out = []
    for step in program.plan.steps:
        if isinstance(step, Fixpoint):
            for b in step.bindings:
                out.append(explain_node(b.body).replace(b.name, "<self>"))
    return out


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sizes", default="1000x2000,2000x6000")
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    datalog = compiler.compile_file(ROOT / "examples/tc.dl")
    sql = compile_sql((ROOT / "examples/tc.sql").read_text(), {"edge": {"x": "int not null", "y": "int not null"}})
    same = fixpoint_shape(datalog) == fixpoint_shape(sql)
    print(f"same fixpoint plan: {same}")
    print("| graph | paths | Datalog batch (median, spread) | SQL batch (median, spread) | SQL / Datalog |")
    print("|---|---|---|---|---|")
    ok = same
    for size in args.sizes.split(","):
        n, m = (int(v) for v in size.split("x"))
        edges = graph(n, m)
        times = {"dl": [], "sql": []}
        for _ in range(args.repeats):
            t, dl_rows = batch(datalog, "path", edges)
            times["dl"].append(t)
            t, sql_rows = batch(sql, "path", edges)
            times["sql"].append(t)
            ok &= sorted(dl_rows) == sorted(sql_rows)
        med = {k: statistics.median(v) for k, v in times.items()}
        spread = {k: f"{min(v):.2f}–{max(v):.2f} s" for k, v in times.items()}
        print(f"| G({n:,}, {m:,}) | {len(dl_rows):,} | {med['dl']:.2f} s ({spread['dl']}) | {med['sql']:.2f} s ({spread['sql']}) | {med['sql'] / med['dl']:.2f} |")
    print(f"answers equal: {ok}")
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
