"""Logical plan nodes: typing, the checks each node makes, equality, explain."""

import pytest

from compiler.plan import (
    Aggregate,
    Antijoin,
    Binding,
    Call,
    Col,
    Const,
    Distinct,
    Filter,
    Fixpoint,
    Join,
    Plan,
    PlanError,
    Project,
    Ref,
    Scan,
    Union,
    Values,
    explain,
)
from compiler.plan.expr import columns, conjoin, conjuncts, domain, remap, substitute

N, F, S = "number", "float", "symbol"
EDGE = Scan("edge", (N, N))
NAME = Scan("name", (N, S))


def col(i, t=N):
    return Col(i, t)


# ---- expressions ---------------------------------------------------------------------


def test_call_types_follow_from_ops():
    assert Call("+", (col(0), Const(1, N))).type == N
    assert Call("<", (col(0, F), Const(1.5, F))).type == "bool"
    assert Call("cat", (col(1, S), Const("!", S))).type == S
    assert Call("strlen", (col(1, S),)).type == N
    assert Call("to_string", (col(0, F),)).type == S
    assert Call("and", (Call("=", (col(0), col(1))), Call("!=", (col(1, S), col(2, S))))).type == "bool"


@pytest.mark.parametrize(
    "op, args",
    [
        ("+", (col(0), Const(1.0, F))),  # no implicit conversion
        ("<", (col(0, S), col(1))),  # a symbol is not ordered with a number
        ("band", (col(0, F), col(1, F))),  # bitwise needs integers
        ("strlen", (col(0),)),
        ("and", (col(0),)),
        ("frobnicate", (col(0),)),
    ],
)
def test_ill_typed_calls_are_plan_errors(op, args):
    with pytest.raises(PlanError):
        Call(op, args)


def test_symbols_order_by_their_strings_not_their_ids():
    import numpy as np

    from compiler.plan.ops import apply
    from runtime.symbols import SymbolTable

    symbols = SymbolTable()
    ids = [symbols.intern(s) for s in ("pear", "Pear", "apple", "", "pear!")]  # ids in arrival order
    a = np.array(ids, dtype=np.int64)
    b = np.full(len(ids), symbols.intern("pear"), dtype=np.int64)
    assert apply("<", (S, S), [a, b], symbols).tolist() == [False, True, True, True, False]
    assert apply(">=", (S, S), [a, b], symbols).tolist() == [True, False, False, False, True]


def test_constants_must_have_their_types_python_type():
    Const(1, N), Const(1.0, F), Const("a", S), Const(True, "bool")
    for value, t in ((1.0, N), (1, F), (True, N), (1, S), ("a", "bool")):
        with pytest.raises(PlanError):
            Const(value, t)


def test_expression_helpers():
    e = Call("+", (col(2), Call("*", (col(0), Const(3, N)))))
    assert columns(e) == {0, 2}
    assert columns(remap(e, {0: 5, 2: 1})) == {1, 5}
    assert substitute(e, [Const(1, N), None, col(7)]) == Call("+", (col(7), Call("*", (Const(1, N), Const(3, N)))))
    p, q = Call("=", (col(0), col(1))), Call(">", (col(0), Const(0, N)))
    assert conjuncts(conjoin([p, conjoin([q, p])])) == [p, q]
    assert conjoin([]) == Const(True, "bool")


def test_domain_of_partial_operations():
    div = Call("/", (col(0), col(1)))
    assert domain(div) == [Call("!=", (col(1), Const(0, N)))]
    assert domain(Call("/", (col(0, F), col(1, F)))) == []  # float division is IEEE, total
    assert domain(Call("to_number", (col(0, S),))) == [Call("is_number", (col(0, S),))]
    assert len(domain(Call("substr", (col(0, S), col(1), col(2))))) == 3


# ---- nodes -------------------------------------------------------------------------------


def test_nodes_compute_their_types():
    j = Join(EDGE, NAME, ((1, 0),))
    assert j.types == (N, N, N, S)
    assert Project(j, (col(0), col(3, S), Call("+", (col(1), col(2))))).types == (N, S, N)
    assert Aggregate(EDGE, (0,), "count", None).types == (N, N)
    assert Aggregate(EDGE, (), "mean", 1).types == (F,)
    assert Aggregate(EDGE, (1,), "max", 0).types == (N, N)
    assert Antijoin(EDGE, Project(NAME, (col(0),)), ((0, 0),)).types == (N, N)
    assert Union((EDGE, EDGE)).types == (N, N)


