"""`deltalog explain --dot FILE.png` as a subprocess, with a fake Graphviz `dot` on PATH.

The CLI finds `dot` on the PATH it was started with and pipes it the DOT
text; the fake (tests.compiler.fake_dot) writes what it received, so the
picture file must hold exactly the DOT text `--dot FILE.dot` writes. The
other cases (SVG, a failing dot, no dot) run in process:
tests/compiler/test_cli_explain_render.py.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from tests.compiler.fake_dot import install_fake_dot

ROOT = Path(__file__).resolve().parents[2]
TRIANGLES = str(ROOT / "examples" / "triangles.dl")


def test_explain_renders_png_through_dot_on_path(tmp_path):
    fake = install_fake_dot(tmp_path / "bin")
    env = dict(os.environ, PATH=f"{fake}{os.pathsep}{os.environ.get('PATH', '')}")
    png = tmp_path / "triangles.png"
    done = subprocess.run([sys.executable, "-m", "compiler.cli", "explain", TRIANGLES, "--dot", str(png)],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert done.stderr == ""
    assert done.stdout.splitlines()[-1] == f"wrote the dataflow graph to {png} (PNG)"
    # explain names each multiway join's plan and why
    assert "tri: 3-way cyclic join of edge, edge, edge -> delta: cyclic" in done.stdout
    from compiler.cli import main  # the DOT text, in process: what the subprocess must have piped

    dot = tmp_path / "triangles.dot"
    assert main(["explain", TRIANGLES, "--dot", str(dot)]) == 0
    assert png.read_text() == "png\n" + dot.read_text()
