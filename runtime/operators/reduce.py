"""Reduce: per key, a function of the key's accumulated values, kept current.

For every key, the output accumulated at time t must equal
`f(input accumulated at t)`. New input at time s can change that at s and at
every join of s with a time in the key's history (input or output): these are
the *interesting times*. The operator collects the (key, time) pairs its input
touches, and once such a time is complete (not in advance of the input
frontier) it takes the join-closure with the key's history, evaluates the input
and the output accumulated at each interesting time, and emits the difference.
Interesting times still in advance of the frontier are deferred, with a
capability held for them.

Everything is vectorised across keys and times. Within a key, times are
processed in lexicographic order (a linear extension of the partial order): the
correction at time t is `f(I(t)) - O(t) - sum of corrections at earlier t' <= t`,
which for a chain of times is simply the difference of consecutive residuals.

Reducers receive `(group, val, count)` rows consolidated and sorted by group
then value, and return rows of the same shape for the output.
"""

from __future__ import annotations

import numpy as np

from runtime.batch import INT
from runtime.grouping import run_starts, sort_rows, fresh_pairs, minimal_times, pairs_by_group, sum_by, unique_pairs
from runtime.operators.arrange import Arranged
from runtime.times import Antichain
from runtime.trace import ArrangedBatch, Trace
from runtime.worker import Operator

_NO = np.zeros(0, dtype=np.intp)


# -- reducers --------------------------------------------------------------------


class Reducer:
    """f over consolidated (group, val, count) rows, sorted by group then val."""

    out_arity: int = 1

    def __call__(self, group, val, count):
        raise NotImplementedError


class Distinct(Reducer):
    out_arity = 0

    def __call__(self, group, val, count):
        keep = count > 0
        g = np.unique(group[keep])
        return g, np.zeros((0, len(g)), INT), np.ones(len(g), INT)


class Threshold(Reducer):
    """Output multiplicity `fn(count)` (vectorised over an int64 array)."""

    out_arity = 0

    def __init__(self, fn):
        self.fn = fn

    def __call__(self, group, val, count):
        g, _, c = sum_by(group, val[:0], count)
        out = np.asarray(self.fn(c), dtype=INT)
        keep = out != 0
        return g[keep], np.zeros((0, int(keep.sum())), INT), out[keep]


def _group_starts(group):
    if len(group) == 0:
        return _NO
    return np.concatenate(([0], np.flatnonzero(group[1:] != group[:-1]) + 1))


class Count(Reducer):
    def __call__(self, group, val, count):
        starts = _group_starts(group)
        total = np.add.reduceat(count, starts) if len(starts) else count[:0]
        keep = total != 0
        return group[starts[keep]], total[keep][None, :], np.ones(int(keep.sum()), INT)


class Sum(Reducer):
    def __call__(self, group, val, count):
        starts = _group_starts(group)
        total = np.add.reduceat(val[0] * count, starts) if len(starts) else count[:0]
        return group[starts], total[None, :], np.ones(len(starts), INT)


class Extreme(Reducer):
    """Min (or max) of the values present with positive multiplicity."""

    def __init__(self, val_arity: int, largest: bool):
        self.out_arity = val_arity
        self.largest = largest

    def __call__(self, group, val, count):
        keep = count > 0
        group, val = group[keep], val[:, keep]
        if len(group) == 0:
            return group, val, count[:0]
        if self.largest:
            pick = np.concatenate((np.flatnonzero(group[1:] != group[:-1]), [len(group) - 1]))
        else:
            pick = _group_starts(group)
        return group[pick], val[:, pick], np.ones(len(pick), INT)


class PythonReducer(Reducer):
    """A row-level function `f(key, [(val, count), ...]) -> [(val, count), ...]`."""

    def __init__(self, fn, codec, key_types, val_types, out_types):
        self.fn, self.codec = fn, codec
        self.key_types, self.val_types, self.out_types = key_types, val_types, out_types
        self.out_arity = len(out_types)
        self.keys = None  # (k, g) key columns of the current groups, set by the operator

    def __call__(self, group, val, count):
        keys = self.codec.decode_rows(self.keys, self.key_types)
        vals = self.codec.decode_rows(val, self.val_types)
        starts = list(_group_starts(group)) + [len(group)]
        out_group, out_rows, out_counts = [], [], []
        for s, e in zip(starts[:-1], starts[1:]):
            g = int(group[s])
            key = keys[g]
            for row, c in self.fn(key[0] if len(key) == 1 else key, [(vals[i], int(count[i])) for i in range(s, e)]):
                out_group.append(g)
                out_rows.append(tuple(row) if isinstance(row, (tuple, list)) else (row,))
                out_counts.append(int(c))
        data = self.codec.encode_rows(out_rows, self.out_types)
        return np.asarray(out_group, INT), data, np.asarray(out_counts, INT)


