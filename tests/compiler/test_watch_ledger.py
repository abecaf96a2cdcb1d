"""The exactly-once logic of `deltalog watch` (compiler.cli.watch), in process and without
Spark: files read with the Arrow reader, outputs collected instead of written. Spark may
group files differently after a restart and re-deliver a batch it did not see finish; the
accumulated output changes must equal an uninterrupted run's and the session oracle's."""

import argparse
from collections import Counter
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

import compiler
from compiler.cli.inputs import Loader
from compiler.cli.watch import Ledger, Watcher

ROOT = Path(__file__).resolve().parents[2]
REACH = ROOT / "examples" / "reach.dl"
DATA = ROOT / "examples" / "reach"
PLAN = [
    ("edge", [(0, 40), (40, 41)], 1),
    ("root", [(40,)], 1),
    ("edge", [(0, 40)], -1),
    ("edge", [(41, 42), (2, 40)], 1),
    ("root", [(2,)], -1),
]


def make_files(directory: Path) -> list[str]:
    paths = []
    for i, (rel, rows, diff) in enumerate(PLAN):
        cols = {"src": [r[0] for r in rows], "dst": [r[1] for r in rows]} if rel == "edge" else {"r": [r[0] for r in rows]}
        cols["diff"] = [diff] * len(rows)
        path = directory / rel / f"{i:04d}.parquet"
        path.parent.mkdir(parents=True, exist_ok=True)
        pq.write_table(pa.table({k: pa.array(v, pa.int64()) for k, v in cols.items()}), path)
        paths.append(str(path))
    return paths


class Collecting(Watcher):
    def __init__(self, *a, written):
        super().__init__(*a)
        self.written = written

    def write(self, name, changes):
        self.written[name] = [(rel,) + row + (t, d) for rel, log in changes.items() for row, t, d in log]  # replaces, like a directory


def start(tmp_path, checkpoint, written):
    program = compiler.compile_file(REACH)
    session = program.session(capture="outputs")
    loader = Loader(session, None, progress=False, reader="arrow")
    loader.load("edge", str(DATA / "edge.parquet"), time=0)
    loader.load("root", str(DATA / "root.parquet"), time=0)
    session.commit()
    args = argparse.Namespace(changes_dir=str(tmp_path / "changes"), output_dir=str(tmp_path / "out"), format="parquet")
    watcher = Collecting(args, program, None, session, loader, Ledger(str(checkpoint)), written=written)
    watcher.replay()
    return watcher


def accumulated(written):
    return Counter(row for rows in written.values() for row in rows)


def test_regrouped_and_redelivered_batches_after_a_restart_change_nothing(tmp_path):
    files = make_files(tmp_path / "changes")

    whole: dict = {}
    w = start(tmp_path, tmp_path / "cp1", whole)
    for i, f in enumerate(files):
        w.on_batch(i, [f])

    oracle = compiler.compile_file(REACH).session()
    oracle.load_facts(DATA)
    oracle.commit()
    for rel, rows, diff in PLAN:
        (oracle.insert if diff > 0 else oracle.remove)(rel, rows)
        oracle.commit()
    expected = Counter(("reach",) + row + (t, d) for row, t, d in oracle.change_log("reach") if t > 0)
    assert accumulated(whole) == expected

    killed: dict = {}
    w = start(tmp_path, tmp_path / "cp2", killed)
    w.on_batch(0, files[:1])
    w.on_batch(1, files[1:2])
    # killed after batch 2's outputs were written but before its ledger record:
    w.ledger.record = lambda entry: None
    w.on_batch(2, files[2:3])
    assert 2 not in {e["batch"] for e in Ledger(str(tmp_path / "cp2")).records()}

    w = start(tmp_path, tmp_path / "cp2", killed)  # restart: replays batches 0 and 1
    assert w.session.time == 3
    w.on_batch(1, files[1:2])  # re-delivered although finished: skipped
    w.on_batch(2, files[2:4])  # Spark regrouped: the unfinished file and the next one
    w.on_batch(3, files[4:])
    assert accumulated(killed) == accumulated(whole)
    assert sorted(killed) == ["batch=00000000", "batch=00000001", "batch=00000002", "batch=00000003"]
