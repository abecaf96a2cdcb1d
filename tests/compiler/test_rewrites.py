"""Each optimizer rewrite on its own, and what the whole pipeline makes of rules.

That every rewrite keeps a plan's meaning is tested where it matters, on
random programs run with and without the optimizer (test_random_programs);
here each rewrite is checked for doing its job.
"""

import pytest

import compiler
from compiler.plan import (
    Aggregate,
    Antijoin,
    Binding,
    Call,
    Col,
    Const,
    Distinct,
    Filter,
    Join,
    Plan,
    Project,
    Scan,
    Union,
    Values,
    walk,
)
from compiler.plan.rewrites import drop_distincts, fold_constants, optimize, order_joins, prune_columns, push_filters, share
from compiler.plan.rewrites.fold import fold_expr

N, S = "number", "symbol"
EDGE = Scan("edge", (N, N))
INPUTS = {"edge": (N, N), "name": (N, S)}


def col(i, t=N):
    return Col(i, t)


def body_after(rewrite, body, **options):
    plan = Plan(INPUTS, (Binding("r", body),), ("r",))
    return rewrite(plan, **options).bindings()[0].body


def nodes(body, kind):
    return [n for n in walk(body) if isinstance(n, kind)]


# ---- fold_constants --------------------------------------------------------------------


@pytest.mark.parametrize(
    "expr, value",
    [
        (Call("+", (Const(2, N), Const(3, N))), Const(5, N)),
        (Call("/", (Const(-7, N), Const(2, N))), Const(-3, N)),  # C: truncate toward zero
        (Call("%", (Const(-7, N), Const(2, N))), Const(-1, N)),
        (Call("^", (Const(2, N), Const(10, N))), Const(1024, N)),
        (Call("+", (Const(2**63 - 1, N), Const(1, N))), Const(-(2**63), N)),  # wraps
        (Call("cat", (Const("a", S), Const("b", S))), Const("ab", S)),
        (Call("strlen", (Const("abc", S),)), Const(3, N)),
        (Call("to_string", (Const(1.5, "float"),)), Const("1.5", S)),
        (Call("and", (Call("<", (Const(1, N), Const(2, N))), Call("=", (col(0), col(1))))), Call("=", (col(0), col(1)))),
        (Call("or", (Call("=", (col(0), col(1))), Call("<", (Const(1, N), Const(2, N))))), Const(True, "bool")),
    ],
)
def test_constant_expressions_fold(expr, value):
    assert fold_expr(expr) == value


def test_true_filters_vanish_and_empty_relations_propagate():
    true = Filter(EDGE, Call("<", (Const(1, N), Const(2, N))))
    assert body_after(fold_constants, Distinct(true)) == Distinct(EDGE)
    false = Filter(EDGE, Call(">", (Const(1, N), Const(2, N))))
    assert body_after(fold_constants, Distinct(Join(false, EDGE, ((0, 0),)))) == Values((), (N, N, N, N))
    assert body_after(fold_constants, Distinct(Union((false, EDGE)))) == Distinct(EDGE)
    assert body_after(fold_constants, Distinct(Antijoin(EDGE, false, ((0, 0),)))) == Distinct(EDGE)


# ---- push_filters ---------------------------------------------------------------------------


def test_equalities_across_a_cross_product_become_join_keys():
    cross = Join(EDGE, EDGE, ())
    body = Distinct(Filter(cross, Call("and", (Call("=", (col(1), col(2))), Call(">", (col(3), Const(2, N)))))))
    pushed = body_after(push_filters, body)
    (join,) = nodes(pushed, Join)
    assert join.keys == ((1, 0),)
    assert join.right == Filter(EDGE, Call(">", (col(1), Const(2, N))))


def test_constants_cross_join_keys_to_the_other_side():
    body = Distinct(Filter(Join(EDGE, EDGE, ((0, 0),)), Call("=", (col(0), Const(5, N)))))
    pushed = body_after(push_filters, body)
    five = Filter(EDGE, Call("=", (col(0), Const(5, N))))
    assert pushed == Distinct(Join(five, five, ((0, 0),)))


def test_filters_pass_projects_and_stop_at_aggregate_values():
    projected = Filter(Project(EDGE, (col(1), col(0))), Call(">", (col(0), Const(1, N))))
    assert body_after(push_filters, Distinct(projected)) == Distinct(Project(Filter(EDGE, Call(">", (col(1), Const(1, N)))), (col(1), col(0))))
    agg = Aggregate(EDGE, (0,), "count", None)
    both = Filter(agg, Call("and", (Call("=", (col(0), Const(1, N))), Call(">", (col(1), Const(2, N))))))
    pushed = body_after(push_filters, Distinct(both))
    assert pushed == Distinct(Filter(Aggregate(Filter(EDGE, Call("=", (col(0), Const(1, N)))), (0,), "count", None), Call(">", (col(1), Const(2, N)))))


# ---- order_joins -------------------------------------------------------------------------------


def joins(program):
    return [n for b in program.plan.bindings() for n in walk(b.body) if isinstance(n, Join)]


