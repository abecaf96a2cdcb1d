"""SQL ORDER BY ... LIMIT maintained as a top-k: CPU time per single-row change.

`select x, y from big order by x limit K` (compiler.compile_sql in the DuckDB
dialect, so NULLS LAST; big(x int, y int), both nullable) on N rows with x
uniform over 0..N-1 (duplicates, 1% NULLs): load + first commit, then
single-row changes, each its own commit: inserts and deletes, half of them
inside the current top K (an x at most the K-th smallest; a row of the
answer) so the answer changes, half outside it. Per change it records process CPU seconds (time.process_time: the
machine is shared and wall time is noisy) and prints the median and p90 for
all changes, for changes that move the answer and for changes that do not.
It checks the maintained answer against a sort of the current rows at the end.

    python bench/sql_topk.py [--rows 100000] [--limit 10] [--changes 200]
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

from compiler.sql import compile_sql  # noqa: E402


def expected_top(rows, limit):
    """The first `limit` rows of ORDER BY x (NULLS LAST), ties by the whole row ascending."""
    return sorted(rows, key=lambda r: (r[0] is None, r[0] or 0, r[1] is None, r[1] or 0))[:limit]


def percentile(values, p):
    values = sorted(values)
    return values[min(len(values) - 1, int(p * len(values)))]


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", type=int, default=100_000)
    parser.add_argument("--limit", type=int, default=10)
    parser.add_argument("--changes", type=int, default=200)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    rnd = random.Random(args.seed)
    n, k = args.rows, args.limit

    def row(low=0, high=n - 1):
        return (None if rnd.random() < 0.01 else rnd.randint(low, high), rnd.randint(0, 99))

    rows = [row() for _ in range(n)]
    started = time.process_time()
    program = compile_sql(f"select x, y from big order by x limit {k}", {"big": {"x": "int", "y": "int"}}, dialect="duckdb")
    session = program.session()
    session.insert("big", rows)
    session.commit()
    load = time.process_time() - started

    moving, still = [], []
    for i in range(args.changes):
        ranked = expected_top(rows, k) if i % 2 == 0 else None
        kth = ranked[-1][0] if ranked else None
        into_top = kth is not None
        if rnd.random() < 0.5:
            change = row(0, max(kth, 0)) if into_top else row(n, 2 * n)
            rows.append(change)
            before = time.process_time()
            session.insert("big", [change])
        else:
            change = rnd.choice(ranked) if into_top else rows[rnd.randrange(len(rows))]
            rows.remove(change)
            before = time.process_time()
            session.remove("big", [change])
        changed = session.commit()
        spent = time.process_time() - before
        (moving if changed else still).append(spent)
    ok = session.read("result") == expected_top(rows, k)

    def figure(label, values):
        if values:
            ms = [v * 1000 for v in values]
            print(f"| {label} | {len(ms)} | {statistics.median(ms):.2f} ms | {percentile(ms, 0.9):.2f} ms |")

    print(f"rows {n:,}, limit {k}: compile + load + first commit {load:.2f} s CPU")
    print("| changes | n | CPU median | CPU p90 |")
    print("|---|---:|---:|---:|")
    figure("all single-row changes", moving + still)
    figure("changes that move the top k", moving)
    figure("changes outside the top k", still)
    print(f"answer equals a sort of the rows: {ok}")
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
