"""Traces: arranged, shared, compacted histories of collections.

An arrangement of a collection by a key is a `Trace`: a spine of immutable
`ArrangedBatch`es, each sorted by key, merged geometrically (log-structured) so
that there are O(log n) batches. Every operator that needs the collection indexed
by that key (joins, reduces) reads the same trace through its own `TraceHandle`;
each handle states the frontier of times at which its reader will still look,
and the trace compacts (advance_by, then consolidation) to the meet of those
frontiers whenever it merges batches.
"""

from runtime.trace.batch import ArrangedBatch
from runtime.trace.spine import Trace, TraceHandle

__all__ = ["ArrangedBatch", "Trace", "TraceHandle"]
