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

from runtime.jit import borrowed, helper, inlined, kept_alive, kernel, prefetch
from runtime.kernels import I, M, V, grown_block, grown_row, lex_order, nt, same_columns
from runtime.trace.kernels import C, _key_equal, _seek_inlined, least_coordinates

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
    new_g, new_t, hist_g, hist_t = borrowed(new_g), borrowed(new_t), borrowed(hist_g), borrowed(hist_t)
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
    new_g, new_t, a_g, a_t, b_g, b_t = borrowed(new_g), borrowed(new_t), borrowed(a_g), borrowed(a_t), borrowed(b_g), borrowed(b_t)
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


CHAIN_LIMIT = 32  # groups up to this size are sorted by insertion
_FIRST = np.iinfo(np.int64).min
_LAST = np.iinfo(np.int64).max


@inlined
def _in_advance(frontier, x, y):
    """(x, y) is in advance of the frontier (some element is <= it)."""
    for f in range(frontier.shape[1]):
        if frontier[0, f] <= x and (frontier.shape[0] == 1 or frontier[1, f] <= y):
            return True
    return False


@helper
def _order_by_xy(el, size, order):
    """order[:size]: the group's elements (columns of el) sorted by (x, y), for large groups.

    A bottom-up merge sort of positions, written out: numba's argsort and fancy indexing
    cost seconds of a first run's compilation."""
    for i in range(size):
        order[i] = i
    src, dst = order, np.empty(size, np.int64)
    in_order = True  # which of the two holds the runs merged last
    width = 1
    while width < size:
        lo = 0
        while lo < size:
            mid, hi = min(lo + width, size), min(lo + 2 * width, size)
            a, b, o = lo, mid, lo
            while a < mid and b < hi:
                ea, eb = src[a], src[b]
                if el[0, eb] < el[0, ea] or (el[0, eb] == el[0, ea] and el[1, eb] < el[1, ea]):
                    dst[o] = eb
                    b += 1
                else:
                    dst[o] = ea
                    a += 1
                o += 1
            while a < mid:
                dst[o] = src[a]
                a += 1
                o += 1
            while b < hi:
                dst[o] = src[b]
                b += 1
                o += 1
            lo = hi
        src, dst = dst, src
        in_order = not in_order
        width *= 2
    if not in_order:
        for i in range(size):
            order[i] = src[i]


@kernel(M, M, M, M, M)
def ready_work(key, time, pend_key, pend_time, frontier):
    """The (key, time) pairs a run of distinct visits, and the work it keeps for later.

    `key`/`time` (k, n) and (d, n) are pairs to visit (what the run received: one or
    more arranged batches one after the other); `pend_key`/`pend_time` the work kept
    from earlier runs, in any order. Kept pairs in advance of `frontier` stay kept; the
    others join the visited pairs. Returns the visited pairs sorted by key then time,
    and the pairs still kept: one call for what took a dozen numpy calls a run. (The
    caller skips it when nothing is kept and one arranged batch came: a first run
    compiles it only for a program that keeps work.)
    """
    key, time, pend_key, pend_time, frontier = borrowed(key), borrowed(time), borrowed(pend_key), borrowed(pend_time), borrowed(frontier)
    k, d = key.shape[0], time.shape[0]
    n, m = key.shape[1], pend_key.shape[1]
    ready = np.zeros(m, np.bool_)
    nready = 0
    for i in range(m):
        if not _in_advance(frontier, pend_time[0, i], pend_time[1, i] if d == 2 else 0):
            ready[i] = True
            nready += 1
    rest_key = np.empty((k, m - nready), np.int64)
    rest_time = np.empty((d, m - nready), np.int64)
    r = 0
    for i in range(m):
        if not ready[i]:
            for c in range(k):
                rest_key[c, r] = pend_key[c, i]
            for c in range(d):
                rest_time[c, r] = pend_time[c, i]
            r += 1
    all_key = np.empty((k, n + nready), np.int64)
    all_time = np.empty((d, n + nready), np.int64)
    for j in range(n):
        for c in range(k):
            all_key[c, j] = key[c, j]
        for c in range(d):
            all_time[c, j] = time[c, j]
    w = n
    for i in range(m):
        if ready[i]:
            for c in range(k):
                all_key[c, w] = pend_key[c, i]
            for c in range(d):
                all_time[c, w] = pend_time[c, i]
            w += 1
    # lex_order, which arranging compiles anyway (sort_rows would compile seconds more).
    order = lex_order(all_key[0] if k else all_time[0], all_key, all_time)
    work_key = np.empty((k, n + nready), np.int64)
    work_time = np.empty((d, n + nready), np.int64)
    for j in range(n + nready):
        i = order[j]
        for c in range(k):
            work_key[c, j] = all_key[c, i]
        for c in range(d):
            work_time[c, j] = all_time[c, i]
    return work_key, work_time, rest_key, rest_time


