"""The Python API: compile_datalog / compile_file, Program, Session, and its errors."""

import numpy as np
import pytest

import compiler
from compiler import CompileError, ParseError, SessionError, UnknownRelationError

REACH = """
.decl edge(x: number, y: number)
.input edge
.decl reach(x: number, y: number)
.output reach
reach(x, y) :- edge(x, y).
reach(x, z) :- reach(x, y), edge(y, z).
"""

TYPED = """
.decl t(n: number, u: unsigned, f: float, s: symbol)
.input t
copy(n, u, f, s) :- t(n, u, f, s).
"""


def session(text=REACH):
    return compiler.compile_datalog(text).session()


# ---- programs -----------------------------------------------------------------------------


def test_program_outputs_inputs_and_relations():
    program = compiler.compile_datalog(REACH)
    assert program.outputs == ("reach",)
    assert program.inputs == ("edge",)
    assert set(program.relations) == {"edge", "reach"}
    assert "fixpoint" in program.explain()


def test_without_output_directives_every_derived_relation_is_an_output():
    program = compiler.compile_datalog("a(x) :- e(x).\nb(x) :- a(x).\nf(1).\n.input e")
    assert program.outputs == ("a", "b")
    assert program.inputs == ("e", "f")  # no rule defines f: rows may join its fact


def test_compile_errors_are_compile_errors(tmp_path):
    with pytest.raises(ParseError) as err:
        compiler.compile_datalog("r(x) :- e(x)", "prog.dl")
    assert isinstance(err.value, CompileError) and err.value.line == 1 and "prog.dl:1" in str(err.value)
    path = tmp_path / "bad.dl"
    path.write_text(".output nowhere\n")
    with pytest.raises(UnknownRelationError) as err:
        compiler.compile_file(path)
    assert str(path) in str(err.value) and err.value.line == 1


def test_compile_file_and_load_facts(tmp_path):
    (tmp_path / "reach.dl").write_text(REACH)
    (tmp_path / "edge.facts").write_text("1\t2\n2\t3\n")
    s = compiler.compile_file(tmp_path / "reach.dl").session()
    assert s.load_facts(tmp_path) == {"edge": 2}
    s.commit()
    assert s.read("reach") == [(1, 2), (1, 3), (2, 3)]
    (tmp_path / "edge.facts").write_text("1\t2\t3\n")
    with pytest.raises(SessionError, match="edge.facts: line 1: 3 fields, but 'edge' has 2 columns"):
        s.load_facts(tmp_path)


def test_load_facts_reads_only_input_relations_as_souffle_does(tmp_path):
    """Soufflé's -F reads the files of `.input` relations; a declared relation with facts
    of its own keeps them even if a file with its name lies in the directory."""
    (tmp_path / "p.dl").write_text(
        ".decl inp(x: number)\n.input inp\n.decl out(x: number)\n.output out\nout(1).\nout(x) :- inp(x).\n")
    (tmp_path / "inp.facts").write_text("2\n")
    (tmp_path / "out.facts").write_text("0\n")
    s = compiler.compile_file(tmp_path / "p.dl").session()
    assert s.load_facts(tmp_path) == {"inp": 1}
    s.commit()
    assert s.read("out") == [(1,), (2,)]


# ---- the commit cycle -----------------------------------------------------------------------


def test_commit_returns_only_changed_outputs_at_the_closed_time():
    s = session()
    s.insert("edge", [(1, 2), (2, 3)])
    assert s.read("reach") == []  # nothing closed yet
    assert s.commit() == {"reach": [((1, 2), 1), ((1, 3), 1), ((2, 3), 1)]}
    assert s.time == 1
    s.remove("edge", [(2, 3)])
    s.insert("edge", [(3, 4)])
    assert s.commit() == {"reach": [((1, 3), -1), ((2, 3), -1), ((3, 4), 1)]}
    assert s.commit() == {}
    assert s.read("reach") == [(1, 2), (3, 4)]
    assert s.read("edge") == [(1, 2), (3, 4)]  # inputs can be read too


