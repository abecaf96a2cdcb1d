"""User-defined functors from Python: `.functor f(...)` in the program, the callable from the API.

The oracle (tests.compiler.replay) calls the same callables row by row; the session
calls them once per distinct argument tuple of a batch.
"""

import pytest

import compiler
from compiler.plan.ops import FunctorError
from tests.compiler.replay import Replay

TEXT = """
.functor hyp(a: number, b: number): float
.functor shout(symbol): symbol
.functor parity(x: number): symbol stateful
.functor forty_two(): number
.decl p(a: number, b: number, name: symbol)
.input p
len(n, @hyp(a, b)) :- p(a, b, n).
loud(@shout(n), @parity(a + b)) :- p(a, b, n).
odd(n) :- p(a, b, n), @parity(a) = "odd".
answer(@forty_two() + a) :- p(a, _, _).
"""

FUNCTORS = {
    "hyp": lambda a, b: (a * a + b * b) ** 0.5,
    "shout": lambda s: s.upper() + "!",
    "parity": lambda x: "odd" if x % 2 else "even",
    "forty_two": lambda: 42,
}


def test_python_functors_compute_what_their_callables_say_and_follow_updates():
    program = compiler.compile_datalog(TEXT, functors=FUNCTORS)
    r = Replay(program)
    r.insert("p", [(3, 4, "ann"), (5, 12, "bob"), (1, 1, "ann")])
    r.commit()
    assert r.session.read("len") == [("ann", 2**0.5), ("ann", 5.0), ("bob", 13.0)]
    assert r.session.read("loud") == [("ANN!", "even"), ("ANN!", "odd"), ("BOB!", "odd")]
    assert r.session.read("odd") == [("ann",), ("bob",)]
    assert r.session.read("answer") == [(43,), (45,), (47,)]
    r.remove("p", [(3, 4, "ann")])
    r.commit()
    assert r.session.read("len") == [("ann", 2**0.5), ("bob", 13.0)]


def test_a_functor_is_called_once_per_distinct_argument_tuple():
    calls = []

    def shout(s):
        calls.append(s)
        return s.upper()

    program = compiler.compile_datalog(".functor shout(symbol): symbol\n.decl p(s: symbol, n: number)\n.input p\nr(@shout(s)) :- p(s, _).",
                                       functors={"shout": shout})  # fmt: skip
    session = program.session()
    session.insert("p", [("a", i) for i in range(50)] + [("b", 1)])
    session.commit()
    assert session.read("r") == [("A",), ("B",)]
    assert sorted(calls) == ["a", "b"]


def test_a_result_of_the_wrong_type_is_an_error_naming_the_functor():
    program = compiler.compile_datalog(".functor f(number): number\n.decl p(x: number)\n.input p\nr(@f(x)) :- p(x).",
                                       functors={"f": lambda x: str(x)})  # fmt: skip
    session = program.session()
    session.insert("p", [(1,)])
    with pytest.raises(FunctorError, match=r"functor @f\(1,\) returned '1', which is not a number"):
        session.commit()


def test_functors_given_for_undeclared_names_or_not_callable_are_refused():
    with pytest.raises(TypeError, match="functors given for 'g', which no '.functor' of the program declares"):
        compiler.compile_datalog(".functor f(number): number\nr(@f(1)).", functors={"f": abs, "g": abs})
    with pytest.raises(TypeError, match=r"functors\['f'\] is not callable"):
        compiler.compile_datalog(".functor f(number): number\nr(@f(1)).", functors={"f": 3})
