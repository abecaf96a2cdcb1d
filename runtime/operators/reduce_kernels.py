"""Compiled per-key loops of `reduce`: interesting times, accumulation, corrections.

These are the genuinely irregular parts of differential dataflow's reduce: each
key has its own small set of times, partially ordered, and what happens at one
time depends on the others. Written as numba-compiled loops over arrays sorted
by group, they cost one call per batch instead of dozens of numpy calls per
step. Times are columns of a (depth, n) int64 array; `alt[k]` marks coordinate
k as an AltNeu flag (compared only when the coordinates before it are equal).
"""

from __future__ import annotations

import numba
import numpy as np

from runtime.jit import helper, inlined, kernel
from runtime.kernels import I, M, V, advance_product, nt, same_columns

B = nt.Array(nt.boolean, 1, "A")


@helper
def _le(ta, ia, tb, ib, alt):
    """ta[:, ia] <= tb[:, ib] in the lattice described by `alt`."""
    d = ta.shape[0]
    k = d - 1
    while k >= 0:
        if alt[k]:
            same = True
            for j in range(k):
                if ta[j, ia] != tb[j, ib]:
                    same = False
                    break
            if same:
                return ta[k, ia] <= tb[k, ib]
        elif ta[k, ia] > tb[k, ib]:
            return False
        k -= 1
    return True


@helper
def _join_into(ta, ia, tb, ib, alt, out, io):
    """out[:, io] = join(ta[:, ia], tb[:, ib])."""
    d = ta.shape[0]
    for k in range(d):
        if alt[k]:
            a_is = True
            b_is = True
            for j in range(k):
                if out[j, io] != ta[j, ia]:
                    a_is = False
                if out[j, io] != tb[j, ib]:
                    b_is = False
            out[k, io] = 1 if (a_is and ta[k, ia] == 1) or (b_is and tb[k, ib] == 1) else 0
        else:
            out[k, io] = max(ta[k, ia], tb[k, ib])


@helper
def _group_bounds(group, ngroups):
    """bounds[g]:bounds[g+1] is the slice of sorted `group` equal to g."""
    bounds = np.zeros(ngroups + 1, np.int64)
    for g in group:
        bounds[g + 1] += 1
    for g in range(ngroups):
        bounds[g + 1] += bounds[g]
    return bounds


@helper
def _time_hash(t, i):
    h = np.uint64(0x2545F4914F6CDD1D)
    for k in range(t.shape[0]):
        h = (h ^ np.uint64(t[k, i])) * np.uint64(0x9E3779B97F4A7C15)
        h ^= h >> np.uint64(29)
    return np.int64(h)


@helper
def _add_time(heads, scratch, g, start, n, cap, out_g, out_t, chain):
    """Append scratch[:, 0] for group g unless already among out[start:n].

    Small sets are scanned; from 32 elements on, a hash table of times (chained
    through `chain`) is kept in `heads`.
    """
    if n - start < 32:
        for q in range(start, n):
            if same_columns(out_t, q, scratch, 0):
                return n, cap, out_g, out_t, chain
        h = np.int64(0)
    else:
        if len(heads) == 0:
            for q in range(start, n):
                hq = _time_hash(out_t, q)
                chain[q] = heads[hq] if hq in heads else -1
                heads[hq] = q
        h = _time_hash(scratch, 0)
        q = heads[h] if h in heads else -1
        while q >= 0:
            if same_columns(out_t, q, scratch, 0):
                return n, cap, out_g, out_t, chain
            q = chain[q]
    if n == cap:
        cap *= 2
        out_g = np.concatenate((out_g, np.empty(cap - n, np.int64)))
        out_t = np.concatenate((out_t, np.empty((out_t.shape[0], cap - n), np.int64)), axis=1)
        chain = np.concatenate((chain, np.empty(cap - n, np.int64)))
    out_t[:, n] = scratch[:, 0]
    out_g[n] = g
    if len(heads):
        chain[n] = heads[h] if h in heads else -1
        heads[h] = n
    return n + 1, cap, out_g, out_t, chain


