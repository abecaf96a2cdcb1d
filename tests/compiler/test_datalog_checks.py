"""Checking Datalog programs: inference, relations, safety that passes, strata."""

import time

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from compiler import check_datalog, parse_datalog
from compiler.datalog.ast import Atom, Negation, Number, Variable
from compiler.datalog.stratify import strongly_connected
from compiler.errors import StratificationError


def types(program):
    return {name: info.types for name, info in program.relations.items()}


# ---- arity and types ---------------------------------------------------------------


def test_arity_and_types_from_facts():
    p = check_datalog('edge(1, 2).\nname(1, "one").\nw(1.5, 2u).')
    assert {n: r.arity for n, r in p.relations.items()} == {"edge": 2, "name": 2, "w": 2}
    assert types(p) == {"edge": ("number", "number"), "name": ("number", "symbol"), "w": ("float", "unsigned")}


def test_types_from_declarations_with_user_types():
    p = check_datalog(
        ".type Id = number\n.type Name <: symbol\n.type Key = Id | number\n.number_type N\n"
        ".decl person(id: Id, name: Name, key: Key, n: N, rank: unsigned, score: float)"
    )
    assert p.relations["person"].types == ("number", "symbol", "number", "number", "unsigned", "float")
    assert p.relations["person"].attribute_names == ("id", "name", "key", "n", "rank", "score")


def test_types_flow_backwards_and_forwards_through_rules():
    p = check_datalog("b(x) :- a(x).\nc(x, n) :- b(x), n = strlen(x).\nd(y) :- c(_, y).\n.input a")
    assert types(p) == {"b": ("symbol",), "a": ("symbol",), "c": ("symbol", "number"), "d": ("number",)}


def test_untyped_columns_default_to_number():
    p = check_datalog("r(x) :- e(x, _).\n.decl f(a, b: symbol)\ns(x) :- f(x, _).\n.input e")
    assert types(p) == {"f": ("number", "symbol"), "r": ("number",), "e": ("number", "number"), "s": ("number",)}


def test_integer_literals_take_the_type_of_their_column():
    p = check_datalog(".decl f(x: float)\n.decl u(x: unsigned)\nf(1).\nu(2).\ng(x) :- f(x), x > 2.")
    assert types(p)["g"] == ("float",)
    (rule,) = p.rules
    two = rule.body[1].right
    assert two == Number(2, span=two.span) and p.term_types[rule][two] == "float"


def test_aggregate_result_types():
    p = check_datalog(
        "w(1, 2.5).\nv(1, 3u).\n"
        "c(n) :- n = count : w(_, _).\n"
        "s(t) :- t = sum x : w(_, x).\n"
        "m(a) :- a = mean x : { v(_, x) }.\n"
        "lo(y) :- y = min x : v(_, x).\n"
    )
    assert types(p) == {
        "w": ("number", "float"), "v": ("number", "unsigned"),
        "c": ("number",), "s": ("float",), "m": ("float",), "lo": ("unsigned",),
    }  # fmt: skip


def test_same_variable_name_in_many_rules_is_many_variables():
    # Regression: variables were keyed by id() of a freed scope, which CPython reuses.
    text = ".decl sym(s: symbol)\n.decl num(n: number)\n"
    text += "\n".join(f"s{i}(x) :- sym(x).\nn{i}(x) :- num(x)." for i in range(200))
    p = check_datalog(text)
    assert types(p)["s199"] == ("symbol",) and types(p)["n199"] == ("number",)


def test_variables_local_to_sibling_aggregates_are_distinct():
    p = check_datalog(
        's(1, "a").\nt(1, 5).\nn(1).\n'
        "r(k, a, b) :- n(k), a = count : { s(k, y) }, b = max y : t(k, y)."
    )
    assert types(p)["s"] == ("number", "symbol") and types(p)["r"] == ("number", "number", "number")


