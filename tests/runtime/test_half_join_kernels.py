"""The half join's kernel against brute force: every lookup counted, the smallest proposing,
the others validating, times compared under each lattice, fuel cutting the probes."""

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from runtime.operators.half_join_kernels import LOOKUPS, extend_segments
from runtime.times import ALTNEU, EPOCH, ITERATION, Lattice
from tests.runtime.test_trace_kernels import _segments

LATTICES = [(EPOCH,), (EPOCH, ITERATION), (EPOCH, ALTNEU), (EPOCH, ITERATION, ALTNEU)]


def _rows(store, ends):
    """Each segment's updates as (key..., val..., time..., diff) lists, segment by segment."""
    starts = [0] + ends.tolist()[:-1]
    return [[store[:, j].tolist() for j in range(a, b)] for a, b in zip(starts, ends.tolist())]


def _expected(ready, data, time, diff, traces, keys, places, strict, lattice, width, fuel):
    """(probes done, outputs in the kernel's order) computed by brute force."""
    d = lattice.depth

    def as_of(t_update, t_probe, strict_c):
        return lattice.le(tuple(t_update), tuple(t_probe)) and not (strict_c and list(t_update) == list(t_probe))

    out, spent, done = [], 0, 0
    for i, src in enumerate(ready):
        row, t, r = data[:, src].tolist(), time[:, src].tolist(), int(diff[src])
        runs = [[[u for u in seg if u[: len(key)] == [row[x] for x in key]] for seg in segs] for segs, key in zip(traces, keys)]
        counts = [sum(len(run) for run in segs) for segs in runs]
        proposer = counts.index(min(counts))
        if i and spent + counts[proposer] > fuel:
            break
        spent += counts[proposer]
        done = i + 1
        k = len(keys[proposer])
        for seg in runs[proposer]:
            for u in seg:
                if not as_of(u[k + width : k + width + d], t, strict[proposer]):
                    continue
                value = [0] * width
                for x in range(width):
                    value[places[proposer][x]] = u[k + x]
                mult = r * u[-1]
                for v, segs in enumerate(runs):
                    if v != proposer:
                        kv = len(keys[v])
                        mult *= sum(w[-1] for seg_v in segs for w in seg_v
                                    if w[kv : kv + width] == [value[places[v][x]] for x in range(width)]
                                    and as_of(w[kv + width : kv + width + d], t, strict[v]))
                if mult:
                    out.append((tuple(row + value), tuple(t), mult))
    return done, out


@settings(max_examples=400, deadline=None)
@given(st.data())
def test_extend_segments_equals_brute_force(data):
    layers = data.draw(st.sampled_from(LATTICES))
    lattice = Lattice(layers)
    d = lattice.depth
    lookups = data.draw(st.integers(1, 3))
    width = data.draw(st.integers(0, 2)) if lookups > 1 else data.draw(st.integers(0, 1))
    arity = data.draw(st.integers(1, 3))
    n = data.draw(st.integers(0, 10))
    stream = data.draw(arrays(np.int64, (arity, n), elements=st.integers(0, 6)))  # the traces' keys are 0..6
    time = data.draw(arrays(np.int64, (d, n), elements=st.integers(0, 3)))
    diff = data.draw(arrays(np.int64, n, elements=st.sampled_from([-1, 1, 2])))
    traces, keys, places, strict = [], [], [], []
    for _ in range(lookups):
        key = data.draw(st.lists(st.integers(0, arity - 1), max_size=2))
        store, fence, ends = _segments(data, len(key), width, d)
        store[-1] = data.draw(arrays(np.int64, store.shape[1], elements=st.sampled_from([-1, 1, 2])))
        traces.append((store, fence, ends))
        keys.append(key)
        places.append(data.draw(st.permutations(range(width))) if lookups > 1 else list(range(width)))
        strict.append(lattice.is_product and data.draw(st.booleans()))
    ready = data.draw(st.permutations(range(n)))[: data.draw(st.integers(0, n))] if n else []
    fuel = data.draw(st.sampled_from([1, 4, 1000]))
    room = data.draw(st.sampled_from([0, 5, 10_000]))

    pad = [traces[0]] * (LOOKUPS - lookups)
    stores, fences, ends = (tuple(t[x] for t in traces + pad) for x in range(3))
    longest = max(len(k) for k in keys)
    key_columns = np.array([k + [0] * (longest - len(k)) for k in keys], np.int64).reshape(lookups, longest)
    out = (np.full((arity + width, room), -7), np.full((d, room), -7), np.full(room, -7))
    done, m = extend_segments(np.array(ready, np.int64), stream, time, diff, stores, fences, ends, lookups, key_columns,
                              np.array([len(k) for k in keys], np.int64), np.array(places, np.int64).reshape(lookups, width),
                              np.array(strict, np.int64), np.array([layer == ALTNEU for layer in layers], np.int64), fuel, *out)

    want_done, want = _expected(ready, stream, time, diff, [_rows(*t[::2]) for t in traces], keys, places, strict, lattice, width, fuel)
    assert done == want_done
    if len(want) > room:
        assert m == -len(want)
        return
    got = [(tuple(out[0][:, c].tolist()), tuple(out[1][:, c].tolist()), int(out[2][c])) for c in range(m)]
    assert got == want