def test_greedy_order_avoids_cross_products():
    text = ".decl a(x: number, y: number)\n.decl b(x: number, y: number)\n.decl c(x: number, y: number)\n.input a, b, c\n"
    text += "r(x, w) :- a(x, y), c(z, w), b(y, z)."
    greedy = joins(compiler.compile_datalog(text, join_plan="binary"))  # auto: a delta query, no Joins
    assert greedy and all(j.keys for j in greedy)
    # Written order: a and c share nothing, so keeping it means a cross product.
    assert any(not j.keys for j in joins(compiler.compile_datalog(text, join_order="source", join_plan="binary")))


def test_a_relation_with_a_constant_goes_first():
    text = ".decl a(x: number, y: number)\n.decl b(x: number, y: number)\n.input a, b\nr(x) :- a(x, y), b(y, 3)."
    (join,) = joins(compiler.compile_datalog(text))
    assert Scan("b", (N, N)) in walk(join.left) and Scan("a", (N, N)) == join.right


def test_order_joins_rejects_unknown_orders():
    with pytest.raises(ValueError):
        compiler.compile_datalog("r(x) :- a(x).\n.input a", join_order="random")
    with pytest.raises(TypeError):
        compiler.compile_datalog("r(x) :- a(x).\n.input a", magic=True)


def test_order_joins_restores_the_column_order_above():
    cross = Filter(Join(Join(EDGE, EDGE, ()), EDGE, ()), Call("=", (col(5), col(0))))  # third and first
    ordered = body_after(order_joins, Distinct(cross))
    assert ordered.types == (N,) * 6
    assert isinstance(ordered.input, Project)  # columns put back in the written order


# ---- prune_columns ---------------------------------------------------------------------------


def test_join_inputs_carry_only_needed_columns():
    text = ".decl a(x: number, y: number, z: number)\n.decl b(x: number, y: number)\n.input a, b\nr(x) :- a(x, y, z), b(y, w)."
    (join,) = joins(compiler.compile_datalog(text))
    assert join.left.arity == 2 and join.right.arity == 1


def test_unused_expressions_are_dropped():
    body = Distinct(Project(Project(EDGE, (col(0), Call("*", (col(1), Const(2, N))))), (col(0),)))
    assert body_after(prune_columns, body) == Distinct(Project(EDGE, (col(0),)))


# ---- drop_distincts ----------------------------------------------------------------------------


def test_input_distincts_go_where_only_presence_matters():
    plain = compiler.compile_datalog(".decl e(x: number, y: number)\n.input e\nr(x, z) :- e(x, y), e(y, z).")
    assert [n for b in plain.plan.bindings() for n in walk(b.body) if isinstance(n, Distinct)] == [plain.plan.bindings()[0].body]
    counted = compiler.compile_datalog(".decl e(x: number, y: number)\n.input e\nr(x, n) :- e(x, _), n = count : { e(x, y) }.")
    inner = [n for b in counted.plan.bindings() for n in walk(b.body) if isinstance(n, Distinct) and isinstance(n.input, Scan)]
    assert inner, "count counts rows: an input inserted twice must still count once"


def test_distinct_over_a_set_is_dropped():
    body = Distinct(Distinct(Aggregate(EDGE, (0,), "min", 1)))
    assert body_after(drop_distincts, body) == Distinct(Aggregate(EDGE, (0,), "min", 1))


# ---- share ---------------------------------------------------------------------------------------


def test_equal_subplans_become_one_object():
    a = Filter(EDGE, Call("=", (col(0), Const(1, N))))
    b = Filter(Scan("edge", (N, N)), Call("=", (col(0), Const(1, N))))
    plan = Plan(INPUTS, (Binding("r", Distinct(a)), Binding("s", Distinct(Project(b, (col(1),))))), ("r", "s"))
    r, s = share(plan).bindings()
    assert r.body.input is s.body.input.input


def test_each_collection_is_arranged_once_per_key():
    text = """
    .decl e(x: number, y: number)
    .input e
    two(x, z) :- e(x, y), e(y, z).
    three(x, w) :- e(x, y), e(y, z), e(z, w).
    loop(x) :- e(x, y), e(y, x).
    """
    session = compiler.compile_datalog(text, join_plan="binary").session()  # auto: three is a delta query
    df = session.dataflow
    upstream = {dst.id: (src, port) for (src, port), subs in df.subscribers.items() for dst, _ in subs}
    arranged = [(upstream[op.id], op.key_arity) for op in df.ops if op.name == "arrange"]
    assert len(arranged) == len(set(arranged)), "some collection is arranged twice by the same key"
    joins = [op for op in df.ops if op.name == "join"]
    assert len(joins) == 3  # e.e shared by two and three, three's second join, loop's
    session.insert("e", [(1, 2), (2, 3), (3, 1)])
    session.commit()
    assert session.read("loop") == [] and session.read("three") == [(1, 1), (2, 2), (3, 3)]


def test_optimize_runs_the_whole_pipeline():
    program = compiler.compile_datalog(".decl e(x: number, y: number)\n.input e\nr(x) :- e(x, y), e(y, 2), x != 3.", optimize=False)
    optimized = optimize(program.plan)
    assert all(j.keys for b in optimized.bindings() for j in walk(b.body) if isinstance(j, Join))
