"""Seen keys: the keys a distinct has ever output, as one bit each, for its first loads.

While distinct's input has only ever had insertions, every count it holds is
positive, and once every input time is at or before a run's time t (the rounds
of a first load: `ReduceOp._input_before`), the input accumulated at t is
positive for every key the run visits. The output accumulated at t is then 1
for a key that has ever had output -- every output time is a join of the key's
input times, so at or before t, and the output summed over all of them is the
output at their join, 1 -- and 0 for one that has not. So in such a run the
correction at t is +1 for each key never output before, and nothing for the
others: an anti-join with the keys seen so far. Kept as bits over the box of
key values seen (each column's least value and extent, the first column the
most significant), that anti-join reads the bits of sorted keys in order --
nanoseconds a key -- where seeking each key in every segment of the output
trace costs 50-1,000 ns, and the run need not wait for the output trace's
last insert at all.

The box grows (to twice the extent of the values seen, in every column) and
the bits are laid out again when keys fall outside it; past
MAX_BITS the bits are given up, as they are for good once the input has had a
deletion: the output trace is what distinct reads then.
"""

from __future__ import annotations

import numpy as np
from numba import types as nt

from runtime.jit import borrowed, kernel
from runtime.kernels import I, M, V

MAX_BITS = 1 << 30  # 128 MB of bits: a larger box of key values is not kept
_LARGEST = float(1 << 62)  # nor a box holding a value beyond +-2^62 (encoded floats, say)

_BITS = nt.Array(nt.uint8, 1, "C")


@kernel(M, V, V, _BITS, nt.boolean)
def unseen_keys(key, least, extent, bits, mark_only):
    """Mark every key of `key` (k, n) in `bits`, the bits of the box (`least`, `extent` per
    column: bit i of byte i >> 3 for the key whose index in the box is i, the first column
    the most significant), and (unless `mark_only`) gather the keys whose bit was not set
    before, in order (a key repeated is seen at its second position). Returns (inside, the
    keys gathered (k, m), each column's least value, its greatest): when some key is outside
    the box, nothing is marked and inside is False."""
    key, least, extent, bits = borrowed(key), borrowed(least), borrowed(extent), borrowed(bits)
    k, n = key.shape[0], key.shape[1]
    low = np.empty(k, np.int64)
    high = np.empty(k, np.int64)
    inside = True
    for c in range(k):
        lo = key[c, 0] if n else 0
        hi = lo
        for i in range(n):
            lo = min(lo, key[c, i])
            hi = max(hi, key[c, i])
        low[c] = lo
        high[c] = hi
        inside = inside and n > 0 and least[c] <= lo and hi < least[c] + extent[c]
    fresh = np.empty((k, 0 if mark_only or not inside else n), np.int64)
    if not inside:
        return n == 0, fresh, low, high
    m = 0
    for i in range(n):
        at = 0
        for c in range(k):
            at = at * extent[c] + (key[c, i] - least[c])
        byte = at >> 3
        if byte < 0 or byte >= bits.shape[0]:  # (never, for keys inside the box: a guard for memory)
            raise IndexError("seen keys: a key outside the box")
        bit = np.uint8(1) << np.uint8(at & 7)
        if not bits[byte] & bit:
            bits[byte] |= bit
            if not mark_only:
                for c in range(k):
                    fresh[c, m] = key[c, i]
                m += 1
    return True, fresh[:, :m], low, high


class SeenKeys:
    """The keys of `key_arity` columns output so far (see the module's docstring)."""

    def __init__(self, key_arity: int):
        self.key_arity = key_arity
        self.least = np.zeros(key_arity, np.int64)
        self.extent = np.zeros(key_arity, np.int64)  # all zero: an empty box
        self.low = self.high = self.least  # per column, the values the box was last grown to hold (it holds all seen)
        self.bits = np.zeros(0, np.uint8)

    def unseen(self, key: np.ndarray) -> np.ndarray | None:
        """The keys of `key` (k, n) never seen before, in order, as a (k, m) block, all of them
        marked seen now; None when the box would outgrow MAX_BITS (the bits are then to be
        given up)."""
        return self._marked(key, False)

    def mark(self, key: np.ndarray) -> bool:
        """Mark the keys seen; False when the box would outgrow MAX_BITS."""
        return self._marked(key, True) is not None

    def _marked(self, key: np.ndarray, mark_only: bool) -> np.ndarray | None:
        if key.shape[0] != self.key_arity:  # (the kernel indexes the box by the key's rows)
            raise ValueError(f"keys of {key.shape[0]} columns marked in a box of {self.key_arity}")
        inside, fresh, low, high = unseen_keys(key, self.least, self.extent, self.bits, mark_only)
        if inside:
            return fresh
        if not self._grown(low, high):
            return None
        return unseen_keys(key, self.least, self.extent, self.bits, mark_only)[1]

    def _grown(self, low: np.ndarray, high: np.ndarray) -> bool:
        """The box grown to hold the values from `low` to `high` in each column as well as it
        holds the keys seen, the bits laid out again; False past MAX_BITS."""
        if self.extent.all():
            low, high = np.minimum(low, self.low), np.maximum(high, self.high)
        # (In floats first: a box of values near int64's ends is given up, not overflowed.)
        if max(-float(low.min()), float(high.max())) > _LARGEST or float(np.prod(2 * (high.astype(np.float64) - low + 1))) > MAX_BITS:
            return False
        # Twice the values' extent, half of the room on either side of them: a box that keeps
        # growing grows geometrically, whichever way its keys go.
        needed = high - low + 1
        least, top = low - needed // 2, low - needed // 2 + 2 * needed
        if self.extent.all():  # (the old box inside the new one, whatever the rounding)
            least, top = np.minimum(least, self.least), np.maximum(top, self.least + self.extent)
        extent = top - least
        if float(np.prod(extent.astype(np.float64))) > MAX_BITS:
            return False
        bits = np.zeros((int(np.prod(extent)) + 7) >> 3, np.uint8)
        if self.extent.all():
            at = np.flatnonzero(np.unpackbits(self.bits, bitorder="little"))
            if len(at):
                unseen_keys(self._keys_at(at), least, extent, bits, True)
        self.least, self.extent, self.bits = least, extent, bits
        self.low, self.high = low, high
        return True

    def _keys_at(self, at: np.ndarray) -> np.ndarray:
        """The keys whose indices in the box are `at`."""
        key = np.empty((self.key_arity, len(at)), np.int64)
        for c in range(self.key_arity - 1, -1, -1):
            at, key[c] = np.divmod(at, self.extent[c])
            key[c] += self.least[c]
        return key