def test_term_types_cover_every_term_of_a_rule():
    p = check_datalog('.decl e(a: number, b: symbol)\nr(x + 1, cat(s, "!")) :- e(x, s).')
    (rule,) = p.rules
    by_text = {type(t).__name__ + ":" + str(getattr(t, "name", getattr(t, "value", getattr(t, "op", "")))): ty
               for t, ty in p.term_types[rule].items()}  # fmt: skip
    assert by_text == {
        "Variable:x": "number", "Variable:s": "symbol", "Number:1": "number",
        "BinaryOp:+": "number", "String:!": "symbol", "Functor:cat": "symbol",
    }  # fmt: skip


# ---- relations: inputs, outputs, facts -----------------------------------------------------


def test_inputs_outputs_and_facts():
    p = check_datalog(
        ".decl edge(a: number, b: number)\n"
        '.input edge(IO=file, filename="edge.csv")\n'
        "start(1).\n"
        "reach(x) :- start(x).\n"
        "reach(y) :- reach(x), edge(x, y), !blocked(y).\n"
        "unreached(x) :- node(x), !reach(x).\n.input blocked, node\n"
    )
    inputs = {n for n, r in p.relations.items() if r.is_input}
    assert inputs == {"edge", "blocked", "node", "start"}  # no rule defines start: rows may join its facts
    assert p.required_inputs == ("edge", "blocked", "node")
    assert p.relations["edge"].input_options == {"IO": "file", "filename": "edge.csv"}
    assert p.outputs == ("reach", "unreached")  # no .output: every derived relation
    assert not any(r.is_output for r in p.relations.values())
    assert [f.relation for f in p.facts] == ["start"]
    assert p.relations["blocked"].attribute_names == ("x0",)
    assert p.relations["blocked"].span.line == 5


def test_relations_given_rows_by_a_declaration_an_input_or_facts_may_be_read_and_fed():
    p = check_datalog(
        ".decl declared(x: number)\n.decl unused(x: symbol)\n.input listed\nfact(1).\n"
        "r(x) :- declared(x), listed(x), fact(x).\nonly_head(x) :- r(x).\n"
    )
    assert {n for n, r in p.relations.items() if r.is_input} == {"declared", "unused", "listed", "fact"}
    assert p.required_inputs == ("listed",)
    assert p.outputs == ("r", "only_head")  # used only in heads: inferred, derived


def test_explicit_outputs_in_the_order_written():
    p = check_datalog("a(1).\nb(x) :- a(x).\nc(x) :- b(x).\n.output c(IO=stdout), a\n")
    assert p.outputs == ("c", "a")
    assert p.relations["c"].is_output and p.relations["c"].outputs == ({"IO": "stdout"},)
    assert not p.relations["b"].is_output


def test_input_relations_may_also_have_rules():
    p = check_datalog(".decl e(x: number)\n.input e\ne(x) :- f(x).\n.input f")
    assert p.relations["e"].is_input and p.outputs == ()


def test_empty_program():
    p = check_datalog("// nothing\n")
    assert (p.relations, p.facts, p.rules, p.strata, p.outputs) == ({}, (), (), (), ())


# ---- rules and safety that passes -----------------------------------------------------------


def test_rules_have_one_head_and_no_disjunction():
    p = check_datalog("a(x), b(x) :- c(x) ; d(x).\n.input c, d")
    assert [(r.heads[0].relation, r.body[0].relation) for r in p.rules] == [("a", "c"), ("b", "c"), ("a", "d"), ("b", "d")]
    assert [s.relations for s in p.strata] == [("a",), ("b",)]


@pytest.mark.parametrize(
    "text",
    [
        "r(x, z) :- e(x), y = x + 1, z = y * 2.\n.input e",
        "r(x, z) :- e(x), z = y * 2, y = x + 1.\n.input e",  # order does not matter
        "r(y) :- e(x), x + 1 = y.\n.input e",
        "r(x, n) :- e(x), n = count : { f(x, _) }.\n.input e, f",  # x correlated from outside
        "r(x) :- e(x), !f(x, _), x != 3.\n.input e, f",
        "r(s) :- e(x), s = to_string(x), match(\"[0-9]+\", s).\n.input e",
        "r(n) :- n = count : f(_, _).\n.input f",
        "r(1 + 2).",
        "r(m) :- e(x), m = max(x, 3), m = min(m, 10).\n.input e",
    ],
)
def test_safe_rules(text):
    check_datalog(text)


