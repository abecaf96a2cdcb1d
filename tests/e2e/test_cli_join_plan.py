"""`--join-plan` on the command line reaches the planner: explain shows the
choice, and run gives the same triangles either way (examples/triangles.dl)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
TRIANGLES = ROOT / "examples" / "triangles.dl"


def deltalog(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "compiler.cli", *args], cwd=ROOT, capture_output=True, text=True, timeout=300)


@pytest.mark.parametrize("plan, delta", [("delta", True), ("binary", False), ("auto", True)])
def test_explain_shows_the_join_plan(plan, delta):
    done = deltalog("explain", str(TRIANGLES), "--join-plan", plan)
    assert done.returncode == 0, done.stderr
    plan_text = done.stdout.split("pushed into Spark reads")[0]
    assert ("DeltaJoin" in plan_text) == delta


def test_an_unknown_join_plan_is_a_usage_error():
    done = deltalog("explain", str(TRIANGLES), "--join-plan", "greedy")
    assert done.returncode == 2
    assert "--join-plan" in done.stderr and "greedy" in done.stderr
