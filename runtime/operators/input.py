"""Inputs: where updates enter a dataflow, at explicit times.

An `InputHandle` buffers `(row, time, diff)` updates and sends them as one batch
(which may hold many distinct times) when the dataflow steps. Its epoch is its
frontier: `advance_to(t)` promises that no update before `t` will follow, which
lets every operator downstream complete earlier times at the next step
(runtime.worker derives every frontier from the inputs' epochs). `close()`
promises no update at all. Bad rows or times raise
`DataflowError` naming the input, and leave the handle's state unchanged.
"""

from __future__ import annotations

import numpy as np

from runtime.batch import Batch, per_row
from runtime.worker import DataflowError, Operator


class InputOp(Operator):
    name = "input"

    def __init__(self, dataflow, handle):
        self.handle = handle
        super().__init__(dataflow, [], [], [dataflow.root])

    def run(self):  # inputs are flushed by the dataflow, never scheduled
        pass


class InputHandle:
    def __init__(self, dataflow, name: str, types: tuple[str, ...]):
        self.dataflow = dataflow
        self.name = name
        self.types = tuple(types)
        self.epoch = 0
        self.closed = False
        self.stepped, self.stepped_closed = 0, False  # epoch and closed as of the last step's end
        self._pending: list[Batch] = []
        self.op = InputOp(dataflow, self)
        dataflow.inputs.append(self)

    @property
    def arity(self) -> int:
        return len(self.types)

    def _check_time(self, time) -> np.ndarray | int:
        if self.closed:
            raise DataflowError(f"input {self.name!r} is closed; no more updates are accepted")
        if type(time) is int:  # (a single update's time: no array to make)
            if time < self.epoch:
                raise DataflowError(f"input {self.name!r}: time {time} is before the input's frontier {self.epoch}")
            return time
        times = np.asarray(time, dtype=np.int64)
        if times.size and times.min() < self.epoch:
            bad = int(times.min())
            raise DataflowError(f"input {self.name!r}: time {bad} is before the input's frontier {self.epoch}")
        return times

    def update(self, rows, diff=1, time=None) -> None:
        """Add `diff` copies of each row at `time` (default: the current epoch).

        `time` and `diff` may be scalars or one value per row.
        """
        rows = rows if isinstance(rows, list) else list(rows)
        times = self._check_time(self.epoch if time is None else time)
        try:
            data = self.dataflow.codec.encode_rows(rows, self.types)
        except (TypeError, ValueError) as e:
            raise DataflowError(f"input {self.name!r}: {e}") from None
        self.update_columns(data, diff, times)

    def update_columns(self, data: np.ndarray, diff=1, time=None) -> None:
        """Bulk form of `update` on encoded (arity, n) int64 columns."""
        n = data.shape[1]
        if data.shape[0] != self.arity:
            raise DataflowError(f"input {self.name!r}: got {data.shape[0]} columns, expected {self.arity}")
        times = self._check_time(self.epoch if time is None else time)
        times = per_row(times, n).reshape(1, n)
        diffs = per_row(diff, n)
        if n:
            self._pending.append(Batch(np.ascontiguousarray(data, dtype=np.int64), times, diffs))

    def insert(self, rows, time=None) -> None:
        self.update(rows, 1, time)

    def remove(self, rows, time=None) -> None:
        self.update(rows, -1, time)

    def advance_to(self, epoch: int) -> None:
        if self.closed:
            raise DataflowError(f"input {self.name!r} is closed")
        if epoch < self.epoch:
            raise DataflowError(f"input {self.name!r}: cannot advance to {epoch}, already at {self.epoch}")
        self.flush()
        self.epoch = int(epoch)

    def close(self) -> None:
        self.flush()
        self.closed = True

    def flush(self) -> None:
        if self._pending:
            batch = Batch.concat(self._pending)
            self._pending = []
            self.op.send(batch)