@kernel(M, V, V, M, I)
def distinct_general(el, bounds, group, frontier, depth):
    """distinct_fused's work for the keys whose times are not a chain (set aside by it, so
    this is compiled only by programs that meet one): key i's elements are the columns
    bounds[i]:bounds[i+1] of `el` (x, y, kind, diff), its position group[i]. A key whose
    new times share their y-coordinate takes `_level_sweep` (a loop's round over several
    epochs at once: one sort and one pass). Otherwise, or when that finds a time above the
    level due now, the interesting times come from `_sweep_closure`; then, in x order,
    prefix sums of the input, the output and the corrections made so far over Fenwick trees
    indexed by the y-coordinates. Returns (position, time, diff) of the corrections and
    (position, time) of the later work (the least later times with a correction due, or,
    from `_level_sweep`, the least later times), by key then time."""
    el, bounds, group, frontier = borrowed(el), borrowed(bounds), borrowed(group), borrowed(frontier)
    d = depth
    out_g, out_t, out_d = np.empty(16, np.int64), np.empty((d, 16), np.int64), np.empty(16, np.int64)
    later_g, later_t = np.empty(16, np.int64), np.empty((d, 16), np.int64)
    n_out = 0
    n_later = 0
    # Scratch for one key at a time, allocated once: most keys have a handful of elements,
    # and allocating per key cost more than the work.
    width = 1
    for i in range(group.shape[0]):
        width = max(width, bounds[i + 1] - bounds[i])
    gx, gy = np.empty(width, np.int64), np.empty(width, np.int64)
    fresh = np.empty(width, np.bool_)
    hist = np.empty(width, np.int64)  # the key's elements in x order (stable): _sweep_closure sorts them so
    ys = np.empty(16, np.int64)
    cand_g = np.empty(16, np.int64)
    cand_t = np.empty((d, 16), np.int64)
    bits = np.zeros((3, width + 1), np.int64)  # Fenwick trees over the y-coordinates: input, output, corrections
    bit_in, bit_out, bit_e = bits[0], bits[1], bits[2]
    for i in range(group.shape[0]):
        lo, hi = bounds[i], bounds[i + 1]
        size = hi - lo
        g = group[i]
        level = _new_level(el, lo, hi) if d == 2 else _LAST
        if level != _LAST:
            # Room for what the sweep may append (a helper returning the arrays it grew cost
            # 0.02 s more over the 54,136 keys of 1,000 batched reachability updates).
            if n_out + size > out_d.shape[0]:
                out_g, out_t, out_d = grown_row(out_g, n_out + size), grown_block(out_t, n_out + size), grown_row(out_d, n_out + size)
            if n_later + size > later_g.shape[0]:
                later_g, later_t = grown_row(later_g, n_later + size), grown_block(later_t, n_later + size)
            done, n_out, n_later = _level_sweep(el[:, lo:hi], size, level, frontier, g, n_out, out_g, out_t, out_d, n_later, later_g, later_t)
            if done:
                continue
        for r in range(size):
            gx[r] = el[0, lo + r]
            gy[r] = el[1, lo + r]
            fresh[r] = el[2, lo + r] == 0
        kind = el[2, lo:hi]
        diff = el[3, lo:hi]
        nc, cand_g, cand_t, ys, ny = _sweep_closure(gx, gy, fresh, size, hist, g, 0, cand_g, cand_t, ys)
        for r in range(ny + 1):
            bit_in[r] = 0
            bit_out[r] = 0
            bit_e[r] = 0
        a = 0
        least_later_y = _LAST  # the least y of the later times kept so far (they come in x order)
        for c in range(nc):
            x = cand_t[0, c]
            y = cand_t[1, c] if d == 2 else 0
            while a < size and gx[hist[a]] <= x:
                e = hist[a]
                if kind[e] == 1:
                    _bit_add(bit_in, ny, _index_of(ys, ny, gy[e]), diff[e])
                elif kind[e] == 2:
                    _bit_add(bit_out, ny, _index_of(ys, ny, gy[e]), diff[e])
                a += 1
            later = _in_advance(frontier, x, y)
            if later and y >= least_later_y:
                continue  # at or after a later time kept already
            yi = _index_of(ys, ny, y)
            e = (1 if _bit_prefix(bit_in, yi) > 0 else 0) - _bit_prefix(bit_out, yi) - _bit_prefix(bit_e, yi)
            if later:
                if e != 0:  # the least later time with a correction due: the rest are at or after one
                    n_later, later_g, later_t = _push_time(n_later, later_g, later_t, g, x, y)
                    least_later_y = y
                continue
            if e != 0:
                _bit_add(bit_e, ny, yi, e)
                n_out, out_g, out_t, out_d = _push_out(n_out, out_g, out_t, out_d, g, x, y, e)
    return out_g[:n_out], out_t[:, :n_out], out_d[:n_out], later_g[:n_later], later_t[:, :n_later]


