"""The C preprocessor in front of the Datalog parser (compiler.datalog.preprocess).

Each directive is judged by the rows the compiled program derives; errors by
their class, file, line and message, also when they lie in or after an
included file.
"""

from __future__ import annotations

import pytest

from compiler import PreprocessorError, compile_datalog, compile_file
from compiler.cli import main
from compiler.datalog import preprocess as preprocess_module
from compiler.errors import ArityError, CompileWarning, ParseError

TC = """
t(x, y) :- e(x, y).
t(x, z) :- t(x, y), e(y, z).
.output t
"""


def derived(program, relation="t"):
    session = program.session()
    session.commit()
    return session.read(relation)


def write(directory, files: dict[str, str]):
    for name, text in files.items():
        path = directory / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return directory


def test_include_inserts_the_file_next_to_the_program(tmp_path):
    write(tmp_path, {"edges.dl": "e(1, 2). e(2, 3).\n", "main.dl": '#include "edges.dl"\n' + TC})
    assert derived(compile_file(tmp_path / "main.dl")) == [(1, 2), (1, 3), (2, 3)]


def test_include_searches_the_include_dirs_after_the_programs_directory(tmp_path):
    write(tmp_path, {"lib/edges.dl": "e(5, 6).\n", "src/main.dl": '#include "edges.dl"\n' + TC})
    with pytest.raises(PreprocessorError):
        compile_file(tmp_path / "src" / "main.dl")
    assert derived(compile_file(tmp_path / "src" / "main.dl", include_dirs=[tmp_path / "lib"])) == [(5, 6)]


def test_object_like_define_replaces_the_name():
    assert derived(compile_datalog("#define LAST 3\ne(1, LAST). e(LAST, 4).\n" + TC)) == [(1, 3), (1, 4), (3, 4)]


def test_function_like_define_expands_its_arguments():
    text = "#define EDGE(a, b) e(a, b). e(b, a).\nEDGE(1, 2)\n" + TC
    assert derived(compile_datalog(text)) == [(1, 1), (1, 2), (2, 1), (2, 2)]


def test_ifdef_and_else_choose_by_whether_a_macro_is_defined():
    text = "#define BIG\n#ifdef BIG\ne(1, 100).\n#else\ne(1, 2).\n#endif\n" + TC
    assert derived(compile_datalog(text)) == [(1, 100)]
    assert derived(compile_datalog(text.replace("#define BIG\n", ""))) == [(1, 2)]


def test_ifndef_keeps_its_lines_only_without_the_macro():
    text = "#ifndef SMALL\ne(1, 2).\n#endif\ne(7, 8).\n" + TC
    assert derived(compile_datalog(text)) == [(1, 2), (7, 8)]
    assert derived(compile_datalog("#define SMALL\n" + text)) == [(7, 8)]


def test_if_evaluates_an_expression_of_macros():
    text = "#define N 3\n#if N > 2\ne(1, 2).\n#elif N > 1\ne(3, 4).\n#else\ne(5, 6).\n#endif\n" + TC
    assert derived(compile_datalog(text)) == [(1, 2)]
    assert derived(compile_datalog(text.replace("N 3", "N 2"))) == [(3, 4)]
    assert derived(compile_datalog(text.replace("N 3", "N 0"))) == [(5, 6)]


def test_souffle_include_and_once_include_a_file_at_most_once(tmp_path):
    # Without `.once` the second include would declare `e` twice (a DeclarationError).
    write(tmp_path, {
        "decls.dl": ".once\n.decl e(x: number, y: number)\ne(1, 2).\n",
        "main.dl": '.include "decls.dl"\n.include "decls.dl"\n' + TC,
    })
    assert derived(compile_file(tmp_path / "main.dl")) == [(1, 2)]


def test_an_error_in_an_included_file_names_that_file_and_its_line(tmp_path):
    write(tmp_path, {
        "rules.dl": "// rules\n\nt(x) :- e(x y).\n",
        "main.dl": '.decl e(x: number)\n#include "rules.dl"\n.output t\n',
    })
    with pytest.raises(ParseError) as info:
        compile_file(tmp_path / "main.dl")
    err = info.value
    assert (err.source_name, err.line, err.column) == (str(tmp_path / "rules.dl"), 3, 13)
    assert err.source_line == "t(x) :- e(x y)."
    assert err.message == "expected one of ')' ',' or an operator but found identifier 'y'"