def test_a_bulk_answer_is_sorted_once(monkeypatch):
    """A commit's large answer is consolidated when drained, and that arranged batch is the
    history read later: no operator arranges the answer's rows a second time."""
    import runtime.batch
    import runtime.trace.batch

    sizes = []

    def spy(lead, cols, time, diff, arranged=runtime.batch.arranged):  # consolidating a batch
        sizes.append(len(diff))
        return arranged(lead, cols, time, diff)

    def spy_parts(parts, bounds=None, arranged_parts=runtime.trace.batch.arranged_parts):  # arranging one
        sizes.append(sum(len(p[3]) for p in parts))
        return arranged_parts(parts, bounds)

    monkeypatch.setattr(runtime.batch, "arranged", spy)
    monkeypatch.setattr(runtime.trace.batch, "arranged_parts", spy_parts)
    s = session()
    chain = [(i, i + 1) for i in range(120)]
    answer = {(a, b) for a in range(121) for b in range(a + 1, 121)}  # 7,260 pairs
    s.insert("edge", chain)
    changes = s.commit()
    assert {row for row, diff in changes["reach"]} == answer
    assert set(s.read("reach")) == answer
    assert sum(1 for n in sizes if n >= len(answer)) == 1


def test_many_small_commits_are_not_kept_one_by_one():
    """A session's history keeps a commit's few changes with the next ones and arranges them
    together once they outgrow what is arranged (as a plain capture does), so a long run of
    small commits does not keep one batch per commit; reads and the change log see them all."""
    s = session()
    history = s._built.captures["reach"].op
    for i in range(150):
        s.insert("edge", [(100 * i + 2 * j, 100 * i + 2 * j + 1) for j in range(40)])  # 40 new reach rows
        s.commit()
        assert history.unarranged_rows <= max(4096, 2 * len(history.trace))
    assert len(s.read("reach")) == 6000
    log = s.change_log("reach")
    assert len(log) == 6000 and {t for _, t, _ in log} == set(range(150))


def test_inputs_are_multisets_and_relations_sets():
    s = session()
    s.insert("edge", [(1, 2), (1, 2)])
    s.commit()
    assert s.read("edge") == [(1, 2)] and s.read("reach") == [(1, 2)]
    s.remove("edge", [(1, 2)])
    assert s.commit() == {}  # one copy left
    s.remove("edge", [(1, 2)])
    assert s.commit() == {"reach": [((1, 2), -1)]}


def test_times_advance_to_and_change_log():
    s = session()
    s.insert("edge", [(1, 2)], time=0)
    s.insert("edge", [(2, 3)], time=5)
    s.remove("edge", [(1, 2)], time=7)
    s.advance_to(6)
    assert s.time == 6
    assert s.read("reach") == [(1, 2), (1, 3), (2, 3)]
    assert s.change_log("reach") == [((1, 2), 0, 1), ((1, 3), 5, 1), ((2, 3), 5, 1)]
    assert s.commit() == {}  # time 6: nothing happened
    s.advance_to(8)
    assert s.read("reach") == [(2, 3)]
    assert s.change_log("reach")[-2:] == [((1, 2), 7, -1), ((1, 3), 7, -1)]
    assert s.change_log("edge") == [((1, 2), 0, 1), ((2, 3), 5, 1), ((1, 2), 7, -1)]


def test_every_type_round_trips():
    s = session(TYPED)
    rows = [(-(2**63), 2**64 - 1, -0.5, "ünï"), (2**63 - 1, 0, 1e300, ""), (0, 2**63, 2, "tab\tnew\nline")]
    s.insert("t", rows)
    s.commit()
    expected = sorted((n, u, float(f), sym) for n, u, f, sym in rows)
    assert s.read("t") == s.read("copy") == expected


