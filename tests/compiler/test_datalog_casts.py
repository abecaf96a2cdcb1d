"""Soufflé's type cast `as(x, T)`: subset types, numeric bits, ids; errors where deltalog cannot.

Semantics and updates are checked against the naive oracle (tests.compiler.replay); the
id of a symbol, which only a session's symbol table knows, against `ord` in the same session.
"""

import pytest

import compiler
from compiler.errors import DeclarationError, TypeMismatchError, UnsupportedError
from tests.compiler.replay import Replay

TEXT = """
.type Id <: number
.type Small <: Id
.type Name <: symbol
.decl raw(x: number, s: symbol)
.input raw
.decl ids(x: Id, n: Name)
ids(as(x, Id), as(s, Name)) :- raw(x, s).
.decl small(x: Small)
small(as(x, Small)) :- ids(x, _), x < 10.
.decl plain(x: number)
plain(as(x, number)) :- small(x).
.decl unsigned_bits(x: number, u: unsigned)
unsigned_bits(x, as(x, unsigned)) :- raw(x, _).
.decl float_bits(x: number, f: float, back: number)
float_bits(x, as(x, float), as(as(x, float), number)) :- raw(x, _), x >= 0.  // (-1's bits are a nan)
.decl from_float(n: number, u: unsigned)
from_float(as(f, number), as(f, unsigned)) :- raw(x, _), f = to_float(x) / 2.0.
"""

ONE = 4607182418800017408  # the bits of 1.0
ROWS = [(3, "a"), (-1, "b"), (ONE, "c"), (12, "d")]


def test_casts_keep_values_within_a_kind_and_bits_across_numeric_kinds_under_updates():
    r = Replay(compiler.compile_datalog(TEXT))
    r.insert("raw", ROWS)
    r.commit()
    session = r.session
    assert session.read("ids") == sorted(ROWS)
    assert session.read("plain") == [(-1,), (3,)]
    assert dict(session.read("unsigned_bits")) == {-1: 2**64 - 1, 3: 3, ONE: ONE, 12: 12}
    assert (ONE, 1.0, ONE) in session.read("float_bits")
    assert (4609434218613702656, 4609434218613702656) in session.read("from_float")  # the bits of 1.5
    r.remove("raw", [(3, "a")])
    r.insert("raw", [(7, "e")])
    r.commit()
    assert session.read("small") == [(-1,), (7,)]


def test_a_symbol_cast_to_a_number_is_its_id_as_ord_gives_it():
    program = compiler.compile_datalog(
        '.decl s(x: symbol)\ns("x"). s("y").\n.decl ids(a: number, b: number)\nids(as(x, number), ord(x)) :- s(x).\n.output ids')
    session = program.session()
    session.commit()
    ids = session.read("ids")
    assert len(ids) == 2 and all(a == b for a, b in ids)


def test_a_cast_names_a_type_parameter_of_its_component():
    text = """
    .comp Box<T> {
      .type Item <: T
      .decl in(x: T)
      .decl items(x: Item)
      items(as(x, Item)) :- in(x).
      .decl wide(x: T)
      wide(as(x, T)) :- items(x).
    }
    .init nums = Box<number>
    nums.in(3). nums.in(4).
    .decl out(x: number)
    out(x) :- nums.wide(x).
    .output out
    """
    session = compiler.compile_datalog(text).session()
    session.commit()
    assert session.read("out") == [(3,), (4,)]


@pytest.mark.parametrize("rule, error, column, message", [
    ("s(as(x, symbol)) :- r(x).", UnsupportedError, 3,
     "as(variable 'x', symbol) would take a number as a symbol: deltalog's as() casts within one kind (subset types), "
     "between number, unsigned and float (keeping the bits), and a symbol, record or ADT value to its id as a number"),
    ("s(as(x, Idd)) :- r(x).", DeclarationError, 3, "unknown type 'Idd' in as(...) (the types: float, number, symbol, unsigned)"),
])
def test_casts_deltalog_cannot_make_are_errors_at_the_cast(rule, error, column, message):
    with pytest.raises(error) as info:
        compiler.compile_datalog(f".decl r(x: number)\nr(1).\n.decl s(x: {'symbol' if 'symbol' in rule else 'number'})\n{rule}")
    assert (info.value.line, info.value.column, info.value.message) == (4, column, message)


def test_a_subset_type_mismatch_points_to_the_cast():
    with pytest.raises(TypeMismatchError) as info:
        compiler.compile_datalog(".type Id <: number\n.decl raw(x: number)\n.decl ids(x: Id)\nids(x) :- raw(x).")
    assert info.value.message.endswith("which 'number' is not a subtype of (as(x, Id) takes it as one, unchecked)")
