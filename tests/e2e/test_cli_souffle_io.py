"""Soufflé's file I/O through `deltalog run`: missing input tables, fact files read as
Soufflé reads them, `.input`/`.output` options, compile-time checks of those options.

In process (`compiler.cli.main`) with Spark refused: local fact files never need it.
One subprocess run checks the exit code and the one line a user sees.
"""

from __future__ import annotations

import subprocess
import sys

import pytest

import compiler
from compiler.cli import main

REACH = """
.decl edge(a: number, b: number)
.input edge
.decl root(r: number)
.input root
.decl reach(r: number, n: number)
.output reach
reach(r, r) :- root(r).
reach(r, n) :- reach(r, m), edge(m, n).
"""


@pytest.fixture(autouse=True)
def no_spark(monkeypatch):
    from runtime.spark import SparkProvider

    def refuse(self):
        raise RuntimeError("Spark was started")

    monkeypatch.setattr(SparkProvider, "_start", refuse)


def deltalog(capsys, *args) -> tuple[int, str, str]:
    code = main([str(a) for a in args])
    out, err = capsys.readouterr()
    return code, out, err


def write(path, text: str):
    path.write_text(text)
    return path


def fact_files(tmp_path, files: dict[str, str]):
    """A directory `facts` holding the given files (name: text), for -F."""
    directory = tmp_path / "facts"
    directory.mkdir()
    for name, text in files.items():
        write(directory / name, text)
    return directory


# ---- which relations take a table -------------------------------------------------------------


def test_a_declared_relation_takes_a_table_and_a_derived_one_is_refused_truthfully(tmp_path, capsys):
    program = write(tmp_path / "p.dl", ".decl extra(x: number)\nr(x) :- extra(x).\n")
    write(tmp_path / "extra.facts", "4\n")
    code, out, _ = deltalog(capsys, "run", program, "--input", f"extra={tmp_path / 'extra.facts'}")
    assert code == 0 and out.splitlines()[-1].strip() == "4"
    code, _, err = deltalog(capsys, "run", program, "--input", f"r={tmp_path / 'extra.facts'}")
    assert (code, err) == (1, "deltalog: error: 'r' is not an input relation: rules of the program define it (inputs: extra)\n")


# ---- item 3: an .input relation without a table ------------------------------------------


def test_a_missing_input_table_fails_naming_the_relation_and_where_it_looked(tmp_path, capsys):
    program = write(tmp_path / "reach.dl", REACH)
    data = tmp_path / "data"
    data.mkdir()
    write(data / "edge.facts", "1\t2\n")
    code, out, err = deltalog(capsys, "run", program, "--input-dir", data)
    assert (code, out) == (1, "")
    looked = ", ".join(str(data / n) for n in ("root.parquet", "root.csv", "root.jsonl", "root.facts", "root"))
    assert err == (f"deltalog: error: input 'root' has no table: there is no {looked} (--input-dir);"
                   " give --input root=PATH, or --allow-missing to take it as empty\n")
    code, _, err = deltalog(capsys, "run", program, "-F", data)
    assert code == 1 and f"there is no {data / 'root.facts'} (--facts-dir)" in err
    code, _, err = deltalog(capsys, "run", program)
    assert code == 1 and "input 'edge' has no table: no --input, --input-dir or --facts-dir gives one (nor have 'root')" in err


def test_an_input_with_a_filename_reads_that_file_and_no_other(tmp_path, capsys):
    # Under --input-dir, `.input root(filename=...)` names the table: a file of the relation's own
    # name beside it is another table, not a fallback.
    program = write(tmp_path / "reach.dl", REACH.replace(".input root", '.input root(filename="roots.tsv")'))
    data = tmp_path / "data"
    data.mkdir()
    write(data / "edge.facts", "1\t2\n")
    write(data / "root.csv", "r\n2\n")
    code, out, err = deltalog(capsys, "run", program, "--input-dir", data)
    assert (code, out) == (1, "")
    assert err == (f"deltalog: error: input 'root' has no table: there is no {data / 'roots.tsv'} (--input-dir);"
                   " give --input root=PATH, or --allow-missing to take it as empty\n")
    write(data / "roots.tsv", "1\n")
    code, out, err = deltalog(capsys, "run", program, "--input-dir", data)
    assert (code, err) == (0, "") and [line.split() for line in out.splitlines()[3:]] == [["1", "1"], ["1", "2"]]  # from root 1, not 2


