"""Arrange: index a collection by key into a trace shared by its readers.

The operator turns each incoming batch into an `ArrangedBatch` (sorted by key,
consolidated), inserts it into its trace, and forwards it, so each reader sees
every batch exactly once as it also appears in the trace. `Arranged` pairs that
stream with the trace; joins and reduces take an `Arranged`, and one collection
arranged by one key is arranged once however many operators read it.
"""

from __future__ import annotations

from runtime.operators.basic import as_batch
from runtime.trace import ArrangedBatch, Trace
from runtime.worker import Operator, Stream


class Arranged:
    """A stream of arranged batches together with the trace holding them all."""

    __slots__ = ("stream", "trace", "key_arity")

    def __init__(self, stream: Stream, trace: Trace, key_arity: int):
        self.stream, self.trace, self.key_arity = stream, trace, key_arity


class ArrangeOp(Operator):
    name = "arrange"

    def __init__(self, dataflow, stream: Stream, key_arity: int, val_arity: int, label: str = ""):
        self.key_arity = key_arity
        self.trace = Trace(stream.lattice, key_arity, val_arity, name=label or f"arrange({key_arity})")
        super().__init__(dataflow, [[stream]], [stream.lattice], [stream.lattice])

    def run(self):
        arranged = ArrangedBatch.from_batches([as_batch(m) for m in self.receive(0)], self.key_arity)
        self.trace.insert(arranged)
        self.send(arranged)

