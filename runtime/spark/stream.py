"""Following a directory of change files with Spark Structured Streaming.

`follow_files` runs a streaming query over `directory` (every file below it,
as Spark's `binaryFile` source lists them, oldest first; hidden and `_` files
skipped) and calls `on_batch(batch_id, paths)` from `foreachBatch` with the
micro-batch's new files, oldest first (modification time, then path). Only
the paths travel; the caller reads the files.

Which files share a micro-batch is not fixed across a restart: files Spark
had logged but not yet run may join the next batch. Each file is delivered
exactly once and in the same order, so a caller whose results must not
depend on the restart gives each file, not each batch, its own time.
Spark's checkpoint (`checkpoint`) records which files make up each batch id
before the batch runs and which batches finished, so after a kill the query
restarts at the first unfinished batch with the same files under the same
id. A caller that makes its effects per batch id idempotent (and skips ids it
finished but Spark did not record) gets exactly-once processing.

An exception raised by `on_batch` stops the query and is re-raised as it was.

Stopping. Setting the `stop` event (a signal handler may) ends the query
between batches: a batch under way finishes, and a batch Spark starts after
the event is refused before `on_batch` sees it, so Spark does not record it
as finished and delivers it again after a restart. `follow_files` then
returns True (False when the files ran out under `available_now`).
"""

from __future__ import annotations

import threading
import time
from urllib.parse import unquote, urlparse

BINARY_FILE_SCHEMA = "path STRING, modificationTime TIMESTAMP, length BIGINT, content BINARY"


def local_path(uri: str) -> str:
    """`file:/a/b` -> `/a/b`; other URIs unchanged."""
    if uri.startswith("file:"):
        return unquote(urlparse(uri).path)
    return uri


POLL_SECONDS = 0.5  # how often the caller's thread looks at `stop` while the query runs


class _Refused(Exception):
    """A batch Spark started after `stop` was set: failing it keeps it unfinished in Spark's checkpoint."""


def _await_commit(query, batch_id: int, seconds: float = 10.0) -> None:
    """Give Spark the moment after a batch's callback in which it records the batch as finished
    (a stop before that makes it deliver the batch again after a restart: correct, but redone)."""
    deadline = time.monotonic() + seconds
    while query.isActive and time.monotonic() < deadline:
        progress = query.lastProgress
        if progress is not None and progress["batchId"] >= batch_id:
            return
        time.sleep(0.05)


def follow_files(spark, directory: str, checkpoint: str, on_batch, max_files: int | None = None,
                 trigger: str = "1 second", available_now: bool = False, stop: threading.Event | None = None) -> bool:
    """Run the query until the files run out (`available_now`), `on_batch` raises, or `stop` is set;
    True if it was stopped."""
    stop = stop or threading.Event()
    reader = spark.readStream.format("binaryFile").schema(BINARY_FILE_SCHEMA).option("recursiveFileLookup", "true")
    if max_files:
        reader = reader.option("maxFilesPerTrigger", int(max_files))
    files = reader.load(directory).select("path", "modificationTime")
    failure: list[BaseException] = []
    between_batches = threading.Lock()  # held while a batch runs
    finished = [-1]  # the last batch on_batch finished

    def each(df, batch_id):
        with between_batches:
            try:
                if stop.is_set():
                    raise _Refused(batch_id)
                paths = [local_path(r.path) for r in sorted(df.collect(), key=lambda r: (r.modificationTime, r.path))]
                on_batch(int(batch_id), paths)
                finished[0] = int(batch_id)
            except BaseException as e:
                failure.append(e)
                raise

    writer = files.writeStream.foreachBatch(each).option("checkpointLocation", checkpoint)
    writer = writer.trigger(availableNow=True) if available_now else writer.trigger(processingTime=trigger)
    query = writer.start()
    try:
        while not query.awaitTermination(POLL_SECONDS):
            if stop.is_set():
                with between_batches:  # the batch under way, if any, finishes; later ones are refused
                    pass
                if finished[0] >= 0:
                    _await_commit(query, finished[0])
                break
    except BaseException:
        if not failure:
            raise
        if not isinstance(failure[0], _Refused):
            raise failure[0] from None
    finally:
        if query.isActive:
            query.stop()
    if failure and not isinstance(failure[0], _Refused):
        raise failure[0]
    return stop.is_set()
