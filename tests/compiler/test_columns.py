"""Compiled expressions (compiler.lowering.columns): the ops called straight as numpy ufuncs give
what compiler.plan.ops.apply gives, the reference, on random columns and constants."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from compiler.lowering.columns import _UFUNCS, compile_expr, decode
from compiler.plan.expr import Call, Col, Const
from compiler.plan.ops import NATURAL_DTYPE, apply
from runtime.symbols import SymbolTable

BOUNDS = {"number": (-(2**63), 2**63 - 1), "unsigned": (0, 2**64 - 1)}


def stored(values, t):
    """Values of type t as the runtime stores them (int64 columns; unsigned as their bits)."""
    return np.array(values, dtype=NATURAL_DTYPE[t]).view(np.int64)


@st.composite
def case(draw):
    t = draw(st.sampled_from(["number", "unsigned"]))
    lo, hi = BOUNDS[t]
    edge = st.sampled_from([lo, hi, 0, 1, lo + 1, hi - 1])
    value = st.one_of(edge, st.integers(lo, hi), st.integers(-3, 3).filter(lambda v: lo <= v <= hi))
    n = draw(st.integers(0, 6))
    columns = [draw(st.lists(value, min_size=n, max_size=n)) for _ in range(2)]
    op = draw(st.sampled_from(sorted(_UFUNCS)))
    shape = draw(st.sampled_from(["cc", "ck", "kc"]))  # column or constant on each side
    k = draw(value)
    return t, columns, op, shape, k


@settings(max_examples=400, deadline=None)
@given(case())
def test_ufunc_ops_equal_the_reference(example):
    t, columns, op, shape, k = example
    data = np.stack([stored(c, t) for c in columns]) if columns[0] else np.zeros((2, 0), np.int64)
    args = [Col(0, t) if shape[0] == "c" else Const(k, t), Col(1, t) if shape[1] == "c" else Const(k, t)]
    got = compile_expr(Call(op, tuple(args)), (0, 1), SymbolTable())(data)
    natural = [decode(data[0], t), decode(data[1], t)]
    operands = [natural[i] if a.__class__ is Col else np.full(data.shape[1], k, dtype=NATURAL_DTYPE[t]) for i, a in enumerate(args)]
    with np.errstate(all="ignore"):
        want = apply(op, (t, t), operands, SymbolTable())
    assert np.asarray(got).dtype == want.dtype and np.array_equal(got, want)


def test_symbol_equality_compares_interned_ids():
    symbols = SymbolTable()
    data = np.array([symbols.intern_many(["a", "b", "a"])], dtype=np.int64)
    fn = compile_expr(Call("=", (Col(0, "symbol"), Const("a", "symbol"))), (0,), symbols)
    assert fn(data).tolist() == [True, False, True]
    fn = compile_expr(Call("!=", (Const("b", "symbol"), Col(0, "symbol"))), (0,), symbols)
    assert fn(data).tolist() == [True, False, True]