def test_allow_missing_takes_the_inputs_without_a_table_as_empty_and_says_which(tmp_path, capsys):
    program = write(tmp_path / "reach.dl", REACH)
    write(tmp_path / "root.facts", "1\n")
    code, out, err = deltalog(capsys, "run", program, "-F", tmp_path, "--allow-missing")
    assert code == 0
    assert err == "deltalog: note: no table for 'edge': taken as empty (--allow-missing)\n"
    assert out.splitlines()[0].startswith("reach (1 row")  # root 1 reaches itself


def test_only_input_relations_need_a_table(tmp_path, capsys):
    """A relation nothing fills (no rule, fact, .input or table) is empty, with a warning at its
    declaration, as Soufflé's "No rules/facts defined for relation"; `seen` has a fact."""
    import warnings

    from compiler.errors import CompileWarning

    program = write(tmp_path / "p.dl", ".decl extra(x: number)\nseen(1).\nr(x) :- seen(x).\nr(x) :- extra(x).\n.output r\n")
    unfed = [(str(program), 1, "relation 'extra' has no rules, facts, .input or table: it is empty")]
    with pytest.warns(CompileWarning) as caught:
        code, out, err = deltalog(capsys, "run", program, "-F", tmp_path)  # neither extra nor seen is an .input
    assert (code, err) == (0, "") and out.splitlines()[0].startswith("r (1 row")
    assert [(w.filename, w.lineno, str(w.message)) for w in caught] == unfed
    # As Soufflé's -F: files of relations without .input are not read (Soufflé's input_output test)...
    write(tmp_path / "extra.facts", "7\n")
    write(tmp_path / "seen.facts", "3\n")
    with pytest.warns(CompileWarning) as caught:
        code, out, _ = deltalog(capsys, "run", program, "-F", tmp_path)
    assert code == 0 and [line.strip() for line in out.splitlines()[-1:]] == ["1"]
    assert [(w.filename, w.lineno, str(w.message)) for w in caught] == unfed
    # ... but such a relation still takes rows when a table is named for it (and is not warned about).
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        code, out, _ = deltalog(capsys, "run", program, "-F", tmp_path, "--input", f"extra={tmp_path / 'extra.facts'}")
    assert code == 0 and [line.strip() for line in out.splitlines()[-2:]] == ["1", "7"]
    assert caught == []


def test_a_missing_input_is_exit_1_with_one_line_in_a_subprocess(tmp_path):
    program = write(tmp_path / "reach.dl", REACH)
    done = subprocess.run([sys.executable, "-m", "compiler.cli", "run", str(program), "-F", str(tmp_path)],
                          capture_output=True, text=True)
    assert done.returncode == 1
    assert done.stderr.splitlines() == [
        f"deltalog: error: input 'edge' has no table: there is no {tmp_path / 'edge.facts'} (--facts-dir) (nor have 'root');"
        " give --input edge=PATH, or --allow-missing to take it as empty"
    ]


# ---- item 4: fact files as Soufflé reads them -------------------------------------------------

NAMES = """
.decl name(id: number, s: symbol)
.input name
.decl shown(id: number, s: symbol)
.output shown
shown(i, s) :- name(i, s).
"""


