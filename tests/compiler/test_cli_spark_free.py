"""Spark starts only when a command reads or writes a table through it.

Starting Spark is what makes a CLI command slow (tens of seconds), so the
commands that need no table -- check, explain, the error cases found before
any read -- and `run` or `repl` with `--reader arrow` on local Parquet, the
answer printed, must never ask for it. In process, with `SparkProvider._start` replaced by a
failure: a command that started Spark would end with an internal error.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from compiler.cli import main

ROOT = Path(__file__).resolve().parents[2]
REACH = str(ROOT / "examples" / "reach.dl")
DATA = str(ROOT / "examples" / "reach")


@pytest.fixture(autouse=True)
def no_spark(monkeypatch):
    from runtime.spark import SparkProvider

    def refuse(self):
        raise RuntimeError("Spark was started")

    monkeypatch.setattr(SparkProvider, "_start", refuse)


def deltalog(*args, capsys) -> tuple[int, str, str]:
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


def test_run_with_the_arrow_reader_prints_the_answer_without_spark(capsys):
    code, out, err = deltalog("run", REACH, "--input-dir", DATA, "--reader", "arrow", capsys=capsys)
    assert (code, err) == (0, "")
    assert out.startswith("reach (")


def test_check_and_explain_need_no_spark(capsys):
    assert deltalog("check", REACH, capsys=capsys)[0] == 0
    code, out, err = deltalog("explain", REACH, capsys=capsys)
    assert (code, err) == (0, "") and "dataflow:" in out


def test_errors_before_any_read_need_no_spark(tmp_path, capsys):
    bad = tmp_path / "bad.dl"
    bad.write_text(".decl edge(a: number, b: number)\n.input edge\nr(x) :- edge(x).\n")
    code, _, err = deltalog("run", str(bad), "--input", f"edge={DATA}/edge.parquet", capsys=capsys)
    assert code == 1 and err.startswith(f"{bad}:3:9: ArityError:")
    code, _, err = deltalog("run", REACH, "--input", "edge=no/such/edge.parquet", capsys=capsys)
    assert (code, err) == (1, "deltalog: error: 'edge': no/such/edge.parquet: no such file or directory\n")


def test_repl_loads_parquet_with_the_arrow_reader_without_spark(monkeypatch, capsys):
    import io

    script = f"load edge {DATA}/edge.parquet; load root {DATA}/root.parquet; commit;\n"
    monkeypatch.setattr("sys.stdin", io.StringIO(script))
    code, out, err = deltalog("repl", REACH, "--reader", "arrow", capsys=capsys)
    assert (code, err) == (0, "")
    assert out.splitlines()[0].startswith("loaded ") and "committed time 0: " in out


def test_what_the_spark_engine_refuses_by_the_program_needs_no_spark(tmp_path, capsys):
    unsigned = tmp_path / "u.dl"
    unsigned.write_text(".decl u(x: unsigned)\n.input u\n.decl v(x: unsigned)\nv(x + 1) :- u(x).\n.output v\n")
    (tmp_path / "u.facts").write_text("1\n")
    code, out, err = deltalog("run", str(unsigned), "--facts-dir", str(tmp_path), "--engine", "spark", capsys=capsys)
    assert (code, out) == (1, "") and err.startswith("deltalog: error: the Spark engine cannot run unsigned column of input 'u': ")
    code, out, err = deltalog("run", REACH, "--input-dir", DATA, "--engine", "spark", "--changes", f"edge={DATA}/edge.parquet", capsys=capsys)
    assert (code, out) == (2, "") and "--changes needs the in-process engine" in err


def test_ctrl_c_inside_a_kernel_call_is_an_interruption_not_an_internal_error(monkeypatch, capsys):
    # A signal that arrives while a compiled kernel runs is raised as the kernel returns, and
    # numba's dispatcher reports it as the cause of a SystemError ("returned a result with an
    # exception set"): the command stops as on any other Ctrl-C.
    import compiler.cli as cli

    def interrupted_kernel(args):
        try:
            raise KeyboardInterrupt
        except KeyboardInterrupt as signal:
            raise SystemError("CPUDispatcher(<function distinct_fused>) returned a result with an exception set") from signal

    real_parser = cli.parser

    def parser():
        p = real_parser()
        for action in p._subparsers._group_actions[0].choices.values():
            action.set_defaults(handler=interrupted_kernel)
        return p

    monkeypatch.setattr(cli, "parser", parser)
    code, out, err = deltalog("run", REACH, "--input-dir", DATA, "--reader", "arrow", capsys=capsys)
    assert (code, out, err) == (130, "", "deltalog: interrupted\n")


def test_single_file_without_an_output_directory_is_a_usage_error(capsys):
    code, out, err = deltalog("run", REACH, "--input-dir", DATA, "--reader", "arrow", "--single-file", capsys=capsys)
    assert (code, out) == (2, "")
    assert err == "deltalog run: usage error: --single-file needs --output-dir (it says how outputs are written there)\n"


def test_an_empty_csv_table_for_sql_says_why_it_has_no_types(tmp_path, capsys):
    (tmp_path / "edge.csv").write_text("src,dst\n")
    (tmp_path / "root.csv").write_text("r\n1\n")
    code, out, err = deltalog("run", str(ROOT / "examples" / "reach.sql"), "--input-dir", str(tmp_path), "--reader", "arrow", capsys=capsys)
    assert (code, out) == (1, "")
    assert err == (f"deltalog: error: 'edge': {tmp_path / 'edge.csv'}: column 'src' has no values to take its type from (SQL reads"
                   " a CSV or JSON table's column types from its rows): give the table at least one row, or as Parquet, whose"
                   " columns are typed\n")
    (tmp_path / "edge.csv").write_text("src,dst\n1,2\n")
    code, out, err = deltalog("run", str(ROOT / "examples" / "reach.sql"), "--input-dir", str(tmp_path), "--reader", "arrow", capsys=capsys)
    assert (code, err) == (0, "") and out


def test_a_sql_program_on_facts_files_says_they_cannot_be_sql_tables(capsys):
    # .facts files have neither column names nor types; the error names the file the program wanted.
    tc = ROOT / "examples" / "tc"
    for option in ("--input-dir", "-F"):
        code, out, err = deltalog("run", str(ROOT / "examples" / "tc.sql"), option, str(tc), capsys=capsys)
        assert (code, out) == (1, "")
        assert err == (f"deltalog: error: 'edge': {tc / 'edge.facts'}: a .facts file has no column names or types, which a SQL"
                       " program's table needs (give it as Parquet, CSV with a header, or JSON lines)\n")