def test_an_error_after_an_include_is_at_its_own_line_and_column(tmp_path):
    # The block comment spans lines and precedes the error on its line: both must not shift it.
    write(tmp_path, {
        "decls.dl": ".decl e(x: number, y: number)\n.decl t(x: number, y: number)\n",
        "main.dl": '#include "decls.dl"\n/* two\n   lines */ t(x, y) :- e(x, y), e(y).\n',
    })
    with pytest.raises(ArityError) as info:
        compile_file(tmp_path / "main.dl")
    err = info.value
    assert (err.source_name, err.line, err.column) == (str(tmp_path / "main.dl"), 3, 33)
    # The declaration the message points at is in the included file.
    assert err.message.endswith(f"in its declaration ({tmp_path / 'decls.dl'}:1:1)")


def test_a_warning_after_an_include_or_a_define_is_at_its_own_file_and_line(tmp_path):
    write(tmp_path, {
        "defs.h": "#define LIMIT 5\n#define SQR(x) ((x) * (x))\n",
        "main.dl": '#include "defs.h"\n#define ONE 1\n.pragma "shiny" "x"\n.decl n(x: number)\nn(ONE).\n.output n\n',
    })
    with pytest.warns(CompileWarning, match=r"unknown \.pragma key 'shiny' \(ignored\)") as caught:
        compile_file(tmp_path / "main.dl")
    assert [(w.filename, w.lineno) for w in caught if w.category is CompileWarning] == [(str(tmp_path / "main.dl"), 3)]


def test_a_missing_include_file_is_an_error_at_the_directive(tmp_path):
    write(tmp_path, {"main.dl": "e(1, 2).\n#include \"nowhere.dl\"\n" + TC})
    with pytest.raises(PreprocessorError) as info:
        compile_file(tmp_path / "main.dl")
    err = info.value
    assert (err.source_name, err.line, err.column) == (str(tmp_path / "main.dl"), 2, 1)
    assert err.message.startswith("include file 'nowhere.dl' not found")
    assert err.source_line == '#include "nowhere.dl"'


def test_an_unterminated_if_is_an_error_at_the_if():
    with pytest.raises(PreprocessorError) as info:
        compile_datalog("e(1, 2).\n#ifdef X\ne(3, 4).\n" + TC, "prog.dl")
    err = info.value
    assert (err.source_name, err.line) == ("prog.dl", 2)
    assert err.message == "Unterminated #ifdef X"


def test_error_directive_is_an_error_with_its_text():
    with pytest.raises(PreprocessorError) as info:
        compile_datalog("#ifndef N\n#error N must be defined\n#endif\n" + TC)
    assert (info.value.line, info.value.message) == (2, "#error N must be defined")


def test_a_program_without_directives_is_not_preprocessed(monkeypatch):
    def refuse(*args):
        raise AssertionError("the preprocessor ran")

    monkeypatch.setattr(preprocess_module, "_Preprocessor", refuse)
    # `#` inside a string or after the line's start is not a directive.
    program = compile_datalog('s("#define X").\ne(1, 2). // #include\n' + TC)
    assert derived(program) == [(1, 2)]
    assert derived(program, "s") == [("#define X",)]


def test_cli_include_dir_reaches_every_command(tmp_path, capsys):
    write(tmp_path, {"lib/edges.dl": "e(1, 2).\n", "main.dl": '#include "edges.dl"\n' + TC})
    program = str(tmp_path / "main.dl")
    assert main(["check", program]) == 1
    assert "PreprocessorError: include file 'edges.dl' not found" in capsys.readouterr().err
    for command in ("check", "explain", "run"):
        assert main([command, program, "-I", str(tmp_path / "lib")]) == 0, command
    out = capsys.readouterr().out
    assert "ok (1 outputs: t)" in out
    assert "t (1 rows)" in out  # run printed the derived relation



def test_ram_domain_size_is_predefined_as_souffles_driver_defines_it():
    text = "#if RAM_DOMAIN_SIZE == 64\nt(1, 64).\n#else\nt(1, 32).\n#endif\n.output t\n"
    assert derived(compile_datalog(text)) == [(1, 64)]
