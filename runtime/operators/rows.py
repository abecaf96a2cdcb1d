"""Row functions: plain Python functions over decoded rows, as batch functions.

The Python API accepts functions of one row (a tuple of Python values). They run
once per update, so they are the slow path; the compiler passes vectorised
column functions instead. Rows are decoded with the input's column types and
results encoded with the declared output types.
"""

from __future__ import annotations

import numpy as np

from runtime.batch import Batch
from runtime.symbols import INT, Codec


def _encoder(codec: Codec, types, what: str):
    def encode(rows):
        if types is None:
            arity = len(rows[0]) if rows else 0
            out_types = (INT,) * arity
        else:
            out_types = types
        try:
            return codec.encode_rows(rows, out_types)
        except (TypeError, ValueError) as e:
            raise TypeError(f"{what}: {e} (the output columns are {out_types}; declare others with types=...)") from None

    return encode


def map_rows(fn, codec: Codec, in_types, out_types, what="map"):
    encode = _encoder(codec, out_types, what)

    def apply(batch: Batch) -> Batch:
        rows = [tuple(r) if isinstance(r, (tuple, list)) else (r,) for r in map(fn, codec.decode_rows(batch.data, in_types))]
        if not rows:
            return batch
        return batch.with_data(encode(rows))

    return apply


def filter_rows(predicate, codec: Codec, in_types):
    def apply(batch: Batch) -> Batch:
        mask = np.fromiter(map(predicate, codec.decode_rows(batch.data, in_types)), dtype=bool, count=len(batch))
        return batch if mask.all() else batch.take(mask)

    return apply


def flat_map_rows(fn, codec: Codec, in_types, out_types, what="flat_map"):
    encode = _encoder(codec, out_types, what)

    def apply(batch: Batch) -> Batch:
        owners, rows = [], []
        for i, row in enumerate(codec.decode_rows(batch.data, in_types)):
            for r in fn(row):
                owners.append(i)
                rows.append(tuple(r) if isinstance(r, (tuple, list)) else (r,))
        if not rows:
            return Batch.empty(len(out_types or ()), batch.time.shape[0])
        index = np.asarray(owners, dtype=np.intp)
        return Batch(encode(rows), batch.time[:, index], batch.diff[index])

    return apply
