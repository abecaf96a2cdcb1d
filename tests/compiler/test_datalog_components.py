"""Soufflé components (compiler.datalog.components): how `.comp`/`.init` expand, what the
expanded programs compute, and the errors of misused components.

The semantic tests run through tests.compiler.replay, which also checks every relation
against the naive oracle; the expected answers are worked out by hand from Soufflé's
rules (an instance's relations are `instance.name`; type parameters read their
arguments; `.override` drops inherited clauses).
"""

import pytest

from compiler import check_datalog, parse_datalog
from compiler.errors import (
    ComponentError,
    NameClashError,
    OverrideError,
    ParseError,
    TypeArgumentError,
    UnknownComponentError,
    UnsafeVariableError,
)
from tests.compiler.test_datalog_semantics import read, run

GRAPH = """
.comp Graph {
    .decl edge(a: number, b: number)
    .decl reach(a: number, b: number)
    .output reach
    reach(x, y) :- edge(x, y).
    reach(x, z) :- reach(x, y), edge(y, z).
}
"""


# ---- what the expansion produces -------------------------------------------------------


def test_an_instance_prefixes_the_relations_and_types_it_declares_and_their_uses():
    text = """.comp G {
    .type Node <: symbol
    .decl edge(a: Node, b: Node)
    .output edge
    edge("a", "b").
}
.init g = G
"""
    program = parse_datalog(text)
    assert [(d.name, [a.type_name for a in d.attributes]) for d in program.decls] == [("g.edge", ["g.Node", "g.Node"])]
    assert [(t.name, t.bases) for t in program.types] == [("g.Node", ("symbol",))]
    assert [o.relation for o in program.outputs] == ["g.edge"]
    assert [f.relation for f in program.facts] == ["g.edge"]
    # positions stay those of the component's text
    assert (program.facts[0].span.line, program.facts[0].span.column) == (5, 5)
    assert check_datalog(text).relations["g.edge"].types == ("symbol", "symbol")


def test_a_component_without_an_instance_contributes_nothing():
    program = parse_datalog(GRAPH + "r(1).")
    assert [d.name for d in program.decls] == [] and [f.relation for f in program.facts] == ["r"]
    assert program.components == () and program.instances == ()


def test_type_parameters_read_their_arguments_in_declarations():
    text = ".comp Pair<A, B> {\n  .decl p(x: A, y: B)\n}\n.init ns = Pair<number, symbol>\n.init sn = Pair<symbol, number>\n"
    relations = check_datalog(text).relations
    assert relations["ns.p"].types == ("number", "symbol")
    assert relations["sn.p"].types == ("symbol", "number")


def test_a_clause_ending_in_a_variable_is_not_read_as_a_qualified_name():
    program = parse_datalog("p(x) :- q(x, y), x = y.\ns(1).\n.decl q(a: number, b: number)")
    assert [r.heads[0].relation for r in program.rules] == ["p"]
    assert [f.relation for f in program.facts] == ["s"]


def test_io_directives_inside_a_component_name_the_instance_relation():
    text = GRAPH.replace(".output reach", ".output reach\n    .input edge") + ".init g = Graph\n"
    checked = check_datalog(text)
    assert checked.required_inputs == ("g.edge",)
    assert checked.outputs == ("g.reach",)


# ---- what expanded programs compute -------------------------------------------------------


def test_instances_are_independent_copies_used_by_qualified_names():
    text = GRAPH + """
.init g = Graph
.init h = Graph
g.edge(1, 2). g.edge(2, 3).
h.edge(3, 4).
both(x, y) :- g.reach(x, y), h.reach(x, y).
either(x, y) :- g.reach(x, y) ; h.reach(x, y).
"""
    r = run(text)
    assert read(r, "g.reach") == [(1, 2), (1, 3), (2, 3)]
    assert read(r, "h.reach") == [(3, 4)]
    assert read(r, "both") == []
    assert read(r, "either") == [(1, 2), (1, 3), (2, 3), (3, 4)]


def test_inheritance_adds_clauses_to_the_base_relations_and_several_bases_combine():
    text = GRAPH + """
.comp Undirected : Graph {
    edge(y, x) :- edge(x, y).
}
.comp Labelled {
    .decl label(n: number, s: symbol)
    label(n, "node") :- edge(n, _).
}
.comp Both : Undirected, Labelled {}
.init u = Undirected
.init b = Both
u.edge(1, 2).
b.edge(5, 6).
"""
    r = run(text)
    assert read(r, "u.reach") == [(1, 1), (1, 2), (2, 1), (2, 2)]
    assert read(r, "b.reach") == [(5, 5), (5, 6), (6, 5), (6, 6)]
    # `edge` in Labelled is the instance's own, inherited from Graph by Both
    assert read(r, "b.label") == [(5, "node"), (6, "node")]