# ---- strata ---------------------------------------------------------------------------------


def test_strata_in_dependency_order_with_recursion_flags():
    p = check_datalog(
        "path(x, y) :- edge(x, y).\n"
        "path(x, z) :- path(x, y), edge(y, z).\n"
        "even(0).\n"
        "even(n) :- odd(m), n = m + 1, n < 10.\n"
        "odd(n) :- even(m), n = m + 1, n < 10.\n"
        "far(x, y) :- node(x), node(y), !path(x, y).\n"
        "size(n) :- n = count : far(_, _).\n.input edge, node\n"
    )
    assert [(s.relations, s.recursive, len(s.rules)) for s in p.strata] == [
        (("path",), True, 2),
        (("even", "odd"), True, 2),
        (("far",), False, 1),
        (("size",), False, 1),
    ]


def test_min_aggregates_and_min_qualified_relations_may_recurse():
    p = check_datalog(
        ".decl dist(node: number, d: number) min(d)\n"
        "dist(x, 0) :- start(x).\n"
        "dist(y, d + 1) :- dist(x, d), edge(x, y).\n"
        "best(x, m) :- node(x), m = min d : { best(y, d), edge(y, x) }.\n"
        "best(x, 0) :- start(x).\n.input start, edge, node\n"
    )
    assert p.relations["dist"].qualifier.column == "d"
    assert [(s.relations, s.recursive) for s in p.strata] == [(("dist",), True), (("best",), True)]


def test_two_hundred_rules_parse_and_check_well_under_a_second():
    parse_datalog("warm(1).")  # the one-time grammar construction is not what is measured
    lines = [".decl edge(a: number, b: number)", "edge(1, 2).", "r0(x, y) :- edge(x, y)."]
    for i in range(1, 200):
        shape, j = i % 5, max(i - 2, 0)
        if shape == 0:
            lines.append(f"r{i}(x, z) :- r{i - 1}(x, y), edge(y, z), x != z.")
        elif shape == 1:
            lines.append(f"r{i}(x, y) :- r{i - 1}(x, y), !r{j}(y, x), y < {i} + 1.")
        elif shape == 2:
            lines.append(f"r{i}(x, n) :- r{i - 1}(x, _), n = count : {{ edge(x, _) }}.")
        elif shape == 3:
            lines.append(f"r{i}(x, y) :- r{i - 1}(x, y) ; r{j}(y, x), edge(x, y).")
        else:
            lines.append(f"r{i}(x, y) :- r{i - 1}(x, y).\nr{i}(x, z) :- r{i}(x, y), edge(y, z).")
    text = "\n".join(lines)
    start = time.perf_counter()
    program = check_datalog(text)
    elapsed = time.perf_counter() - start
    assert len(program.strata) == 200
    assert elapsed < 1.0, f"200 rules took {elapsed:.2f}s"


def test_a_cycle_of_thousands_of_relations_is_one_recursive_stratum():
    n = 1500  # deeper than Python's recursion limit: Tarjan must not recurse
    text = "\n".join(f"p{i}(x) :- p{(i + 1) % n}(x), e(x)." for i in range(n)) + "\n.input e"
    (stratum,) = check_datalog(text).strata
    assert stratum.recursive and len(stratum.relations) == n and stratum.relations[:2] == ("p0", "p1")


def test_strongly_connected_on_a_long_chain_without_recursion():
    n = 20_000
    nodes = [str(i) for i in range(n)]
    chain = {str(i): [str(i + 1)] if i + 1 < n else [] for i in range(n)}
    components = strongly_connected(nodes, chain)
    assert components[0] == [str(n - 1)] and components[-1] == ["0"]  # dependencies first
    chain[str(n - 1)] = ["0"]
    assert len(strongly_connected(nodes, chain)) == 1


_graphs = st.integers(1, 7).flatmap(
    lambda n: st.tuples(st.just(n), st.lists(st.tuples(st.integers(0, n - 1), st.integers(0, n - 1)), max_size=14))
)