@helper
def _new_level(el, lo, hi):
    """The y-coordinate the new elements (kind 0) among columns lo:hi of el share, or _LAST."""
    y = _LAST
    for r in range(lo, hi):
        if el[2, r] == 0:
            if y != _LAST and el[1, r] != y:
                return _LAST
            y = el[1, r]
    return y


@helper
def _level_sweep(el, size, y_new, frontier, g, n_out, out_g, out_t, out_d, n_later, later_g, later_t):
    """Distinct for key g (a position) whose new times all have the y-coordinate y_new though
    its times are no chain (a loop's round over several epochs at once: the round's new times
    beside histories at other iterations). `el` holds the key's elements (x, y, kind, diff)
    sorted by (x, y).

    With x0 the least new x, the interesting times at y_new are (x, y_new) for each x >= x0
    of an element at or below y_new: a chain in x, swept like one, and an element above y_new
    is at or before none of them. Above y_new, the least interesting time at height y is
    (max(x0, least x of an element at y), y). If each of those is in advance of the frontier,
    the minimal ones are kept for later with the first swept time in advance of it (every
    other later time is at or after one of them) and this returns (True, n_out, n_later); the
    arrays have room for `size` more. Otherwise some time above y_new is due now: it returns
    False having kept nothing, for the general closure."""
    x0 = _LAST
    for r in range(size):
        if el[2, r] == 0:
            x0 = min(x0, el[0, r])
    # The minimal times above y_new, in x order: the lowest of the elements at or left of x0
    # (at x0, all of them), then each element right of x0 lower than every one before it.
    least_y = _LAST
    r = 0
    while r < size and el[0, r] <= x0:
        if el[1, r] > y_new:
            least_y = min(least_y, el[1, r])
        r += 1
    n_kept = n_later
    x, y = x0, least_y
    while True:
        if y != _LAST:
            if not _in_advance(frontier, x, y):
                return False, n_out, n_later
            _put_time(later_g, later_t, n_kept, g, x, y)
            n_kept += 1
            y = _LAST
        if r == size:
            break
        if y_new < el[1, r] < least_y:
            x = el[0, r]
            y = least_y = el[1, r]
        r += 1
    acc_in = 0
    acc_out = 0
    acc_e = 0
    r = 0
    while r < size:
        x = el[0, r]
        low = False
        while r < size and el[0, r] == x:
            if el[1, r] <= y_new:
                low = True
                if el[2, r] == 1:
                    acc_in += el[3, r]
                elif el[2, r] == 2:
                    acc_out += el[3, r]
            r += 1
        if x < x0 or not low:
            continue
        if _in_advance(frontier, x, y_new):
            # Every swept time from here on is at or after this one, and so is every time
            # above y_new that is not left of it.
            while n_kept > n_later and later_t[0, n_kept - 1] >= x:
                n_kept -= 1
            _put_time(later_g, later_t, n_kept, g, x, y_new)
            n_kept += 1
            break
        e = (1 if acc_in > 0 else 0) - acc_out - acc_e
        if e != 0:
            acc_e += e
            _put_time(out_g, out_t, n_out, g, x, y_new)
            out_d[n_out] = e
            n_out += 1
    return True, n_out, n_kept


