"""Filter pushdown into Spark reads (compiler.cli.inputs.pushdown): a predicate is pushed
for an input only when every reader of it filters, and it is the disjunction of what they
keep. Checked by evaluating the pushed predicate (as Python) against the session: rows it
drops change no output."""

import re

import compiler
from compiler.cli.inputs import pushdown

PROGRAM = """
.decl edge(a: number, b: number)
.input edge
.decl name(a: number, s: symbol)
.input name
.decl link(a: number, b: number)
.input link
.decl r(x: number)
.output r
.decl q(x: number, s: symbol)
.output q
.decl p(x: number)
.output p
r(x) :- edge(x, 3), x > 2.
q(x, s) :- edge(x, y), y < 10, name(x, s), s != "bob".
p(x) :- link(x, _).
"""


def as_python(predicate: str):
    """The pushed Spark SQL predicate as a Python function of a row dict (for the test only)."""
    expr = predicate.replace(" AND ", " and ").replace(" OR ", " or ").replace("<>", "!=")
    expr = re.sub(r"(?<![<>!=])=(?!=)", "==", expr)
    expr = re.sub(r"`(\w+)`", r"row['\1']", expr)
    return lambda row: eval(expr, {}, {"row": row})


def test_pushed_predicates_only_where_every_reader_filters():
    program = compiler.compile_datalog(PROGRAM)
    pushed = pushdown(program)
    assert set(pushed) == {"edge", "name"}  # link is read unfiltered
    assert "`b` = 3" in pushed["edge"] and "`a` > 2" in pushed["edge"] and "`b` < 10" in pushed["edge"]
    assert " OR " in pushed["edge"]  # two readers: either may keep a row
    assert pushed["name"] == "`s` <> 'bob'"


def test_rows_the_pushed_predicate_drops_change_no_output():
    program = compiler.compile_datalog(PROGRAM)
    pushed = pushdown(program)
    edges = [(x, y) for x in range(0, 8) for y in (1, 3, 9, 12)]
    names = [(x, s) for x in range(0, 8) for s in ("bob", "ann")]
    links = [(1, 2)]
    keep_edge, keep_name = as_python(pushed["edge"]), as_python(pushed["name"])
    full, filtered = program.session(), program.session()
    for session, e, n in (
        (full, edges, names),
        (filtered, [r for r in edges if keep_edge({"a": r[0], "b": r[1]})], [r for r in names if keep_name({"a": r[0], "s": r[1]})]),
    ):
        session.insert("edge", e)
        session.insert("name", n)
        session.insert("link", links)
        session.commit()
    assert len(filtered.read("edge")) < len(full.read("edge"))
    for out in program.outputs:
        assert filtered.read(out) == full.read(out)
        assert full.read(out)  # not vacuous


def test_nothing_pushed_for_an_input_that_is_also_an_output():
    program = compiler.compile_datalog(".decl e(a: number)\n.input e\n.output e\nr(x) :- e(x), x > 1.\n")
    assert pushdown(program) == {}