@kernel(I, V, M, V, M, B)
def interesting_times(ngroups, new_g, new_t, hist_g, hist_t, alt):
    """Per group, the closure of its new times under join with history and each other.

    new_* and hist_* are sorted by group. Returns (group, time) pairs, each once.
    Membership is a hash table of times (chained through `chain`). Cost: the
    closure's size times the number of generators.
    """
    d = new_t.shape[0]
    nb = _group_bounds(new_g, ngroups)
    hb = _group_bounds(hist_g, ngroups)
    cap = max(16, 2 * new_t.shape[1])
    out_g = np.empty(cap, np.int64)
    out_t = np.empty((d, cap), np.int64)
    chain = np.empty(cap, np.int64)
    n = 0
    scratch = np.empty((d, 1), np.int64)
    heads = numba.typed.Dict.empty(key_type=numba.int64, value_type=numba.int64)
    for g in range(ngroups):
        start = n
        if len(heads):
            heads = numba.typed.Dict.empty(key_type=numba.int64, value_type=numba.int64)
        nh = hb[g + 1] - hb[g]
        # The closure of a set under join is reached by joining each element
        # found with the generators only: the history and the new times.
        for i in range(nb[g], nb[g + 1]):
            scratch[:, 0] = new_t[:, i]
            n, cap, out_g, out_t, chain = _add_time(heads, scratch, g, start, n, cap, out_g, out_t, chain)
        nn = nb[g + 1] - nb[g]
        # History at or before every new time joins every candidate to itself.
        useful = np.empty(nh, np.int64)
        nu = 0
        for r in range(nh):
            below_all = True
            for i in range(nb[g], nb[g + 1]):
                if not _le(hist_t, hb[g] + r, new_t, i, alt):
                    below_all = False
                    break
            if not below_all:
                useful[nu] = hb[g] + r
                nu += 1
        s = start
        while s < n:
            for r in range(nu + nn):
                if r < nu:
                    _join_into(out_t, s, hist_t, useful[r], alt, scratch, 0)
                else:
                    _join_into(out_t, s, new_t, nb[g] + r - nu, alt, scratch, 0)
                n, cap, out_g, out_t, chain = _add_time(heads, scratch, g, start, n, cap, out_g, out_t, chain)
            s += 1
    return out_g[:n], out_t[:, :n]


@helper
def _sweep_closure(gx, gy, fresh, size, order, g, n, out_g, out_t, ys):
    """Append group g's interesting times, from its generators, to out[n:].

    In one or two dimensions under the product order the join-closure needs no
    search: t = (x, y) is a join of generators containing a new time iff some
    generator has x-coordinate x and y-coordinate at most y, some generator at
    or before x has y-coordinate y, and some new time is at or before t. One
    sweep over the generators in x order, keeping the sorted set of
    y-coordinates seen, lists exactly those times, sorted and once each; the
    cost is the closure's size. (One dimension is the case y = 0.)
    """
    d = out_t.shape[0]
    if size <= 32:
        for i in range(size):
            x = gx[i]
            j = i - 1
            while j >= 0 and gx[order[j]] > x:
                order[j + 1] = order[j]
                j -= 1
            order[j + 1] = i
    else:
        order[:size] = np.argsort(gx[:size], kind="mergesort")
    none = np.iinfo(np.int64).max
    ny = 0
    min_new_y = none
    p = 0
    while p < size:
        x = gx[order[p]]
        min_y_here = none
        while p < size and gx[order[p]] == x:
            y = gy[order[p]]
            if fresh[order[p]]:
                min_new_y = min(min_new_y, y)
            min_y_here = min(min_y_here, y)
            p += 1
            at = np.searchsorted(ys[:ny], y)
            if at < ny and ys[at] == y:
                continue
            if ny == ys.shape[0]:
                ys = np.concatenate((ys, np.empty(ny, np.int64)))
            for q in range(ny, at, -1):
                ys[q] = ys[q - 1]
            ys[at] = y
            ny += 1
        if min_new_y == none:
            continue
        lo = max(min_y_here, min_new_y)
        for at in range(np.searchsorted(ys[:ny], lo), ny):
            if n == out_g.shape[0]:
                grow = max(16, n)
                out_g = np.concatenate((out_g, np.empty(grow, np.int64)))
                out_t = np.concatenate((out_t, np.empty((d, grow), np.int64)), axis=1)
            out_g[n] = g
            out_t[0, n] = x
            if d == 2:
                out_t[1, n] = ys[at]
            n += 1
    return n, out_g, out_t, ys, ny