@helper
def _read_floor(time, handle):
    """The least values, (x, y), the histories' times (of depth 1 or 2) are raised to as a run
    reads them: the least of the run's times `time` per coordinate, when that is at or after
    an element of the input handle's frontier `handle`, else the least of that frontier's
    elements per coordinate (`least_coordinates`: what advancing by it comes to). Every time
    the run evaluates is at or after one of its times, and advancing by a frontier at or before
    the times compared keeps every comparison (differential dataflow's compaction). The
    handle's frontier can lag: after a step whose loop ended with no last run of distinct, it
    is still the last round's, and a new epoch's first run would read the old epoch's history
    at its own iterations, where, advanced to the new epoch, each key's times make a chain."""
    d = time.shape[0]
    if time.shape[1]:
        x, y = time[0].min(), time[d - 1].min()
        if _in_advance(handle, x, y):
            return x, y
    least = least_coordinates(handle, d)
    return least[0], least[d - 1]


@kernel(M, M, M, M, I, C, C, V, C, C, V, M, M, I)
def distinct_fused(key, time, kept_key, kept_time, sort, in_store, in_fence, in_ends, out_store, out_fence, out_ends, since, frontier, input_before):
    """Distinct's whole update for keys without values, in epoch or (epoch, iteration) time.

    `key` (k, n) and `time` (d <= 2, n) are the (key, time) pairs with work, sorted by
    key (with `sort`, they and the kept pairs now due are sorted first: `ready_work`,
    without a call of its own from Python); the input and output traces are read in
    place (their block, fences and segment ends), walking each segment once in key
    order. For each key: its history (times advanced by `since`, or by the least time
    of the work when that is later: `_read_floor`), the interesting times (the
    join-closure of its new times with the history), and at each, in lexicographic
    order, the correction `[I(t) > 0] - O(t) - earlier corrections at or before t`:
    made at those not in advance of `frontier`; of those in advance of it, the least
    with a correction due (were no more input to come) set aside as later work (see
    runtime.operators.reduce). A key whose times form a chain (the common case:
    one epoch's iterations, or history compacted into the current epoch) is one
    sweep; one with a single new time and no history after it (most keys of a first
    load's rounds) is swept unsorted; the elements of the others are set aside for
    `distinct_general`. `input_before` is the input counted before a chain's first
    element: 0, or 1 when the caller knows every input count to be positive and every
    input time at or before every time here, and passes no input segments (the input
    is then not read: a first load's rounds are an anti-join with the output).

    Returns, each as one block of rows (see `distinct`, which takes them apart): the
    corrections (key, time, diff), sorted by key, then time; the work kept for later
    (key, time): `kept_key`/`kept_time` (pairs kept by earlier runs, not yet due)
    followed by this run's later pairs; the set-aside keys' elements (rows 0-3),
    keys, bounds and places among the corrections (rows 4 on); and the counts of
    elements and keys set aside.
    """
    if sort:
        work_key, work_time, kept_key, kept_time = ready_work(key, time, kept_key, kept_time, frontier)
    else:
        work_key, work_time = key, time
    key, time = borrowed(work_key), borrowed(work_time)  # work_key and work_time live on to kept_alive below
    in_store, in_fence, in_ends = borrowed(in_store), borrowed(in_fence), borrowed(in_ends)
    out_store, out_fence, out_ends = borrowed(out_store), borrowed(out_fence), borrowed(out_ends)
    since, frontier = borrowed(since), borrowed(frontier)
    n = key.shape[1]
    k = key.shape[0]
    d = time.shape[0]
    n_in = in_ends.shape[0]
    segments = n_in + out_ends.shape[0]
    cur = np.zeros(segments, np.int64)  # each segment's position: keys come ascending
    first = np.zeros(segments, np.int64)  # the current key's updates in each segment: [first, stop)
    stop = np.zeros(segments, np.int64)
    head = np.empty((segments, k), np.int64)  # the key at cur (before any: the least key)
    for s in range(segments):
        for c in range(k):
            head[s, c] = _FIRST
    for s in range(1, n_in):
        cur[s] = in_ends[s - 1]
    for s in range(1, out_ends.shape[0]):
        cur[n_in + s] = out_ends[s - 1]
    floor_x, floor_y = _read_floor(time, since)
    # One group's elements, a column each: x, y, kind (0 new, 1 input, 2 output), diff.
    el = np.empty((4, 64), np.int64)
    order = np.empty(64, np.int64)
    # The results, each packed in one block (each array handed back to Python costs ~0.4 us to
    # box, more than a single update's call does otherwise): the corrections' key rows, time
    # rows and diff; the later pairs' key and time rows; and the set-aside keys' elements (rows
    # 0-3) beside their keys (rows 4..4+k), their bounds (row 4+k) and the count of corrections
    # made before each (row 5+k: where its own go, keys being in order).
    out = np.empty((k + d + 1, max(64, n)), np.int64)
    n_out = 0
    n_later = kept_key.shape[1]
    later = np.empty((k + d, n_later + 64), np.int64)
    for j in range(n_later):
        for c in range(k):
            later[c, j] = kept_key[c, j]
        for c in range(d):
            later[k + c, j] = kept_time[c, j]
    aside = np.empty((4 + k + 2, 16), np.int64)
    aside[4 + k, 0] = 0
    n_aside = 0
    n_general = 0
    p = 0
    size = 0  # the sought key's element count
    sought = False  # the key at p is sought: first/stop hold where its history is
    while p < n:
        # Arrays grow here, between runs of the key loop, never inside it: numba counts a
        # reference (an atomic add) every time a loop passes an array variable the loop may
        # assign, and those counts were a third of this kernel's time.
        if size > el.shape[1]:
            el, order = grown_block(el, size), grown_row(order, size)
        if n_out + size > out.shape[1]:
            out = grown_block(out, n_out + size)
        if n_later + size > later.shape[1]:
            later = grown_block(later, n_later + size)
        if n_aside + size + 1 > aside.shape[1]:  # (n_aside >= n_general: room for the bounds too)
            aside = grown_block(aside, n_aside + size + 1)
        while p < n:
            q = p + 1
            while q < n and _key_equal(key, q, key, p, k):
                q += 1
            if not sought:
                # Where the key's history is in every segment of the input, then the output
                # trace: [first, stop). A segment whose next key (its head) is beyond this key is
                # skipped on one comparison with the cached head, without touching the segment.
                size = q - p
                for s in range(segments):
                    beyond = False
                    for c in range(k):
                        if head[s, c] != key[c, p]:
                            beyond = head[s, c] > key[c, p]
                            break
                    if beyond:
                        first[s] = stop[s] = 0
                        continue
                    # One code path for both traces: each inlined helper is compiled once per call site.
                    inside = s < n_in
                    store = in_store if inside else out_store
                    fence = in_fence if inside else out_fence
                    if inside:
                        start = in_ends[s - 1] if s else 0
                        end = in_ends[s]
                    else:
                        start = out_ends[s - n_in - 1] if s > n_in else 0
                        end = out_ends[s - n_in]
                    j = _seek_inlined(store, fence, k, start, end, key, p, cur[s])
                    e = j
                    while e < end and _key_equal(store, e, key, p, k):
                        e += 1
                    if e > j:  # its times and diffs, read below: loading while the next segments are sought
                        for c in range(d + 1):
                            prefetch(store, k + c, j)
                    for c in range(k):
                        head[s, c] = _LAST if e == end else store[c, e]
                    first[s] = j
                    stop[s] = e
                    cur[s] = e
                    size += e - j
                sought = True
            if size > el.shape[1] or n_out + size > out.shape[1] or n_later + size > later.shape[1] or n_aside + size + 1 > aside.shape[1]:
                break  # to grow the arrays first
            sought = False
            m = 0
            for r in range(p, q):
                el[0, m] = time[0, r]
                el[1, m] = time[1, r] if d == 2 else 0
                el[2, m] = 0
                el[3, m] = 0
                m += 1
            for s in range(segments):
                inside = s < n_in
                store = in_store if inside else out_store
                for j in range(first[s], stop[s]):
                    el[0, m] = max(store[k, j], floor_x)
                    el[1, m] = max(store[k + 1, j], floor_y) if d == 2 else 0
                    el[2, m] = 1 if inside else 2
                    el[3, m] = store[k + d, j]
                    m += 1
            # One new time t (element 0) and every time of the history at or before it (most keys
            # of a first load's rounds): the history in any order, then t, is a chain for the sweep
            # (it sums the history, then corrects at t alone, the join-closure): no sort.
            below = q - p == 1
            r = 1
            while below and r < size:
                below = el[0, r] <= el[0, 0] and el[1, r] <= el[1, 0]
                r += 1
            chain = True
            if below:
                for a in range(size - 1):
                    order[a] = a + 1
                order[size - 1] = 0
            else:
                if size <= CHAIN_LIMIT:  # insertion sort by (x, y), here: a helper call costs more
                    for a in range(size):
                        b = a - 1
                        while b >= 0 and (el[0, order[b]] > el[0, a] or (el[0, order[b]] == el[0, a] and el[1, order[b]] > el[1, a])):
                            order[b + 1] = order[b]
                            b -= 1
                        order[b + 1] = a
                else:
                    _order_by_xy(el, size, order)
                for r in range(1, size):
                    if el[1, order[r]] < el[1, order[r - 1]]:
                        chain = False
                        break
            if chain:
                # A chain's join-closure is itself: the interesting times are its times at or
                # after its first new time, and one sweep accumulates everything as plain sums.
                acc_in = input_before
                acc_out = 0
                acc_e = 0
                started = False
                r = 0
                while r < size:
                    x = el[0, order[r]]
                    y = el[1, order[r]]
                    while r < size and el[0, order[r]] == x and el[1, order[r]] == y:
                        e = order[r]
                        if el[2, e] == 0:
                            started = True
                        elif el[2, e] == 1:
                            acc_in += el[3, e]
                        else:
                            acc_out += el[3, e]
                        r += 1
                    if not started:
                        continue
                    e = (1 if acc_in > 0 else 0) - acc_out - acc_e
                    if _in_advance(frontier, x, y):
                        if e == 0:
                            continue
                        # The chain's times from here on are at or after this one: it alone is
                        # deferred (when it is done, their join-closure with it brings them back).
                        for c in range(k):
                            later[c, n_later] = key[c, p]
                        later[k, n_later] = x
                        if d == 2:
                            later[k + 1, n_later] = y
                        n_later += 1
                        break
                    if e != 0:
                        acc_e += e
                        for c in range(k):
                            out[c, n_out] = key[c, p]
                        out[k, n_out] = x
                        if d == 2:
                            out[k + 1, n_out] = y
                        out[k + d, n_out] = e
                        n_out += 1
                p = q
                continue
            # Not a chain: set the key's elements aside for distinct_general.
            for r in range(size):
                for c in range(4):
                    aside[c, n_aside + r] = el[c, order[r]]  # sorted by (x, y), as distinct_general takes them
            for c in range(k):
                aside[4 + c, n_general] = key[c, p]
            aside[5 + k, n_general] = n_out  # where its corrections go among the others
            n_general += 1
            n_aside += size
            aside[4 + k, n_general] = n_aside
            p = q
    n_out += kept_alive(work_key, work_time)  # the last use of the arrays key and time view
    return out[:, :n_out], later[:, :n_later], aside, n_aside, n_general