def test_generic_inheritance_binds_the_base_parameters_to_the_derived_arguments():
    text = """
.comp DiGraph<N> {
    .decl edge(a: N, b: N)
    .decl node(n: N)
    node(x) :- edge(x, _).
}
.comp Graph<M> : DiGraph<M> {
    edge(y, x) :- edge(x, y).
}
.init cities = Graph<symbol>
cities.edge("A", "B").
"""
    r = run(text)
    assert read(r, "cities.node") == [("A",), ("B",)]
    assert check_datalog(text).relations["cities.edge"].types == ("symbol", "symbol")


def test_a_component_can_be_a_type_argument():
    text = """
.comp Small { .decl n(x: number) n(1). }
.comp Large { .decl n(x: number) n(100). n(200). }
.comp Sum<Source> {
    .init src = Source
    .decl total(t: number)
    total(s) :- s = sum x : { src.n(x) }.
}
.init small = Sum<Small>
.init large = Sum<Large>
"""
    r = run(text)
    assert read(r, "small.total") == [(1,)]
    assert read(r, "large.total") == [(300,)]
    assert read(r, "large.src.n") == [(100,), (200,)]


def test_nested_instances_are_named_through_every_level():
    text = GRAPH + """
.comp Network {
    .init road = Graph
    .init rail = Graph
    .decl link(a: number, b: number)
    link(x, y) :- road.reach(x, y) ; rail.reach(x, y).
}
.init city = Network
city.road.edge(1, 2).
city.rail.edge(2, 3).
"""
    r = run(text)
    assert read(r, "city.road.reach") == [(1, 2)]
    assert read(r, "city.rail.reach") == [(2, 3)]
    assert read(r, "city.link") == [(1, 2), (2, 3)]


def test_a_component_nested_in_another_is_found_from_inside_it():
    text = """
.comp Outer {
    .comp Inner { .decl r(x: number) r(7). }
    .init inner = Inner
    .decl copy(x: number)
    copy(x) :- inner.r(x).
}
.init o = Outer
"""
    assert read(run(text), "o.copy") == [(7,)]


def test_a_clause_for_an_undeclared_head_goes_to_the_enclosing_instance_that_declares_it():
    # Soufflé's components1 and components2: the head of B's clause is resolved outward.
    inner = ".decl X(x: number)\nX(1).\n.comp B { A(x) :- X(x). }\n"
    r = run(inner + ".comp C {\n  .decl A(x: number)\n  .init b = B\n}\n.init c = C\n")
    assert read(r, "c.A") == [(1,)]
    r = run(inner + ".decl A(x: number)\n.init b = B\n")
    assert read(r, "A") == [(1,)]


def test_override_drops_the_inherited_clauses_only():
    # Soufflé's comp-override1 and comp-override2, folded together.
    text = """
.comp A {
    .decl Rel(x: number) overridable
    .comp Nested { Rel(0). }
    .init nested = Nested
    Rel(1).
}
.comp B : A {
    .override Rel
    Rel(2).
}
.comp C : B { Rel(3). }
.comp D : C {
    .override Rel
    Rel(4).
}
.init a = A
.init b = B
.init c = C
.init d = D
"""
    r = run(text)
    assert read(r, "a.Rel") == [(0,), (1,)]
    # Rel(0) reaches Rel from an instance A makes, not as A's clause: it stays.
    assert read(r, "b.Rel") == [(0,), (2,)]
    assert read(r, "c.Rel") == [(0,), (2,), (3,)]
    assert read(r, "d.Rel") == [(0,), (4,)]


# ---- errors -----------------------------------------------------------------------------------