def test_empty_files_and_empty_fields_the_cli_and_load_facts_alike(tmp_path, capsys):
    program = write(tmp_path / "names.dl", NAMES + ".decl flag(x: number)\n.input flag\nshown(x, \"flag\") :- flag(x).\n")
    write(tmp_path / "name.facts", "1\t\n2\tb\n\n3\t\n")  # empty fields, a blank line
    write(tmp_path / "flag.facts", "")  # an empty relation
    session = compiler.compile_file(program).session()
    assert session.load_facts(tmp_path) == {"name": 3, "flag": 0}
    session.commit()
    assert session.read("shown") == [(1, ""), (2, "b"), (3, "")]
    code, out, err = deltalog(capsys, "run", program, "-F", tmp_path)
    assert (code, err) == (0, "") and out.splitlines()[0] == "shown (3 rows)"


def test_input_and_output_options_are_honoured(tmp_path, capsys):
    program = write(tmp_path / "opts.dl", """
.decl name(id: number, s: symbol)
.input name(IO=file, filename="names.csv", delimiter=",", headers=true)
.decl shown(id: number, s: symbol)
.output shown(filename="result/shown.tsv", delimiter="|", headers=true)
.decl count_of(n: number)
.output count_of(IO=stdout)
shown(i, s) :- name(i, s).
count_of(n) :- n = count : name(_, _).
""")
    facts = fact_files(tmp_path, {"names.csv": "s,id\nx,1\n,2\n"})  # by the header's names, in another order
    out_dir = tmp_path / "out"
    code, out, err = deltalog(capsys, "run", program, "-F", facts, "-D", out_dir, "--format", "csv")
    assert (code, err) == (0, "")
    assert (out_dir / "result" / "shown.tsv").read_text() == "id|s\n1|x\n2|\n"
    assert not (out_dir / "count_of").exists()
    assert out.splitlines()[0].startswith("count_of (1 row")
    assert out.splitlines()[1:] == ["n", "-", "2", f"wrote shown to {out_dir / 'result' / 'shown.tsv'}"]
    session = compiler.compile_file(program).session()
    assert session.load_facts(facts) == {"name": 2}
    session.commit()
    assert session.read("shown") == [(1, "x"), (2, "")]


def test_an_output_with_fact_file_options_and_no_filename_is_written_as_souffle_names_it(tmp_path, capsys):
    program = write(tmp_path / "o.dl", """
.decl e(a: number, b: number)
e(1, 2). e(3, 4).
.decl comma(a: number, b: number)
.output comma(delimiter=",")
comma(a, b) :- e(a, b).
.decl plain(a: number, b: number)
.output plain(IO=file, headers=true)
plain(a, b) :- e(a, b).
""")
    out_dir = tmp_path / "out"
    code, out, err = deltalog(capsys, "run", program, "-D", out_dir)
    assert (code, err) == (0, "")
    assert (out_dir / "comma.csv").read_text() == "1,2\n3,4\n"
    assert (out_dir / "plain.csv").read_text() == "a\tb\n1\t2\n3\t4\n"
    assert not (out_dir / "comma").exists() and not (out_dir / "plain").exists()


def test_a_relation_with_several_outputs_is_written_by_each(tmp_path, capsys):
    program = write(tmp_path / "o.dl", """
.decl b(x: number, y: number)
b(1, 2). b(3, 4).
.output b
.output b(IO=file, filename="AA.csv", headers=true)
.output b(IO=file, filename="BB.csv", delimiter="g")
.output b(IO=stdout)
""")
    out_dir = tmp_path / "out"
    code, out, err = deltalog(capsys, "run", program, "-D", out_dir, "--format", "csv", "--reader", "arrow")
    assert (code, err) == (0, "")
    assert (out_dir / "AA.csv").read_text() == "x\ty\n1\t2\n3\t4\n"
    assert (out_dir / "BB.csv").read_text() == "1g2\n3g4\n"
    assert (out_dir / "b").is_dir()  # the plain `.output b`, in the command's format
    lines = out.splitlines()
    assert lines[0].startswith("b (2 rows")
    assert lines[-2:] == [f"wrote b to {out_dir} (csv)", f"wrote b to {out_dir / 'AA.csv'}, b to {out_dir / 'BB.csv'}"]