_NO_SEGMENTS = np.zeros(0, np.int64)


def distinct(key, time, kept_key, kept_time, in_trace, out_parts, since, frontier, sort=False, input_before=False):
    """Distinct's whole update (see distinct_fused): distinct_fused, then distinct_general for
    the keys it set aside. Returns (key, time, diff) of the corrections, sorted by key then
    time, and the (key, time) pairs kept for later: the kept ones given (with `sort`: those not
    yet due), then this run's. `input_before`: the caller knows every input count to be
    positive and every input time at or before every time to visit, so the input trace is not
    read, nor waited for (runtime.trace.spine), unless a key's times are not a chain after all:
    then the run is done again with it."""
    k, d = key.shape[0], time.shape[0]
    if input_before:
        unread = np.empty((in_trace.width, 0), np.int64)
        out, later, aside, n_aside, n_general = distinct_fused(
            key, time, kept_key, kept_time, sort, unread, unread[:k], _NO_SEGMENTS, *out_parts, since, frontier, 1)
    if not input_before or n_general:
        out, later, aside, n_aside, n_general = distinct_fused(
            key, time, kept_key, kept_time, sort, *in_trace.parts(), *out_parts, since, frontier, 0)
    out_k, out_t, out_d, later_k, later_t = out[:k], out[k : k + d], out[k + d], later[:k], later[k:]
    if not n_general:
        return out_k, out_t, out_d, later_k, later_t
    general = aside[4 : 4 + k, :n_general]
    more_g, more_t, more_d, more_later_g, more_later_t = distinct_general(
        aside[:4, :n_aside], aside[4 + k, : n_general + 1], np.arange(n_general), frontier, d)
    at = aside[5 + k, more_g]  # each key's corrections (in time order) where the key's place is: keys stay in order
    out_k, out_t, out_d = np.insert(out_k, at, general[:, more_g], axis=1), np.insert(out_t, at, more_t, axis=1), np.insert(out_d, at, more_d)
    later_k, later_t = np.concatenate([later_k, general[:, more_later_g]], axis=1), np.concatenate([later_t, more_later_t], axis=1)
    return out_k, out_t, out_d, later_k, later_t