def test_commit_lists_changes_in_python_order_for_every_type():
    # Commit orders changes on the encoded columns; that must be the order Python
    # sorts the decoded rows in: symbols alphabetically (not by interning order),
    # unsigned above 2^63 after small ones, negative floats first.
    s = session(TYPED)
    rows = [(3, 2**64 - 1, -1.5, "pear"), (-2, 5, 2.0, "apple"), (3, 2**63, 0.25, "fig"),
            (3, 7, -1.5, "apple"), (0, 0, -0.0, "zebra"), (0, 0, 1e300, "banana"),
            (5, 5, 5.0, "pear"), (5, 5, 5.0, "apple"), (6, 6, 2.5, "x"), (6, 6, -3.0, "x")]
    s.insert("t", rows)
    changes = s.commit()["copy"]
    assert changes == sorted(changes) and sorted(r for r, _ in changes) == sorted(rows)
    s.remove("t", rows[:3])
    s.insert("t", [(1, 1, 1.0, "kiwi")])
    changes = s.commit()["copy"]
    assert changes == sorted(changes)
    assert sorted(changes) == sorted([(r, -1) for r in rows[:3]] + [((1, 1, 1.0, "kiwi"), 1)])


def test_capture_outputs_only():
    s = compiler.compile_datalog(REACH).session(capture="outputs")
    s.insert("edge", [(1, 2)])
    s.commit()
    assert s.read("reach") == [(1, 2)]
    with pytest.raises(SessionError, match="not captured"):
        s.read("edge")
    with pytest.raises(SessionError):
        compiler.compile_datalog(REACH).session(capture="some")


# ---- misuse: clear errors, state unchanged ---------------------------------------------------


def assert_unchanged(s, expected_reach):
    assert s.commit() == {}
    assert s.read("reach") == expected_reach


@pytest.fixture
def loaded():
    s = session()
    s.insert("edge", [(1, 2)])
    s.commit()
    return s


def test_unknown_relation(loaded):
    with pytest.raises(SessionError, match="unknown relation 'edges'") as err:
        loaded.insert("edges", [(1, 2)])
    assert err.value.relation == "edges"
    with pytest.raises(SessionError, match="unknown relation 'nope'"):
        loaded.read("nope")
    with pytest.raises(SessionError, match="unknown relation 'nope'"):
        loaded.change_log("nope")
    assert_unchanged(loaded, [(1, 2)])


def test_rows_for_a_derived_relation(loaded):
    with pytest.raises(SessionError) as err:
        loaded.insert("reach", [(5, 6)])
    assert str(err.value) == (
        "'reach' is not an input relation: rules of the program define it"
        " (rows can be fed to relations that no rule defines, or that .input names; inputs: edge)"
    )
    assert_unchanged(loaded, [(1, 2)])


def test_every_relation_no_rule_defines_takes_rows():
    s = session(
        ".decl declared(x: number)\n.decl unused(s: symbol)\nfact(1).\n"
        "r(x) :- declared(x).\nr(x) :- fact(x).\n.output r, unused\n"
    )
    s.insert("declared", [(5,)])
    s.insert("fact", [(7,)])
    s.insert("unused", [("a",)])
    s.commit()
    assert s.read("r") == [(1,), (5,), (7,)]
    assert s.read("unused") == [("a",)]


@pytest.mark.parametrize(
    "rows, message",
    [
        ([(2, 3), (3,)], r"row \(3,\) has 1 values, but 'edge' has 2 columns"),
        ([(2, 3), (3, 4, 5)], "has 3 values"),
        ([(2, 3), (3, "four")], r"column 'y' is a number and needs an integer, got 'four'"),
        ([(2, 3), (3, 4.0)], "got 4.0"),
        ([(2, 3), (True, 4)], "got True"),
        ([(2, 3), (2**63, 4)], r"got 9223372036854775808 \(outside its 64-bit range\)"),
        ([(2, 3), 7], "is not a tuple"),
        (None, "rows are an iterable of tuples, or columns .*, not NoneType"),
        (7, "rows are an iterable of tuples, or columns .*, not int"),
    ],
)
def test_bad_rows_change_nothing(loaded, rows, message):
    with pytest.raises(SessionError, match=message) as err:
        loaded.insert("edge", rows)
    assert err.value.relation == "edge" and "'edge'" in str(err.value)
    with pytest.raises(SessionError, match=message):
        loaded.remove("edge", rows)
    assert_unchanged(loaded, [(1, 2)])