@helper
def _gather_group(parts, g, gx, gy, fresh, order):
    """Generators of group g from (times, bounds, positions, is_new) parts into
    the scratch arrays (x, y, is-new; grown when too small): returns their count."""
    size = 0
    for times, bounds, pos, is_new in parts:
        size += bounds[g + 1] - bounds[g]
    if size > gx.shape[0]:
        gx = np.empty(2 * size, np.int64)
        gy = np.zeros(2 * size, np.int64)
        fresh = np.zeros(2 * size, np.bool_)
        order = np.empty(2 * size, np.int64)
    k = 0
    for times, bounds, pos, is_new in parts:
        for r in range(bounds[g], bounds[g + 1]):
            i = pos[r]
            gx[k] = times[0, i]
            if times.shape[0] == 2:
                gy[k] = times[1, i]
            fresh[k] = is_new
            k += 1
    return size, gx, gy, fresh, order


@helper
def _by_group(group, ngroups):
    """(bounds, positions): positions[bounds[g]:bounds[g+1]] are the indices of group g."""
    bounds = _group_bounds(group, ngroups)  # counts; the order of `group` does not matter
    fill = bounds[:-1].copy()
    pos = np.empty(group.shape[0], np.int64)
    for i in range(group.shape[0]):
        pos[fill[group[i]]] = i
        fill[group[i]] += 1
    return bounds, pos


@kernel(I, V, M, V, M, V, M)
def product_interesting_times(ngroups, new_g, new_t, a_g, a_t, b_g, b_t):
    """`interesting_times` for epochs or (epoch, iteration) pairs: `_sweep_closure` per group.

    The new times and the two parts of the history (input and output) may come
    in any order. Returns (group, time) pairs sorted by group then time.
    """
    nb, npos = _by_group(new_g, ngroups)
    ab, apos = _by_group(a_g, ngroups)
    bb, bpos = _by_group(b_g, ngroups)
    parts = ((new_t, nb, npos, True), (a_t, ab, apos, False), (b_t, bb, bpos, False))
    out_g = np.empty(max(16, 2 * new_t.shape[1]), np.int64)
    out_t = np.empty((new_t.shape[0], out_g.shape[0]), np.int64)
    ys = np.empty(16, np.int64)
    gx, gy, fresh, order = np.empty(16, np.int64), np.zeros(16, np.int64), np.zeros(16, np.bool_), np.empty(16, np.int64)
    n = 0
    for g in range(ngroups):
        if nb[g] == nb[g + 1]:
            continue
        size, gx, gy, fresh, order = _gather_group(parts, g, gx, gy, fresh, order)
        n, out_g, out_t, ys, _ = _sweep_closure(gx, gy, fresh, size, order, g, n, out_g, out_t, ys)
    return out_g[:n], out_t[:, :n]


@helper
def _le_product(a, ia, b, ib):
    for k in range(a.shape[0]):
        if a[k, ia] > b[k, ib]:
            return False
    return True


@helper
def _sorted_by_x(times, pos, lo, hi, scratch):
    """pos[lo:hi] ordered by the first time coordinate, in `scratch` (grown if needed)."""
    k = hi - lo
    if k > scratch.shape[0]:
        scratch = np.empty(2 * k, np.int64)
    for r in range(k):
        scratch[r] = pos[lo + r]
    if k <= 32:
        for i in range(1, k):
            v = scratch[i]
            j = i - 1
            while j >= 0 and times[0, scratch[j]] > times[0, v]:
                scratch[j + 1] = scratch[j]
                j -= 1
            scratch[j + 1] = v
    else:
        part = scratch[:k].copy()
        scratch[:k] = part[np.argsort(times[0, part], kind="mergesort")]
    return scratch, k


@helper
def _y_index(ys, ny, times, i):
    """Index among the sorted y-coordinates ys[:ny] of time i's y (0 in one dimension)."""
    if times.shape[0] == 1:
        return 0
    return np.searchsorted(ys[:ny], times[1, i])


@helper
def _bit_add(tree, n, i, v):
    i += 1
    while i <= n:
        tree[i] += v
        i += i & (-i)


@helper
def _bit_prefix(tree, i):
    """Sum of entries 0..i."""
    i += 1
    total = 0
    while i > 0:
        total += tree[i]
        i -= i & (-i)
    return total


CHAIN_LIMIT = 32


@inlined
def _push_time(n, out_g, out_t, g, x, y):
    """Append (g, (x, y)) at n, doubling the arrays when full."""
    if n == out_g.shape[0]:
        out_g = np.concatenate((out_g, np.empty(n, np.int64)))
        out_t = np.concatenate((out_t, np.empty((out_t.shape[0], n), np.int64)), axis=1)
    out_g[n] = g
    out_t[0, n] = x
    if out_t.shape[0] == 2:
        out_t[1, n] = y
    return n + 1, out_g, out_t


