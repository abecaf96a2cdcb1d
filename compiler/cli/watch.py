"""`deltalog watch`: keep a program's outputs current from a stream of change files.

Change files arrive in `CHANGES_DIR/<rel>/` (Parquet, CSV with a header or
JSON lines: the relation's columns plus `diff`, optionally `time`). Spark
Structured Streaming (runtime.spark.stream) hands each micro-batch's new
files to the session, oldest first. Each file is one time (so a micro-batch
of one file, `--max-files-per-batch 1`, is one time); a file with a `time`
column uses its rows' own times, which must not be before its open time. A
file, not a micro-batch, gets a time because Spark may group files
differently after a restart, while the order of files is fixed: so the
times, and every output change, are the same however often the watch was
killed. Each batch's output changes are written to
`OUTPUT_DIR/<rel>/batch=<id>/` (the columns, `time`, `diff`), the initial
answer (time 0) to `OUTPUT_DIR/<rel>/batch=initial/`.

Exactly once. The checkpoint directory holds Spark's stream checkpoint
(`spark/`) and our ledger (`deltalog/`): after a batch's outputs are written,
a record `batches/<id>.json` names its files and their times (written by rename,
so it exists whole or not at all). A restarted watch rebuilds the session
by loading the initial inputs and replaying every recorded batch's files at
their recorded times, writing nothing; Spark then re-delivers the first
batch it did not see finish under the same id, with the same files. A batch
with a record is skipped (its outputs are complete); one without is
recomputed from the same state and its output directories overwritten
(write_table replaces a directory by rename). So killed at any moment, the
accumulated outputs equal an uninterrupted run's: nothing lost, nothing twice.

Stopping. SIGINT (Ctrl-C) or SIGTERM stops the watch between batches: the
batch under way finishes and is recorded, no new one starts (Spark delivers
it again after a restart), and the watch prints one line and exits with code
130. A signal during the start (initial load, replay) takes effect when it is
done. A second signal ends the process at once, as a kill would: the
checkpoint stays consistent, and the batch under way is redone on restart.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import signal
import sys
import threading
from pathlib import Path

from compiler.cli.common import UserError, spark_provider
from compiler.cli.inputs import text_columns
from compiler.cli.run import check_output_dir, initial_inputs, open_session, program_of


class Ledger:
    def __init__(self, checkpoint: str):
        self.dir = Path(checkpoint) / "deltalog"
        (self.dir / "batches").mkdir(parents=True, exist_ok=True)

    def check_meta(self, meta: dict) -> None:
        path = self.dir / "meta.json"
        if path.exists():
            old = json.loads(path.read_text())
            if old != meta:
                raise UserError(
                    f"checkpoint {self.dir.parent} was made for another program or other inputs"
                    f" ({old.get('program')}); use a new --checkpoint directory"
                )
        else:
            self._write(path, meta)

    def records(self) -> list[dict]:
        return [json.loads(p.read_text()) for p in sorted((self.dir / "batches").glob("*.json"))]

    def record(self, entry: dict) -> None:
        self._write(self.dir / "batches" / f"{entry['batch']:010d}.json", entry)

    @property
    def initial_done(self) -> bool:
        return (self.dir / "initial.done").exists()

    def mark_initial(self) -> None:
        self._write(self.dir / "initial.done", {})

    @staticmethod
    def _write(path: Path, data: dict) -> None:
        tmp = path.with_name(path.name + ".tmp")
        tmp.write_text(json.dumps(data, sort_keys=True))
        os.replace(tmp, path)


class Watcher:
    def __init__(self, args, program, spark, session, loader, ledger: Ledger):
        self.args, self.program, self.spark = args, program, spark
        self.session, self.loader, self.ledger = session, loader, ledger
        self.changes_dir = os.path.abspath(args.changes_dir)
        self.done = set()

    def relation_of(self, path: str) -> str:
        rel = os.path.relpath(path, self.changes_dir).split(os.sep)[0]
        if rel == os.path.basename(path):
            raise UserError(f"{path}: change files go in {self.changes_dir}/<relation>/, not directly in the directory")
        info = self.program.relations.get(rel)
        if info is None or not info.is_input:
            raise UserError(f"{path}: '{rel}' is not an input relation (inputs: {', '.join(self.program.inputs)})")
        return rel

    def apply(self, files: list[str], time: int) -> tuple[int, bool]:
        """Feed the files' changes at `time` (or their rows' times); (last time used, any per-row times)."""
        last, timed = time, False
        for path in files:
            rel = self.relation_of(path)
            source = self.loader.source(rel, path, changes=True)
            table = self.loader.read(source)
            if "time" in table.column_names:
                timed = True
                if table.num_rows:
                    times = table.column("time").to_numpy(zero_copy_only=False)
                    if int(times.min()) < time:
                        raise UserError(f"{path}: time {int(times.min())} is before the batch's time {time} (times already closed)")
                    last = max(last, int(times.max()))
                self.loader.feed(source, table)
            else:
                self.loader.feed(source, table, time=time)
        return last, timed

    def replay(self) -> None:
        for entry in self.ledger.records():
            ends = entry["times"][1:] + [entry["next_time"]]
            for path, time, end in zip(entry["files"], entry["times"], ends):
                if time < self.session.time:
                    raise UserError(f"checkpoint ledger is inconsistent at batch {entry['batch']}")
                self.apply([path], time)
                self.session.advance_to(end)
            self.session.advance_to(entry["next_time"])
            self.done.add(entry["batch"])
        if self.done:
            print(f"recovered {len(self.done)} batches from the checkpoint (open time {self.session.time})", flush=True)

    def on_batch(self, batch_id: int, files: list[str]) -> None:
        if batch_id in self.done:
            return  # finished before a restart; Spark had not recorded it
        changes: dict[str, list] = {}
        times = []
        for path in files:  # one time per file (see the module's note on restarts)
            time = self.session.time
            times.append(time)
            last, timed = self.apply([path], time)
            if timed:
                self.session.advance_to(last + 1)
                for rel in self.program.outputs:
                    changes.setdefault(rel, []).extend(c for c in self.session.change_log(rel) if c[1] >= time)
            else:
                for rel, rows in self.session.commit().items():
                    changes.setdefault(rel, []).extend((row, time, d) for row, d in rows)
        changes = {rel: log for rel, log in changes.items() if log}
        self.write(f"batch={batch_id:08d}", changes)
        self.ledger.record({"batch": batch_id, "times": times, "next_time": self.session.time, "files": files})
        time = times[0] if times else self.session.time
        self.done.add(batch_id)
        summary = ", ".join(f"{rel} {sum(1 for c in log if c[2] > 0)}+/{sum(1 for c in log if c[2] < 0)}-" for rel, log in changes.items())
        print(f"batch {batch_id}: {len(files)} file{'s' if len(files) != 1 else ''} at time {time}: {summary or 'no output changes'}", flush=True)

    def write(self, name: str, changes: dict) -> None:
        from runtime.spark.write import arrow_table, change_columns, write_table

        for rel in self.program.outputs:
            path = os.path.join(self.args.output_dir, rel, name)
            log = changes.get(rel)
            if not log:  # a batch recomputed after a restart may change other outputs than before
                shutil.rmtree(path, ignore_errors=True)
                continue
            specs, rows = text_columns(self.program, rel, [row + (t, d) for row, t, d in log])
            table = arrow_table(rows, change_columns(specs))
            write_table(self.spark.get(), table, path, self.args.format)


class StopSignals:
    """While active, SIGINT and SIGTERM set `requested` (the watch stops between batches);
    a second signal exits at once with code 130."""

    SIGNALS = (signal.SIGINT, signal.SIGTERM)

    def __init__(self):
        self.requested = threading.Event()
        self.name = ""

    def __enter__(self) -> "StopSignals":
        self.saved = {s: signal.signal(s, self._handle) for s in self.SIGNALS}
        return self

    def __exit__(self, *exc) -> bool:
        for s, handler in self.saved.items():
            signal.signal(s, handler)
        return False

    def _handle(self, signum, frame) -> None:
        name = signal.Signals(signum).name
        if self.requested.is_set():
            # os.write, not print: the handler may run while the main thread is inside a print
            os.write(2, f"deltalog: stopped at once by a second {name}; the batch under way is redone on restart\n".encode())
            os._exit(130)
        self.name = name
        self.requested.set()


def watch(args) -> int:
    from runtime.spark.stream import follow_files

    program = program_of(args)
    if not os.path.isdir(args.changes_dir):
        raise UserError(f"--changes-dir {args.changes_dir}: no such directory")
    check_output_dir(args.output_dir)
    check_output_dir(args.checkpoint, "--checkpoint")
    ledger = Ledger(args.checkpoint)
    ledger.check_meta(_meta(args, program))
    spark = spark_provider(args)
    with StopSignals() as signals:
        try:
            session, loader = open_session(args, program, spark)
            initial = {rel: [(row, 0, d) for row, d in rows] for rel, rows in session.commit().items()}
            watcher = Watcher(args, program, spark, session, loader, ledger)
            if not ledger.initial_done:
                watcher.write("batch=initial", initial)
                ledger.mark_initial()
            watcher.replay()
            if not signals.requested.is_set():
                print(f"watching {args.changes_dir} (outputs in {args.output_dir})", flush=True)
                follow_files(
                    spark.get(), os.path.abspath(args.changes_dir), os.path.join(os.path.abspath(args.checkpoint), "spark"),
                    watcher.on_batch, max_files=args.max_files_per_batch, trigger=args.trigger,
                    available_now=args.available_now, stop=signals.requested,
                )
            if signals.requested.is_set():
                print(f"deltalog: stopped by {signals.name} between batches ({len(watcher.done)} batches done);"
                      f" start again with the same --checkpoint to go on", file=sys.stderr, flush=True)
                return 130
        finally:
            spark.stop()
    return 0


def _meta(args, program) -> dict:
    text = Path(args.program).read_bytes()
    return {
        "program": str(args.program),
        "program_sha256": hashlib.sha256(text).hexdigest(),
        "inputs": [list(pair) for pair in sorted(initial_inputs(args, program))],
    }

