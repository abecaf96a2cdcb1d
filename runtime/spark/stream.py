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
"""

from __future__ import annotations

from urllib.parse import unquote, urlparse

BINARY_FILE_SCHEMA = "path STRING, modificationTime TIMESTAMP, length BIGINT, content BINARY"


def local_path(uri: str) -> str:
    """`file:/a/b` -> `/a/b`; other URIs unchanged."""
    if uri.startswith("file:"):
        return unquote(urlparse(uri).path)
    return uri


def follow_files(spark, directory: str, checkpoint: str, on_batch, max_files: int | None = None,
                 trigger: str = "1 second", available_now: bool = False) -> None:
    reader = spark.readStream.format("binaryFile").schema(BINARY_FILE_SCHEMA).option("recursiveFileLookup", "true")
    if max_files:
        reader = reader.option("maxFilesPerTrigger", int(max_files))
    files = reader.load(directory).select("path", "modificationTime")
    failure: list[BaseException] = []

    def each(df, batch_id):
        paths = [local_path(r.path) for r in sorted(df.collect(), key=lambda r: (r.modificationTime, r.path))]
        try:
            on_batch(int(batch_id), paths)
        except BaseException as e:
            failure.append(e)
            raise

    writer = files.writeStream.foreachBatch(each).option("checkpointLocation", checkpoint)
    writer = writer.trigger(availableNow=True) if available_now else writer.trigger(processingTime=trigger)
    query = writer.start()
    try:
        query.awaitTermination()
    except BaseException:
        if failure:
            raise failure[0] from None
        raise
    finally:
        if query.isActive:
            query.stop()
    if failure:
        raise failure[0]