@inlined
def _push_out(n, out_g, out_t, out_d, g, x, y, diff):
    """Append (g, (x, y), diff) at n, doubling the arrays when full."""
    if n == out_d.shape[0]:
        out_d = np.concatenate((out_d, np.empty(n, np.int64)))
    out_d[n] = diff
    n, out_g, out_t = _push_time(n, out_g, out_t, g, x, y)
    return n, out_g, out_t, out_d


@inlined
def _chain_step(g, new, inputs, outputs, frontier, st, skd, n_out, out_g, out_t, out_d, n_later, later_g, later_t):
    """distinct_step for group g when its times form a chain (are pairwise comparable).

    Most groups are chains: every time of one epoch's iterations, or histories
    compacted into the current epoch. A chain's join-closure is itself, so the
    interesting times are the group's times at or after its first new time,
    and one sweep in order accumulates input, output and corrections as
    plain sums. Returns done=False (nothing written) when the group is larger
    than CHAIN_LIMIT or not a chain; the general path then takes it.
    """
    time, nb, npos = new
    i_t, i_d, ib, ipos = inputs
    o_t, o_d, ob, opos = outputs
    two = time.shape[0] == 2
    size = (nb[g + 1] - nb[g]) + (ib[g + 1] - ib[g]) + (ob[g + 1] - ob[g])
    if size > CHAIN_LIMIT:
        return False, n_out, out_g, out_t, out_d, n_later, later_g, later_t
    # Gather (x, y) with kind (0 new, 1 input, 2 output) and diff, insertion-sorted by (x, y).
    k = 0
    for part in range(3):
        if part == 0:
            lo, hi = nb[g], nb[g + 1]
        elif part == 1:
            lo, hi = ib[g], ib[g + 1]
        else:
            lo, hi = ob[g], ob[g + 1]
        for r in range(lo, hi):
            if part == 0:
                i = npos[r]
                x = time[0, i]
                y = time[1, i] if two else 0
                diff = 0
            elif part == 1:
                i = ipos[r]
                x = i_t[0, i]
                y = i_t[1, i] if two else 0
                diff = i_d[i]
            else:
                i = opos[r]
                x = o_t[0, i]
                y = o_t[1, i] if two else 0
                diff = o_d[i]
            j = k - 1
            while j >= 0 and (st[0, j] > x or (st[0, j] == x and st[1, j] > y)):
                st[0, j + 1] = st[0, j]
                st[1, j + 1] = st[1, j]
                skd[0, j + 1] = skd[0, j]
                skd[1, j + 1] = skd[1, j]
                j -= 1
            st[0, j + 1] = x
            st[1, j + 1] = y
            skd[0, j + 1] = part
            skd[1, j + 1] = diff
            k += 1
    for j in range(1, k):
        if st[1, j] < st[1, j - 1]:
            return False, n_out, out_g, out_t, out_d, n_later, later_g, later_t
    acc_in = 0
    acc_out = 0
    acc_e = 0
    started = False
    p = 0
    while p < k:
        x = st[0, p]
        y = st[1, p]
        while p < k and st[0, p] == x and st[1, p] == y:
            kind = skd[0, p]
            if kind == 0:
                started = True
            elif kind == 1:
                acc_in += skd[1, p]
            else:
                acc_out += skd[1, p]
            p += 1
        if not started:
            continue
        future = False
        for f in range(frontier.shape[1]):
            if frontier[0, f] <= x and (not two or frontier[1, f] <= y):
                future = True
                break
        if future:
            n_later, later_g, later_t = _push_time(n_later, later_g, later_t, g, x, y)
            continue
        e = (1 if acc_in > 0 else 0) - acc_out - acc_e
        if e != 0:
            acc_e += e
            n_out, out_g, out_t, out_d = _push_out(n_out, out_g, out_t, out_d, g, x, y, e)
    return True, n_out, out_g, out_t, out_d, n_later, later_g, later_t


