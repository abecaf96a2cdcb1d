"""`deltalog explain --dot FILE.png|FILE.svg`: our side of the Graphviz contract, in process.

Graphviz is not installed here, so a fake `dot` on PATH stands in for it
(tests.compiler.fake_dot): it accepts only `-Tpng|-Tsvg -o FILE`, reads DOT
text on stdin, and writes the format and the text it got to FILE. The CLI
must hand it the same DOT text `--dot FILE.dot` writes, report a failing
`dot` in one line, and without `dot` on PATH fail in one line (exit 1) that
says Graphviz is needed and how to get the DOT text instead -- before
printing anything or writing any file. tests/e2e/test_cli_explain_render.py
runs the PNG case as a subprocess.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from compiler.cli import main
from tests.compiler.fake_dot import install_fake_dot

ANDERSEN = str(Path(__file__).resolve().parents[2] / "examples" / "andersen.dl")


def explain_dot(path, capsys) -> tuple[int, str, str]:
    code = main(["explain", ANDERSEN, "--dot", str(path)])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.parametrize("fmt", ["png", "svg"])
def test_a_picture_is_dot_run_on_the_dot_text(fmt, tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("PATH", str(install_fake_dot(tmp_path / "bin")))
    code, plain_out, _ = explain_dot(tmp_path / "graph.dot", capsys)
    assert code == 0
    picture = tmp_path / f"graph.{fmt}"
    code, out, err = explain_dot(picture, capsys)
    assert (code, err) == (0, "")
    # the same plan and graph printed; the last line says where the graph went, and how
    assert out.splitlines()[:-1] == plain_out.splitlines()[:-1]
    assert plain_out.splitlines()[-1] == f"wrote the dataflow graph to {tmp_path / 'graph.dot'} (Graphviz DOT)"
    assert out.splitlines()[-1] == f"wrote the dataflow graph to {picture} ({fmt.upper()})"
    assert picture.read_text() == f"{fmt}\n" + (tmp_path / "graph.dot").read_text()
    assert not list(tmp_path.glob(f"graph.{fmt}.*"))  # no side files


def test_a_failing_dot_is_one_line(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("PATH", str(install_fake_dot(tmp_path / "bin", fail="Error: <stdin>: syntax error in line 1 near '{'")))
    code, _, err = explain_dot(tmp_path / "graph.svg", capsys)
    assert code == 1
    assert err == f"deltalog: error: Graphviz's dot could not write {tmp_path / 'graph.svg'}: Error: <stdin>: syntax error in line 1 near '{{'\n"


def test_without_graphviz_a_picture_is_a_one_line_error(tmp_path, monkeypatch, capsys):
    empty = tmp_path / "bin"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))
    code, out, err = explain_dot(tmp_path / "graph.png", capsys)
    assert code == 1 and out == ""
    assert err == (
        f"deltalog: error: writing {tmp_path / 'graph.png'} needs Graphviz (its `dot` program is not on PATH);"
        f" install it, or write the DOT text instead: --dot {tmp_path / 'graph'}.dot\n"
    )
    assert list(tmp_path.iterdir()) == [empty]
    # the DOT text itself needs no Graphviz
    code, _, _ = explain_dot(tmp_path / "graph.dot", capsys)
    assert code == 0 and (tmp_path / "graph.dot").read_text().startswith('digraph "andersen.dl" {')