@inlined
def _index_of(ys, ny, y):
    """Index of y among the sorted y-coordinates ys[:ny] (0 in one dimension)."""
    return np.searchsorted(ys[:ny], y)


@inlined
def _push_time(n, out_g, out_t, g, x, y):
    """Append (g, (x, y)) at n, doubling the arrays when full."""
    if n == out_g.shape[0]:
        out_g = np.concatenate((out_g, np.empty(n, np.int64)))
        out_t = np.concatenate((out_t, np.empty((out_t.shape[0], n), np.int64)), axis=1)
    _put_time(out_g, out_t, n, g, x, y)
    return n + 1, out_g, out_t


@inlined
def _put_time(out_g, out_t, n, g, x, y):
    """(g, (x, y)) at n, which the arrays have room for."""
    out_g[n] = g
    out_t[0, n] = x
    if out_t.shape[0] == 2:
        out_t[1, n] = y


@inlined
def _push_out(n, out_g, out_t, out_d, g, x, y, diff):
    """Append (g, (x, y), diff) at n, doubling the arrays when full."""
    if n == out_d.shape[0]:
        out_d = np.concatenate((out_d, np.empty(n, np.int64)))
    out_d[n] = diff
    n, out_g, out_t = _push_time(n, out_g, out_t, g, x, y)
    return n, out_g, out_t, out_d


@kernel(I, V, M, V, V, M, V, B)
def accumulate(ngroups, cand_g, cand_t, hist_g, hist_v, hist_t, hist_d, alt):
    """For each candidate c, sum per value id of its group's history up to c's time.

    cand_* sorted by group; hist_* sorted by group with value ids `hist_v`
    numbered so that each group's ids are contiguous and ordered by value.
    Returns (candidate, value id, count) with count != 0, sorted by candidate
    then value id.
    """
    cand_g, cand_t, hist_g, hist_v, hist_t, hist_d = borrowed(cand_g), borrowed(cand_t), borrowed(hist_g), borrowed(hist_v), borrowed(hist_t), borrowed(hist_d)
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
    cand_g, cand_t, res_c, res_v, res_d = borrowed(cand_g), borrowed(cand_t), borrowed(res_c), borrowed(res_v), borrowed(res_d)
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