def _reaches(n, edges):
    reach = {(i, i) for i in range(n)} | set(edges)
    for k in range(n):  # Floyd-Warshall closure
        reach |= {(i, j) for i in range(n) for j in range(n) if (i, k) in reach and (k, j) in reach}
    return reach


@settings(max_examples=200, deadline=None)
@given(_graphs)
def test_strongly_connected_agrees_with_mutual_reachability(graph):
    n, edges = graph
    nodes = [f"n{i}" for i in range(n)]
    succ = {f"n{i}": list(dict.fromkeys(f"n{b}" for a, b in edges if a == i)) for i in range(n)}
    components = strongly_connected(nodes, succ)
    where = {node: k for k, comp in enumerate(components) for node in comp}
    assert sorted(where) == sorted(nodes)
    reach = _reaches(n, edges)
    for i in range(n):
        for j in range(n):
            assert (where[f"n{i}"] == where[f"n{j}"]) == ((i, j) in reach and (j, i) in reach)
    for a, b in edges:  # an edge a -> b means a depends on b: b's component comes first
        assert where[f"n{b}"] <= where[f"n{a}"]


_rules = st.lists(st.tuples(st.integers(0, 4), st.integers(0, 4), st.booleans()), min_size=1, max_size=8)


@settings(max_examples=200, deadline=None)
@given(_rules)
def test_stratification_agrees_with_brute_force(rules):
    """Rules `p{h}(x) :- e(x), [!]p{b}(x).`: stratifiable iff no negated edge lies on a cycle."""
    declared = "".join(f".decl p{i}(x: number)\n" for i in range(5)) + ".input e\n"  # p{b} may have no rule
    text = declared + "\n".join(f"p{h}(x) :- e(x), {'!' if neg else ''}p{b}(x)." for h, b, neg in rules)
    reach = _reaches(5, [(h, b) for h, b, _ in rules])  # head depends on body
    defined = {h for h, _, _ in rules}
    bad = any(neg and b in defined and (b, h) in reach for h, b, neg in rules)
    if bad:
        with pytest.raises(StratificationError):
            check_datalog(text)
        return
    program = check_datalog(text)
    order = {rel: k for k, s in enumerate(program.strata) for rel in s.relations}
    for rule in program.rules:
        head = order[rule.heads[0].relation]
        for lit in rule.body:
            atom = lit.atom if isinstance(lit, Negation) else lit
            if isinstance(atom, Atom) and atom.relation in order:
                assert order[atom.relation] < head if isinstance(lit, Negation) else order[atom.relation] <= head
    assert all(isinstance(v, Variable) for r in program.rules for v in r.heads[0].args)


def test_a_variable_that_occurs_once_in_a_rule_warns_at_its_line(recwarn):
    # As Soufflé warns: a misspelt variable binds nothing and makes the rule a cross product.
    import warnings

    from compiler.errors import CompileWarning

    text = (".decl e(a: number, b: number)\ne(1, 2).\n"
            "p(x, z) :- e(x, yy),\n  e(y, z).\n"
            "q(x) :- e(x, _), e(x, _w).\n"  # `_` and names starting with `_` are meant
            "c(n) :- n = count : { e(x, y) }.\n")  # inside an aggregate too
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        check_datalog(text, "p.dl")
    found = sorted((w.filename, w.lineno, str(w.message)) for w in caught if w.category is CompileWarning)
    assert found == [("p.dl", 3, "variable 'yy' occurs only once in its rule (write _ if that is meant)"),
                     ("p.dl", 4, "variable 'y' occurs only once in its rule (write _ if that is meant)"),
                     ("p.dl", 6, "variable 'x' occurs only once in its rule (write _ if that is meant)"),
                     ("p.dl", 6, "variable 'y' occurs only once in its rule (write _ if that is meant)")]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        check_datalog(".decl e(a: number, b: number)\ne(1, 2).\np(x, z) :- e(x, y), e(y, z).\n", "p.dl")
    assert not [w for w in caught if w.category is CompileWarning]
