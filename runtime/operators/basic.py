"""Stateless operators: a function applied to every batch as it arrives.

`Unary` covers map, filter, flat_map, negate, concat (several streams into one
port) and the scope operators: `enter` appends an iteration coordinate 0,
`leave` drops the last coordinate, `feedback` adds one to it (the loop's back
edge). Their path summaries say how they change times (runtime.progress).
"""

from __future__ import annotations

import functools

import numpy as np

from runtime.batch import Batch
from runtime.progress import Summary
from runtime.worker import Operator


_EACH = 4  # up to this many messages, a stateless operator applies its function to each


def as_batch(message) -> Batch:
    return message if isinstance(message, Batch) else message.to_batch()


def one_batch(messages: list) -> Batch:
    """The messages (batches, arranged batches) as one batch."""
    if len(messages) == 1:
        return as_batch(messages[0])
    return Batch.concat([as_batch(m) for m in messages])


class Unary(Operator):
    """Applies `fn(Batch) -> Batch` to every incoming batch."""

    merges_input = True

    def __init__(self, dataflow, inputs, fn, name, in_lattice, out_lattice=None, summary=None, scope=None):
        """`scope`: the scope of the output, needed when it is a scope the input is not in (enter)."""
        self.fn = fn
        self.name = name
        self._summary = summary
        self.passthrough = fn is identity and summary is None and out_lattice in (None, in_lattice)
        self.feedback = fn is feedback_times
        # The back edge too: what it sends waits at the loop variable's readers for the next round.
        self.eager = not self.passthrough and (summary is None or self.feedback) and out_lattice in (None, in_lattice) and scope is None
        super().__init__(dataflow, [inputs], [in_lattice], [out_lattice or in_lattice], scope)

    def summary(self, in_port, out_port):
        return self._summary or Summary.identity(self.in_lattices[0].depth)

    @property
    def selected(self) -> tuple | None:
        """The columns this operator selects, when it is a select (fused or not)."""
        own = self.__dict__.get("_unfused")
        return getattr(self.fn if own is None else own[0], "columns", None)

    def fuse(self, fused: bool) -> None:
        """A select done by the operator before it (runtime.worker.Dataflow._fuse_selects)
        passes its batches on as they come, and senders deliver past it; unfused, it selects."""
        own = self.__dict__.setdefault("_unfused", (self.fn, self.passthrough, self.eager))
        self.fn, self.passthrough, self.eager = (identity, True, False) if fused else own

    def apply(self, message) -> None:
        out = self.fn(as_batch(message))
        if len(out):
            self.send(out)

    def run(self):
        messages = self.receive(0)
        if not messages:
            return
        if len(messages) <= _EACH:
            # A few messages (a join's parts) are passed on one by one: whoever reads them
            # concatenates at most once, instead of here and there again.
            for message in messages:
                out = self.fn(as_batch(message))
                if len(out):
                    self.send(out)
            return
        # Many messages (a loop's rounds leaving it, one small batch each) are one batch to
        # `fn`: its fixed cost is paid once, not once per round.
        out = self.fn(one_batch(messages))
        if len(out):
            self.send(out)


def identity(batch: Batch) -> Batch:
    return batch


def negate(batch: Batch) -> Batch:
    return batch.negate()


def enter_times(batch: Batch) -> Batch:
    zeros = np.zeros((1, len(batch)), dtype=np.int64)
    return batch.with_time(np.concatenate([batch.time, zeros], axis=0))


def leave_times(batch: Batch) -> Batch:
    return batch.with_time(batch.time[:-1])


def feedback_times(batch: Batch) -> Batch:
    # np.add, not `+`: the operator's dispatch costs ~0.5 us more, in every round of a loop.
    return batch.with_time(np.add(batch.time, _next_iteration(batch.time.shape[0])))


@functools.cache
def _next_iteration(depth: int) -> np.ndarray:
    """The (depth, 1) column that adds one to a time's last coordinate."""
    step = np.zeros((depth, 1), dtype=np.int64)
    step[-1] = 1
    step.flags.writeable = False
    return step


def map_columns(fn, arity: int):
    """Batch function applying a vectorised column function to the data."""

    def apply(batch: Batch) -> Batch:
        data = np.asarray(fn(batch.data), dtype=np.int64)
        if data.shape != (arity, len(batch)):
            raise ValueError(f"column function returned shape {data.shape}, expected ({arity}, {len(batch)})")
        return batch.with_data(data)

    return apply


def select_columns(columns: tuple[int, ...]):
    """Batch function keeping the given data columns, in that order: a view when they are
    consecutive and ascending, else one `take` with an index built once (indexing with a
    list builds the index again on every call, three times slower on a round's few rows)."""
    first = columns[0] if columns else 0
    if columns == tuple(range(first, first + len(columns))):
        rows = slice(first, first + len(columns))
        view = lambda batch: batch.with_rows(rows)  # noqa: E731
        view.columns = columns
        return view
    index = np.array(columns, dtype=np.intp)
    select = lambda batch: batch.with_rows(index)  # noqa: E731
    select.columns = columns
    return select


def filter_columns(predicate):
    def apply(batch: Batch) -> Batch:
        mask = np.asarray(predicate(batch.data), dtype=bool)
        return batch if np.count_nonzero(mask) == len(mask) else batch.take(mask)  # count_nonzero: cheaper than all() on a few rows

    return apply