@kernel(I, V, M, V, M, V, V, M, V, M, M)
def distinct_step(ngroups, gid, time, i_g, i_t, i_d, o_g, o_t, o_d, since, frontier):
    """Distinct's whole update for keys without values, in epoch or (epoch, iteration) time.

    For each group with new times: the interesting times (`_sweep_closure`),
    those in advance of `frontier` set aside as later work, and at the rest, in
    lexicographic order, the correction `[I(t) > 0] - O(t) - earlier
    corrections at or before t`, where I and O accumulate the input and output
    histories (times advanced by `since`). Inputs may come in any order.
    Returns (group, time, diff) of the corrections and (group, time) of the
    later work.
    """
    d = time.shape[0]
    i_t = advance_product(i_t, since)
    o_t = advance_product(o_t, since)
    nb, npos = _by_group(gid, ngroups)
    ib, ipos = _by_group(i_g, ngroups)
    ob, opos = _by_group(o_g, ngroups)
    parts = ((time, nb, npos, True), (i_t, ib, ipos, False), (o_t, ob, opos, False))
    cand_g = np.empty(16, np.int64)
    cand_t = np.empty((d, 16), np.int64)
    ys = np.empty(16, np.int64)
    out_g = np.empty(16, np.int64)
    out_t = np.empty((d, 16), np.int64)
    out_d = np.empty(16, np.int64)
    later_g = np.empty(16, np.int64)
    later_t = np.empty((d, 16), np.int64)
    gx, gy, fresh, order = np.empty(16, np.int64), np.zeros(16, np.int64), np.zeros(16, np.bool_), np.empty(16, np.int64)
    hin, hout = np.empty(16, np.int64), np.empty(16, np.int64)
    bit_in, bit_out, bit_e = np.zeros(17, np.int64), np.zeros(17, np.int64), np.zeros(17, np.int64)
    n_out = 0
    n_later = 0
    scratch_t = np.empty((2, CHAIN_LIMIT), np.int64)
    scratch_kd = np.empty((2, CHAIN_LIMIT), np.int64)
    for g in range(ngroups):
        if nb[g] == nb[g + 1]:
            continue
        done, n_out, out_g, out_t, out_d, n_later, later_g, later_t = _chain_step(
            g, (time, nb, npos), (i_t, i_d, ib, ipos), (o_t, o_d, ob, opos), frontier, scratch_t, scratch_kd,
            n_out, out_g, out_t, out_d, n_later, later_g, later_t,
        )
        if done:
            continue
        size, gx, gy, fresh, order = _gather_group(parts, g, gx, gy, fresh, order)
        nc, cand_g, cand_t, ys, ny = _sweep_closure(gx, gy, fresh, size, order, g, 0, cand_g, cand_t, ys)
        # Sweep candidates and histories in x order; Fenwick trees over the
        # y-coordinates hold the input, the output and the corrections made so
        # far, so each accumulation is a prefix sum.
        hin, nin = _sorted_by_x(i_t, ipos, ib[g], ib[g + 1], hin)
        hout, nout = _sorted_by_x(o_t, opos, ob[g], ob[g + 1], hout)
        if ny + 1 > bit_in.shape[0]:
            bit_in, bit_out, bit_e = np.zeros(2 * ny + 1, np.int64), np.zeros(2 * ny + 1, np.int64), np.zeros(2 * ny + 1, np.int64)
        bit_in[:ny + 1] = 0
        bit_out[:ny + 1] = 0
        bit_e[:ny + 1] = 0
        a = 0
        b = 0
        for c in range(nc):
            x = cand_t[0, c]
            while a < nin and i_t[0, hin[a]] <= x:
                _bit_add(bit_in, ny, _y_index(ys, ny, i_t, hin[a]), i_d[hin[a]])
                a += 1
            while b < nout and o_t[0, hout[b]] <= x:
                _bit_add(bit_out, ny, _y_index(ys, ny, o_t, hout[b]), o_d[hout[b]])
                b += 1
            future = False
            for f in range(frontier.shape[1]):
                if _le_product(frontier, f, cand_t, c):
                    future = True
                    break
            if future:
                if n_later == later_g.shape[0]:
                    later_g = np.concatenate((later_g, np.empty(n_later, np.int64)))
                    later_t = np.concatenate((later_t, np.empty((d, n_later), np.int64)), axis=1)
                later_g[n_later] = g
                later_t[:, n_later] = cand_t[:, c]
                n_later += 1
                continue
            yi = _y_index(ys, ny, cand_t, c)
            acc_in = _bit_prefix(bit_in, yi)
            e = (1 if acc_in > 0 else 0) - _bit_prefix(bit_out, yi) - _bit_prefix(bit_e, yi)
            if e != 0:
                _bit_add(bit_e, ny, yi, e)
                if n_out == out_g.shape[0]:
                    out_g = np.concatenate((out_g, np.empty(n_out, np.int64)))
                    out_t = np.concatenate((out_t, np.empty((d, n_out), np.int64)), axis=1)
                    out_d = np.concatenate((out_d, np.empty(n_out, np.int64)))
                out_g[n_out] = g
                out_t[:, n_out] = cand_t[:, c]
                out_d[n_out] = e
                n_out += 1
    return out_g[:n_out], out_t[:, :n_out], out_d[:n_out], later_g[:n_later], later_t[:, :n_later]