@pytest.mark.parametrize(
    "make",
    [
        lambda: Filter(EDGE, col(0)),  # not a predicate
        lambda: Filter(EDGE, Call("=", (col(0), col(2)))),  # out of range
        lambda: Filter(NAME, Call("=", (col(1), col(0)))),  # column 1 is a symbol, not a number
        lambda: Project(EDGE, (Call("=", (col(0), col(1))),)),  # a bool is not a column type
        lambda: Join(EDGE, NAME, ((0, 1),)),  # number = symbol
        lambda: Join(EDGE, NAME, ((2, 0),)),
        lambda: Antijoin(EDGE, NAME, ((0, 5),)),
        lambda: Union((EDGE, NAME)),
        lambda: Union(()),
        lambda: Aggregate(EDGE, (0,), "count", 1),
        lambda: Aggregate(EDGE, (0,), "sum", None),
        lambda: Aggregate(NAME, (0,), "sum", 1),  # sum of symbols
        lambda: Aggregate(EDGE, (3,), "min", 1),
        lambda: Aggregate(EDGE, (0,), "median", 1),
        lambda: Values(((1, "a"),), (N, N)),
        lambda: Values(((1,),), (N, N)),
        lambda: Scan("x", ("int",)),
    ],
)
def test_malformed_nodes_are_plan_errors(make):
    with pytest.raises(PlanError):
        make()


def test_nodes_are_values_and_spans_do_not_count():
    a = Filter(EDGE, Call(">", (col(0), Const(3, N))), span="here")
    b = Filter(Scan("edge", (N, N)), Call(">", (col(0), Const(3, N))), span="there")
    assert a == b and hash(a) == hash(b) and a is not b
    assert a != Filter(EDGE, Call(">", (col(0), Const(4, N))))
    assert {a: 1}[b] == 1


def test_with_children_keeps_the_node_when_nothing_changed():
    d = Distinct(EDGE)
    assert d.with_children([EDGE]) is d
    other = Scan("other", (N, N))
    assert d.with_children([other]).input is other
    f = Filter(EDGE, Call(">", (col(1), Const(0, N))))
    with pytest.raises(PlanError):  # rebuilt nodes are checked again: column 1 of name is a symbol
        f.with_children([NAME])


# ---- plans ---------------------------------------------------------------------------------


def test_plan_checks_names_and_types():
    reach = Binding("reach", Distinct(Union((EDGE, Project(Join(Ref("reach", (N, N)), EDGE, ((1, 0),)), (col(0), col(3)))))))
    plan = Plan({"edge": (N, N)}, (Fixpoint((reach,)),), ("reach",))
    assert [b.name for b in plan.bindings()] == ["reach"]
    with pytest.raises(PlanError, match="not defined"):  # recursion outside a Fixpoint
        Plan({"edge": (N, N)}, (reach,), ("reach",))
    with pytest.raises(PlanError, match="unknown input"):
        Plan({}, (Binding("e", EDGE),), ())
    with pytest.raises(PlanError, match="defined twice"):
        Plan({"edge": (N, N)}, (Binding("e", EDGE), Binding("e", EDGE)), ())
    with pytest.raises(PlanError, match="output"):
        Plan({"edge": (N, N)}, (), ("nope",))
    with pytest.raises(PlanError, match="other types"):
        Plan({"edge": (N, N)}, (Binding("e", EDGE), Binding("f", Ref("e", (N, S)))), ())


def test_explain_shows_operators_types_and_shared_subplans():
    shared = Filter(EDGE, Call("=", (col(0), Const(1, N))))
    body = Distinct(Union((Project(shared, (col(1), col(0))), shared)))
    plan = Plan({"edge": (N, N)}, (Binding("r", body),), ("r",))
    assert explain(plan) == "\n".join(
        [
            "input edge(number, number)",
            "r :=",
            "  Distinct -> (number, number)",
            "    Union -> (number, number)",
            "      Project #1, #0 -> (number, number)",
            "        [1] Filter (#0 = 1) -> (number, number)",
            "          Scan edge -> (number, number)",
            "      [1]",
            "outputs r",
        ]
    )