@pytest.mark.parametrize(
    "block, message",
    [
        ([[1, 2]], r"not an array of shape \(1, 2\) and type int64"),
        (np.array([[1.5], [2.0]]), r"not an array of shape \(2, 1\) and type float64"),
        ([[1, 2], [3]], "not columns of different lengths"),
        (np.array([1, 2]), r"not an array of shape \(2,\)"),
    ],
)
def test_update_columns_takes_only_a_block_of_the_relations_width(loaded, block, message):
    with pytest.raises(SessionError, match=r"'edge': update_columns takes the \(2, n\) block of its encoded rows as integers") as err:
        loaded.update_columns("edge", block, 1)
    assert err.value.relation == "edge"
    with pytest.raises(SessionError, match=message):
        loaded.update_columns("edge", block, 1)
    assert_unchanged(loaded, [(1, 2)])


def test_bad_values_of_each_type():
    s = session(TYPED)
    for row, message in [
        ((1, -1, 0.5, "a"), "non-negative integer"),
        ((1, 1, "x", "a"), "needs a number"),
        ((1, 1, 0.5, 3), "needs a string"),
    ]:
        with pytest.raises(SessionError, match=message):
            s.insert("t", [row])
    s.insert("t", [(1, 1, 2, "a")])  # an int is a fine float
    s.commit()
    assert s.read("t") == [(1, 1, 2.0, "a")]


def test_closed_times_are_rejected(loaded):
    with pytest.raises(SessionError, match="time 0 is already closed"):
        loaded.insert("edge", [(2, 3)], time=0)
    with pytest.raises(SessionError, match="already closed"):
        loaded.advance_to(0)
    with pytest.raises(SessionError, match="must be an integer"):
        loaded.insert("edge", [(2, 3)], time=1.5)
    assert_unchanged(loaded, [(1, 2)])


def test_removing_what_is_not_there_is_refused_and_changes_nothing(loaded):
    # Without the check, (3, 4) would sit at count -1 and the later insert would cancel it.
    with pytest.raises(SessionError, match=r"'edge': cannot remove \(3, 4\) at time 1: it is not there \(its count would be -1\)"):
        loaded.remove("edge", [(1, 2), (3, 4)])
    with pytest.raises(SessionError, match=r"cannot remove \(1, 2\) at time 1: .* would be -1"):
        loaded.remove("edge", [(1, 2), (1, 2)])
    assert_unchanged(loaded, [(1, 2)])
    loaded.insert("edge", [(3, 4)])
    loaded.commit()
    assert loaded.read("reach") == [(1, 2), (3, 4)]


def test_a_removal_is_checked_at_its_own_time(loaded):
    loaded.insert("edge", [(5, 6)], time=4)
    loaded.remove("edge", [(5, 6)], time=6)  # inserted at 4, removed at 6: fine
    with pytest.raises(SessionError, match=r"cannot remove \(5, 6\) at time 3"):
        loaded.remove("edge", [(5, 6)], time=3)  # before its insert
    with pytest.raises(SessionError, match=r"cannot remove \(5, 6\) at time 6"):
        loaded.remove("edge", [(5, 6)], time=6)
    loaded.advance_to(5)
    assert loaded.read("reach") == [(1, 2), (5, 6)]
    loaded.advance_to(7)
    assert loaded.read("reach") == [(1, 2)]