@kernel(I, V, M, V, V, M, V, B)
def accumulate(ngroups, cand_g, cand_t, hist_g, hist_v, hist_t, hist_d, alt):
    """For each candidate c, sum per value id of its group's history up to c's time.

    cand_* sorted by group; hist_* sorted by group with value ids `hist_v`
    numbered so that each group's ids are contiguous and ordered by value.
    Returns (candidate, value id, count) with count != 0, sorted by candidate
    then value id.
    """
    cb = _group_bounds(cand_g, ngroups)
    hb = _group_bounds(hist_g, ngroups)
    cap = 16
    out_c = np.empty(cap, np.int64)
    out_v = np.empty(cap, np.int64)
    out_d = np.empty(cap, np.int64)
    n = 0
    for g in range(ngroups):
        h0, h1 = hb[g], hb[g + 1]
        if h0 == h1:
            continue
        vlo = hist_v[h0]
        vhi = vlo
        for h in range(h0, h1):
            vlo = min(vlo, hist_v[h])
            vhi = max(vhi, hist_v[h])
        acc = np.zeros(vhi - vlo + 1, np.int64)
        for c in range(cb[g], cb[g + 1]):
            acc[:] = 0
            for h in range(h0, h1):
                if _le(hist_t, h, cand_t, c, alt):
                    acc[hist_v[h] - vlo] += hist_d[h]
            for v in range(acc.shape[0]):
                if acc[v] != 0:
                    if n == cap:
                        cap *= 2
                        out_c = np.concatenate((out_c, np.empty(cap - n, np.int64)))
                        out_v = np.concatenate((out_v, np.empty(cap - n, np.int64)))
                        out_d = np.concatenate((out_d, np.empty(cap - n, np.int64)))
                    out_c[n] = c
                    out_v[n] = v + vlo
                    out_d[n] = acc[v]
                    n += 1
    return out_c[:n], out_v[:n], out_d[:n]


@kernel(I, V, M, V, V, V, B)
def corrections(ngroups, cand_g, cand_t, res_c, res_v, res_d, alt):
    """Per group, in candidate order: e(t) = R(t) - sum of e(t') over earlier t' <= t.

    Candidates are sorted by group then time (a linear extension); residual rows
    (candidate, value id, diff) are sorted by candidate, value ids contiguous
    per group. Returns the nonzero corrections (candidate, value id, diff).
    """
    cb = _group_bounds(cand_g, ngroups)
    ncand = cand_g.shape[0]
    rb = np.zeros(ncand + 1, np.int64)
    for c in res_c:
        rb[c + 1] += 1
    for c in range(ncand):
        rb[c + 1] += rb[c]
    out_c = np.empty(16, np.int64)
    out_v = np.empty(16, np.int64)
    out_d = np.empty(16, np.int64)
    n = 0
    for g in range(ngroups):
        c0, c1 = cb[g], cb[g + 1]
        if rb[c0] == rb[c1]:
            continue
        vlo = res_v[rb[c0]]
        vhi = vlo
        for r in range(rb[c0], rb[c1]):
            vlo = min(vlo, res_v[r])
            vhi = max(vhi, res_v[r])
        width = vhi - vlo + 1
        made = np.zeros((c1 - c0, width), np.int64)
        for c in range(c0, c1):
            row = made[c - c0]
            for r in range(rb[c], rb[c + 1]):
                row[res_v[r] - vlo] += res_d[r]
            for p in range(c0, c):
                if _le(cand_t, p, cand_t, c, alt):
                    row -= made[p - c0]
            for v in range(width):
                if row[v] != 0:
                    if n == out_c.shape[0]:
                        grow = out_c.shape[0]
                        out_c = np.concatenate((out_c, np.empty(grow, np.int64)))
                        out_v = np.concatenate((out_v, np.empty(grow, np.int64)))
                        out_d = np.concatenate((out_d, np.empty(grow, np.int64)))
                    out_c[n] = c
                    out_v[n] = v + vlo
                    out_d[n] = row[v]
                    n += 1
    return out_c[:n], out_v[:n], out_d[:n]