ERRORS = [
    (UnknownComponentError, ".comp Graph {}\n.init g = Grpah\n", 2, 11, "unknown component 'Grpah'; did you mean 'Graph'?"),
    (UnknownComponentError, ".comp D : Missing {}\n", 1, 11, "unknown component 'Missing'"),
    # a component nested in another is not visible outside it
    (UnknownComponentError, ".comp O { .comp I {} }\n.init i = I\n", 2, 11, "unknown component 'I'"),
    (UnknownComponentError, ".comp Main<G> {\n  .init g = G\n}\n.init m = Main<number>\n", 2, 13,
     "'number', the argument of parameter 'G', is not a component"),
    (TypeArgumentError, ".comp C<T> { .decl r(x: T) }\n.init c = C\n", 2, 11,
     "component 'C' takes 1 type argument (T), but 0 are given"),
    (TypeArgumentError, ".comp C<T> {}\n.comp D : C<number, symbol> {}\n", 2, 11,
     "component 'C' takes 1 type argument (T), but 2 are given"),
    (TypeArgumentError, ".comp C {}\n.init c = C<number>\n", 2, 11, "component 'C' takes 0 type arguments, but 1 is given"),
    (OverrideError, ".comp A { .decl r(x: number) overridable }\n.comp B : A {\n  .decl r(x: number)\n  .override r\n}\n", 4, 3,
     "'.override r' in component 'B': it declares 'r', so it inherits no clauses of it to override"),
    (OverrideError, ".comp A { .decl r(x: number) overridable }\n.comp B : A {\n  .override s\n}\n", 3, 3,
     "'.override s' in component 'B': no base component declares 's', so it inherits no clauses of it to override"),
    (OverrideError, ".comp A {\n  .decl r(x: number)\n}\n.comp B : A { .override r }\n", 4, 15,
     "'.override r' in component 'B': 'r' is not overridable (add 'overridable' to its declaration at line 2, column 3)"),
    (NameClashError, ".comp A {}\n.init a = A\n.init a = A\n", 3, 1, "instance 'a' is declared twice in one scope (first at line 2, column 1)"),
    (NameClashError, ".comp A {}\n.comp O {\n  .comp A {}\n  .comp A {}\n}\n", 4, 9,
     "component 'A' is declared twice in one scope (first at line 3, column 9)"),
    (NameClashError, ".decl g(x: number)\n.comp A {}\n.init g = A\n", 3, 1, "instance 'g' has the name of a relation"),
    (NameClashError, ".type A <: number\n.comp A {}\n", 2, 7, "component 'A' has the name of a type"),
    (NameClashError, ".comp A { .decl r(x: number) }\n.comp B : A {\n  .decl r(x: number)\n}\n.init b = B\n", 3, 3,
     "relation 'r' is declared twice in one instance (first at line 1, column 11); a component cannot redeclare what it inherits"),
    (NameClashError, ".comp A { .decl r(x: number) }\n.comp B : A {}\n.comp C : A {}\n.comp D : B, C {}\n.init d = D\n", 1, 11,
     "relation 'r' (declared at line 1, column 11) reaches one instance twice: inherited along two paths, or from two instances"),
    (ComponentError, ".comp A : B {}\n.comp B : A {}\n", 2, 11, "component 'A' inherits from itself (A : B : A)"),
    (ComponentError, ".comp A { .init a = A }\n.init top = A\n", 1, 11,
     "instances nested more than 100 deep: does component 'A' instantiate itself?"),
    # `.override` is a component's member only
    (ParseError, ".decl r(x: number)\n.override r\n", 2, 1,
     "'.override' belongs in a component ('.comp'), where it overrides an inherited relation"),
]


@pytest.mark.parametrize("cls, text, line, column, message", ERRORS)
def test_component_errors_name_the_problem_where_the_component_text_has_it(cls, text, line, column, message):
    with pytest.raises(cls) as info:
        check_datalog(text)
    err = info.value
    assert type(err) is cls
    assert (err.line, err.column, err.message) == (line, column, message)


def test_a_component_is_checked_even_when_nothing_instantiates_it():
    with pytest.raises(OverrideError):
        parse_datalog(".comp A { .decl r(x: number) }\n.comp B : A { .override r }\n")


def test_an_error_in_an_instance_clause_points_into_the_component():
    text = ".comp C {\n  .decl r(x: number)\n  r(x) :- r(y).\n}\n.init c = C\n"
    with pytest.raises(UnsafeVariableError) as info:
        check_datalog(text)
    assert (info.value.line, info.value.column) == (3, 5)  # the head's x
    assert "'x'" in info.value.message


def test_each_instance_has_its_own_adt_branches_named_inst_branch_as_in_souffle():
    # Soufflé's semantic/comp_types2: two instances of one component each declare branch `b`;
    # inside, `$b` is the instance's own; outside, `$inst.b` names it.
    text = """
    .comp F {
      .type T = b {x: number} | c {}
      .decl R(x: T)
      R($b(1)).
      .decl S(x: T)
      S(x) :- R(x), x = $b(_).
    }
    .init f1 = F
    .init f2 = F
    f1.R($f1.b(2)).
    f2.R($f2.c).
    """
    r = run(text)
    branches = lambda rel: sorted((v.name, v.args) for (v,) in read(r, rel))  # noqa: E731
    assert branches("f1.R") == [("f1.b", (1,)), ("f1.b", (2,))]
    assert branches("f2.R") == [("f2.b", (1,)), ("f2.c", ())]
    assert branches("f1.S") == [("f1.b", (1,)), ("f1.b", (2,))]
    assert branches("f2.S") == [("f2.b", (1,))]