def test_json_outputs_are_printed_and_written_as_souffle_writes_them(tmp_path, capsys):
    program = write(tmp_path / "j.dl", """
.type L = [head: symbol, tail: L]
.type E = Num {n: number} | Zero {}
.decl r(n: number, l: L, e: E)
r(1, ["a", ["b \\" q", nil]], $Num(2)).
r(2, nil, $Zero()).
.output r(IO=json)
.output r(IO=jsonfile, format=object)
.output r(IO=jsonfile, filename="arrays/r.json")
""")
    out_dir = tmp_path / "out"
    code, out, err = deltalog(capsys, "run", program, "-D", out_dir)
    assert (code, err) == (0, "")
    arrays = '[[1, ["a", ["b \\" q", null]], "$Num(2)"],\n[2, null, "$Zero"]]'
    assert out.splitlines()[:2] == arrays.splitlines()
    assert (out_dir / "arrays" / "r.json").read_text() == arrays + "\n"
    objects = (out_dir / "r.json").read_text()
    assert objects == ('[{"n": 1, "l": {"head": "a", "tail": {"head": "b \\" q", "tail": null}}, "e": "$Num(2)"},\n'
                       '{"n": 2, "l": null, "e": "$Zero"}]\n')
    import json
    assert json.loads(objects)[0]["l"]["tail"]["head"] == 'b " q'  # valid JSON, escapes and all
    bad = write(tmp_path / "bad.dl", ".decl e(x: number)\ne(1).\n.output e(IO=file, format=object)\n")
    code, _, err = deltalog(capsys, "check", bad)
    assert (code, err.splitlines()[0]) == (1, f"{bad}:3:20: UnsupportedError: format= is an option of IO=json and IO=jsonfile")


def test_input_dir_finds_the_file_an_input_names(tmp_path, capsys):
    program = write(tmp_path / "opts.dl", NAMES.replace(".input name", '.input name(filename="people.txt", delimiter=";")'))
    write(tmp_path / "people.txt", "1;a\n2;b\n")
    code, out, err = deltalog(capsys, "run", program, "--input-dir", tmp_path, "--reader", "arrow")
    assert (code, err) == (0, "") and out.splitlines()[0] == "shown (2 rows)"


def test_a_fact_file_that_does_not_fit_names_the_line(tmp_path, capsys):
    program = write(tmp_path / "names.dl", NAMES)
    write(tmp_path / "name.facts", "1\ta\n2\tb\tc\n")
    code, _, err = deltalog(capsys, "run", program, "-F", tmp_path)
    assert (code, err) == (1, f"deltalog: error: 'name': {tmp_path / 'name.facts'}: line 2: 3 fields (tab-separated), line 1 has 2\n")
    write(tmp_path / "name.facts", "x\ta\n")
    code, _, err = deltalog(capsys, "run", program, "-F", tmp_path)
    assert code == 1 and err.startswith(f"deltalog: error: 'name': {tmp_path / 'name.facts'}: column 'id': row 1: 'x' is not")


@pytest.mark.parametrize("directive, column, message", [
    ('.input e(compress=true)', 10, "option 'compress' of '.input' is not supported (the options deltalog knows: IO, delimiter, filename, headers, rfc4180)"),
    ('.input e(IO=sqlite, dbname="x")', 10, "'.input' option IO=sqlite is not supported (one of: file)"),
    ('.output e(filename="e.csv", headers=yes)', 29, "'.output' option headers=yes is not supported (one of: true, false)"),
])
def test_an_unknown_option_is_a_located_error_from_check_and_run(tmp_path, capsys, directive, column, message):
    program = write(tmp_path / "bad.dl", f".decl e(x: number)\n{directive}\nr(x) :- e(x).\n")
    for command in ("check", "run"):
        code, _, err = deltalog(capsys, command, program)
        assert code == 1
        assert err.splitlines()[0] == f"{program}:2:{column}: UnsupportedError: {message}"


