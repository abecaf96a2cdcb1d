"""Calculus: AltNeu scopes, differentiate and integrate.

An AltNeu scope refines each outer time `t` into two, `(t, alt)` < `(t, neu)`,
that are otherwise ordered like `t` (runtime.times, layer ALTNEU). Between the
two halves of one time there is room for "just before t's own updates count".

- `enter_at(c, scope, neu)` brings a collection in with every update at
  `(t, alt)` or at `(t, neu)`.
- `differentiate(c)` turns a collection into its stream of changes: each update
  `(x, t, r)` becomes a *blip*, `+r` at `(t, alt)` and `-r` at `(t, neu)`. The
  accumulated contents at `(t, alt)` are exactly the changes at `t`, and they
  are gone again at `(t, neu)` and every later time.
- `integrate(c)` leaves the scope keeping the alt updates and dropping the neu
  ones: `(x, (t, alt), r)` becomes `(x, t, r)`.

`integrate(differentiate(c)) == c`. Joining a blip with a collection entered at
alt and integrating gives an *as-of* join: the change at `t` meets the other
side as accumulated at `(t, alt)`, which includes the other side's changes at
`t` itself, and later changes of the other side meet the blip only after its
retraction at `(t, neu)`, where the two cancel (or are dropped by integrate).
`Collection.as_of_join` computes the same without arranging the blips
(runtime.operators.half_join); runtime.delta_query uses both orderings, alt
and neu, so that simultaneous updates of several relations are counted once.

Retractions are events too: retracting a row of the stream side at time `t2`
looks the row up as of `t2`. If the other side changed between the insertion
and the retraction, the two do not cancel -- the output keeps the insertion's
match (+1) and the retraction's match (-1), as a log of events should.
"""

from __future__ import annotations

import numpy as np

from runtime.batch import Batch
from runtime.operators.basic import Unary
from runtime.progress import Summary
from runtime.times import ALTNEU
from runtime.worker import DataflowError

ALT, NEU = 0, 1


def _check_child(collection, scope) -> None:
    if scope.parent is not collection.scope or scope.lattice.layers[-1] != ALTNEU:
        raise DataflowError("expected an AltNeu scope directly inside the collection's scope (Scope.altneu())")


def _flagged(flag: int):
    def apply(batch: Batch) -> Batch:
        flags = np.full((1, len(batch)), flag, dtype=np.int64)
        return batch.with_time(np.concatenate([batch.time, flags], axis=0))

    return apply


def _blips(batch: Batch) -> Batch:
    n = len(batch)
    alt = np.concatenate([batch.time, np.zeros((1, n), np.int64)], axis=0)
    neu = np.concatenate([batch.time, np.ones((1, n), np.int64)], axis=0)
    return Batch(
        np.concatenate([batch.data, batch.data], axis=1),
        np.concatenate([alt, neu], axis=1),
        np.concatenate([batch.diff, -batch.diff]),
    )


def _keep_alt(batch: Batch) -> Batch:
    keep = batch.time[-1] == ALT
    kept = batch if keep.all() else batch.take(keep)
    return kept.with_time(kept.time[:-1])


def enter_at(collection, scope, neu: bool = False):
    """The collection in AltNeu `scope`, every update at (t, neu) if `neu` else (t, alt)."""
    from runtime.collection import Collection

    _check_child(collection, scope)
    cache_key = (id(scope), "neu" if neu else "alt")
    done = collection._entered.get(cache_key)
    if done is None:
        flag = NEU if neu else ALT
        d = collection.scope.lattice.depth
        op = Unary(collection.dataflow, [collection.stream], _flagged(flag), f"enter_at({'neu' if neu else 'alt'})",
                   collection.scope.lattice, scope.lattice, Summary(d, 0, (flag,)), scope)
        done = collection._entered[cache_key] = Collection(scope, op.output(), collection.types, is_set=collection.is_set)
    return done


def differentiate(collection, scope=None):
    """The collection's changes as blips in an AltNeu scope (a new one unless given)."""
    from runtime.collection import Collection

    scope = collection.scope.altneu() if scope is None else scope
    _check_child(collection, scope)
    d = collection.scope.lattice.depth
    op = Unary(collection.dataflow, [collection.stream], _blips, "differentiate", collection.scope.lattice, scope.lattice,
               Summary(d, 0, (ALT,)), scope)
    return Collection(scope, op.output(), collection.types)


def integrate(collection):
    """Leave an AltNeu scope: alt updates at their outer time, neu updates dropped."""
    from runtime.collection import Collection

    scope = collection.scope
    if scope.parent is None or scope.lattice.layers[-1] != ALTNEU:
        raise DataflowError("integrate() is for collections of an AltNeu scope (see differentiate())")
    d = scope.lattice.depth
    op = Unary(collection.dataflow, [collection.stream], _keep_alt, "integrate", scope.lattice, scope.parent.lattice,
               Summary(d - 1))
    return Collection(scope.parent, op.output(), collection.types)


__all__ = ["ALT", "NEU", "differentiate", "enter_at", "integrate"]