# -- the operator ------------------------------------------------------------------


class ReduceOp(Operator):
    name = "reduce"
    needs_frontier = True

    def __init__(self, dataflow, source: Arranged, reducer: Reducer, label: str = "reduce"):
        self.name = label
        self.reducer = reducer
        lat = source.stream.lattice
        self.lattice = lat
        self.in_trace = source.trace
        self.in_handle = source.trace.new_handle()
        self.out_trace = Trace(lat, source.key_arity, reducer.out_arity, name=f"{label} output")
        self.out_handle = self.out_trace.new_handle()
        kk = source.key_arity
        self.key_arity = kk
        self.pending_hash = np.zeros(0, INT)
        self.pending_key = np.zeros((kk, 0), INT)
        self.pending_time = np.zeros((lat.depth, 0), INT)
        super().__init__(dataflow, [[source.stream]], [lat], [lat])

    def arranged(self) -> Arranged:
        return Arranged(self.output(), self.out_trace, self.key_arity)

    def has_pending(self) -> bool:
        return len(self.pending_hash) > 0

    def run(self):
        received = self.receive(0)
        for b in received:
            self.pending_hash = np.concatenate([self.pending_hash, b.keyhash])
            self.pending_key = np.concatenate([self.pending_key, b.key], axis=1)
            self.pending_time = np.concatenate([self.pending_time, b.time], axis=1)
        if not len(self.pending_hash):
            return
        if received:
            # Hold capabilities for the new work before asking for the frontier:
            # what this operator is about to emit may come back round a loop.
            self.set_capabilities(minimal_times(self.lattice, self.pending_time))
        frontier = self.frontier(0)
        future = frontier.in_advance_mask(self.pending_time)
        if future.all():
            self._hold(frontier)
            return
        ready = ~future
        keyhash, key, time = self.pending_hash[ready], self.pending_key[:, ready], self.pending_time[:, ready]
        self.pending_hash = self.pending_hash[future]
        self.pending_key = self.pending_key[:, future]
        self.pending_time = self.pending_time[:, future]
        self._process(keyhash, key, time, frontier)
        self._hold(frontier)

    def _hold(self, frontier: Antichain) -> None:
        if len(self.pending_hash):
            # Keep each pending (key, time) once.
            rows = np.concatenate([self.pending_key, self.pending_time], axis=0)
            order = sort_rows(self.pending_hash, rows)
            starts = run_starts(self.pending_hash[order], rows[:, order])
            idx = order[starts]
            self.pending_hash, self.pending_key, self.pending_time = (
                self.pending_hash[idx], self.pending_key[:, idx], self.pending_time[:, idx])
        self.set_capabilities(minimal_times(self.lattice, self.pending_time))
        # Everything not in advance of the frontier is done: the traces may
        # forget distinctions between earlier times.
        self.in_handle.set_frontier(frontier)
        self.out_handle.set_frontier(frontier)

    def _process(self, keyhash, key, time, frontier: Antichain) -> None:
        lat = self.lattice
        # Distinct keys, each with an index g.
        order = sort_rows(keyhash, key)
        starts = run_starts(keyhash[order], key[:, order])
        marks = np.zeros(len(order), INT)
        marks[starts] = 1
        gid = np.empty(len(keyhash), INT)
        gid[order] = np.cumsum(marks) - 1
        ukeyhash, ukey = keyhash[order[starts]], key[:, order[starts]]
        ngroups = len(starts)

        # Histories, advanced to what has already been processed.
        since = self.in_handle.frontier
        i_owner, i_hist = self.in_trace.lookup(ukeyhash, ukey)
        o_owner, o_hist = self.out_trace.lookup(ukeyhash, ukey)
        i_time = lat.advance_by(i_hist.time, since)
        o_time = lat.advance_by(o_hist.time, since)

        # Interesting times: the join-closure of the new times with the history.
        cand_g, cand_t = unique_pairs(gid, time)
        hist_g, hist_t = unique_pairs(np.concatenate([i_owner, o_owner]).astype(INT), np.concatenate([i_time, o_time], axis=1))
        new_g, new_t = cand_g, cand_t
        while len(new_g):
            pool_g = np.concatenate([hist_g, cand_g])
            pool_t = np.concatenate([hist_t, cand_t], axis=1)
            order = np.argsort(pool_g, kind="stable")
            a, b = pairs_by_group(new_g, pool_g[order])
            b = order[b]
            joined = lat.join_arrays(new_t[:, a], pool_t[:, b])
            new_g, new_t = fresh_pairs(cand_g, cand_t, new_g[a], joined)
            if len(new_g):
                cand_g, cand_t = unique_pairs(np.concatenate([cand_g, new_g]), np.concatenate([cand_t, new_t], axis=1))

        later = frontier.in_advance_mask(cand_t)
        if later.any():
            self.pending_hash = np.concatenate([self.pending_hash, ukeyhash[cand_g[later]]])
            self.pending_key = np.concatenate([self.pending_key, ukey[:, cand_g[later]]], axis=1)
            self.pending_time = np.concatenate([self.pending_time, cand_t[:, later]], axis=1)
            cand_g, cand_t = cand_g[~later], cand_t[:, ~later]
        if not len(cand_g):
            return
        ncand = len(cand_g)  # sorted by group, then time

        # Input accumulated at each candidate time, then the desired output.
        acc_c, acc_v, acc_d = self._accumulate(cand_g, cand_t, i_owner, i_hist.val, i_time, i_hist.diff)
        if isinstance(self.reducer, PythonReducer):
            self.reducer.keys = ukey[:, cand_g]
        want_c, want_v, want_d = self.reducer(acc_c, acc_v, acc_d)
        have_c, have_v, have_d = self._accumulate(cand_g, cand_t, o_owner, o_hist.val, o_time, o_hist.diff)
        res_c, res_v, res_d = sum_by(
            np.concatenate([want_c, have_c]), np.concatenate([want_v, have_v], axis=1), np.concatenate([want_d, -have_d]))

        # Corrections: residual minus the corrections already made at earlier times.
        first = np.ones(ncand, dtype=bool)
        first[1:] = cand_g[1:] != cand_g[:-1]
        chain = first[1:] | lat.le_arrays(cand_t[:, :-1], cand_t[:, 1:])
        if chain.all():
            nxt = np.flatnonzero(~first)  # candidate i has a successor i+1... shift by one
            has_next = np.zeros(ncand, dtype=bool)
            has_next[nxt - 1] = True
            moved = has_next[res_c]
            out_c, out_v, out_d = sum_by(
                np.concatenate([res_c, res_c[moved] + 1]),
                np.concatenate([res_v, res_v[:, moved]], axis=1),
                np.concatenate([res_d, -res_d[moved]]))
        else:
            out_c, out_v, out_d = self._corrections_by_rank(cand_g, cand_t, first, res_c, res_v, res_d)
        if not len(out_c):
            return
        out = ArrangedBatch.build(ukey[:, cand_g[out_c]], out_v, cand_t[:, out_c], out_d, keyhash=ukeyhash[cand_g[out_c]])
        self.out_trace.insert(out)
        self.send(out)

    def _accumulate(self, cand_g, cand_t, owner, val, htime, diff):
        """(candidate, val, count): the history of each candidate's key summed up to its time."""
        order = np.argsort(owner, kind="stable")
        c, h = pairs_by_group(cand_g, owner[order].astype(INT))
        h = order[h]
        if len(c):
            le = self.lattice.le_arrays(htime[:, h], cand_t[:, c])
            c, h = c[le], h[le]
        return sum_by(c.astype(INT), val[:, h], diff[h])

    def _corrections_by_rank(self, cand_g, cand_t, first, res_c, res_v, res_d):
        """General partial orders: process each key's k-th time together, k = 0, 1, ..."""
        lat = self.lattice
        start_of = np.maximum.accumulate(np.where(first, np.arange(len(cand_g)), 0))
        rank = np.arange(len(cand_g)) - start_of
        made_c, made_v, made_d = res_c[:0], res_v[:, :0], res_d[:0]
        for r in range(int(rank.max()) + 1):
            current = np.flatnonzero(rank == r)
            in_cur = np.zeros(len(cand_g), dtype=bool)
            in_cur[current] = True
            sel = in_cur[res_c]
            parts_c, parts_v, parts_d = [res_c[sel]], [res_v[:, sel]], [res_d[sel]]
            if len(made_c):
                # Corrections already made at times <= the current candidate's.
                made_g = cand_g[made_c]
                order = np.argsort(made_g, kind="stable")
                c, m = pairs_by_group(cand_g[current], made_g[order])
                m = order[m]
                le = lat.le_arrays(cand_t[:, made_c[m]], cand_t[:, current[c]])
                c, m = c[le], m[le]
                parts_c.append(current[c])
                parts_v.append(made_v[:, m])
                parts_d.append(-made_d[m])
            cc, cv, cd = sum_by(np.concatenate(parts_c), np.concatenate(parts_v, axis=1), np.concatenate(parts_d))
            made_c = np.concatenate([made_c, cc])
            made_v = np.concatenate([made_v, cv], axis=1)
            made_d = np.concatenate([made_d, cd])
        return made_c, made_v, made_d