def test_a_delimiter_of_several_characters_reads_and_writes_as_souffle_does(tmp_path, capsys):
    program = write(tmp_path / "d.dl", """
.decl e(a: number, s: symbol)
.input e(delimiter=", ")
.decl f(a: number, s: symbol)
.output f(delimiter="::")
f(a, s) :- e(a, s).
""")
    facts = fact_files(tmp_path, {"e.facts": "1, x\n2, y z\n"})
    out_dir = tmp_path / "out"
    code, _, err = deltalog(capsys, "run", program, "-F", facts, "-D", out_dir)
    assert (code, err) == (0, "")
    assert (out_dir / "f.csv").read_text() == "1::x\n2::y z\n"
    write(facts / "e.facts", "1, x\n2, y, z\n")
    code, _, err = deltalog(capsys, "run", program, "-F", facts, "-D", out_dir)
    assert (code, err) == (1, f"deltalog: error: 'e': {facts / 'e.facts'}: line 2: 3 fields (separated by ', '), line 1 has 2\n")


def test_rfc4180_reads_and_writes_quoted_csv_as_souffle_does(tmp_path, capsys):
    program = write(tmp_path / "q.dl", """
.type Pair = [a: symbol, b: number]
.decl e(s: symbol, n: number, p: Pair)
.input e(rfc4180=true)
.decl f(s: symbol, n: number, p: Pair)
.output f(rfc4180=true)
f(s, n, p) :- e(s, n, p).
""")
    # A quoted field holds the delimiter, a line break and a quote written twice; the record's
    # own symbol is quoted in Soufflé's text (backslash escapes) inside the CSV field.
    facts = fact_files(tmp_path, {"e.facts": 'plain,1,"[x, 2]"\n"a,b",2,"[""y,z"", 3]"\n"two\nlines ""q""",3,"[""\\"""", 4]"\n'})
    out_dir = tmp_path / "out"
    code, _, err = deltalog(capsys, "run", program, "-F", facts, "-D", out_dir)
    assert (code, err) == (0, "")
    session = compiler.compile_file(program).session()
    assert session.load_facts(facts) == {"e": 3}
    session.commit()
    want = [("a,b", 2, ("y,z", 3)), ("plain", 1, ("x", 2)), ('two\nlines "q"', 3, ('"', 4))]
    assert sorted(session.read("f")) == want
    # Every symbol is quoted, in the record too; numbers are not (Soufflé's rfc4180 writer).
    text = (out_dir / "f.csv").read_text()
    assert text == '"a,b",2,"[""y,z"", 3]"\n"plain",1,"[""x"", 2]"\n"two\nlines ""q""",3,"[""\\"""", 4]"\n'
    # What is written reads back as the same rows.
    (facts / "e.facts").write_text(text)
    again = compiler.compile_file(program).session()
    again.load_facts(facts)
    again.commit()
    assert sorted(again.read("f")) == want


def test_a_quoted_fact_file_that_does_not_fit_names_the_line(tmp_path, capsys):
    program = write(tmp_path / "q.dl", ".decl e(s: symbol, n: number)\n.input e(rfc4180=true)\n.output e\n")
    write(tmp_path / "e.facts", '"a\nb",1\n"c",2,3\n')
    code, _, err = deltalog(capsys, "run", program, "-F", tmp_path)
    assert (code, err) == (1, f"deltalog: error: 'e': {tmp_path / 'e.facts'}: line 3: 3 fields, but the first row has 2\n")
    write(tmp_path / "e.facts", '"a",1\n"b"x,2\n')
    code, _, err = deltalog(capsys, "run", program, "-F", tmp_path)
    assert code == 1 and err.startswith(f"deltalog: error: 'e': {tmp_path / 'e.facts'}: line 2: ")
    bad = write(tmp_path / "bad.dl", '.decl e(x: number)\n.input e(rfc4180=true, delimiter="::")\nr(x) :- e(x).\n')
    code, _, err = deltalog(capsys, "check", bad)
    assert (code, err.splitlines()[0]) == (
        1, f"{bad}:2:24: UnsupportedError: rfc4180=true takes a delimiter of one character (quoted CSV fields)")


def test_an_empty_delimiter_is_a_located_error(tmp_path, capsys):
    program = write(tmp_path / "bad.dl", '.decl e(x: number)\n.input e(delimiter="")\nr(x) :- e(x).\n')
    code, _, err = deltalog(capsys, "check", program)
    assert (code, err.splitlines()[0]) == (1, f"{program}:2:10: DeclarationError: an empty delimiter separates nothing")


# ---- records and ADT values ---------------------------------------------------------------------

RECORDS = """
.type List = [head: number, tail: List]
.type Expr = Num {n: number} | Add {l: Expr, r: Expr}
.decl given(l: List, e: Expr)
.input given
.decl tails(l: List, e: Expr)
.output tails(filename="tails.csv", delimiter=",")
tails(l, e) :- given(l, e).
tails(t, e) :- tails([_, t], e).
.decl heads(h: number, e: Expr)
.output heads(IO=stdout)
heads(h, e) :- tails([h, _], e), e = $Add(_, _).
.decl lists(l: List)
.output lists
lists(l) :- tails(l, _).
"""


def test_records_and_adts_are_read_and_written_in_souffles_text_and_as_parquet_structs(tmp_path, capsys):
    import pyarrow.parquet as pq

    program = write(tmp_path / "p.dl", RECORDS)
    facts = fact_files(tmp_path, {"given.facts": "[1, [2, nil]]\t$Add($Num(1), $Num(2))\n[3,nil]\t$Num(4)\n"})
    out = tmp_path / "out"
    code, printed, err = deltalog(capsys, "run", program, "--facts-dir", facts, "--output-dir", out, "--reader", "arrow")
    assert (code, err) == (0, "")
    assert sorted((out / "tails.csv").read_text().splitlines()) == [
        "[1, [2, nil]],$Add($Num(1), $Num(2))", "[2, nil],$Add($Num(1), $Num(2))", "[3, nil],$Num(4)",
        "nil,$Add($Num(1), $Num(2))", "nil,$Num(4)"]  # fmt: skip
    assert "$Add($Num(1), $Num(2))" in printed and printed.splitlines()[:2] == ["heads (2 rows)", "h  e"]
    (part,) = (out / "lists").glob("*.parquet")
    assert sorted(pq.read_table(part).column("l").to_pylist(), key=str) == [
        None, {"head": 1, "tail": {"head": 2, "tail": None}}, {"head": 2, "tail": None}, {"head": 3, "tail": None}]
    # The Parquet output reads back as an input table: its structs are records again.
    again = write(tmp_path / "again.dl", RECORDS.replace(".decl given", ".decl lists_in(l: List)\n.input lists_in\n.decl given")
                  + "\n.decl back(l: List)\n.output back(IO=stdout)\nback(l) :- lists_in(l).\n")
    code, printed, err = deltalog(capsys, "run", again, "--facts-dir", facts, "--input", f"lists_in={out / 'lists'}", "--reader", "arrow",
                                  "--output-dir", tmp_path / "out2")
    assert (code, err) == (0, "")
    assert "[1, [2, nil]]" in printed and printed.count("\n[") + printed.count("\nnil") >= 4


def test_a_fact_file_with_a_bad_record_names_the_file_column_and_row(tmp_path, capsys):
    program = write(tmp_path / "p.dl", RECORDS)
    write(tmp_path / "given.facts", "nil\t$Num(1)\n[1, 2]\t$Num(1)\n")
    code, _, err = deltalog(capsys, "run", program, "--facts-dir", tmp_path)
    assert code == 1
    assert err == f"deltalog: error: 'given': {tmp_path / 'given.facts'}: column 'l': row 2: '[1, 2]': expected '[' at character 5, found '2'\n"
