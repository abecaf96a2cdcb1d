"""The runtime asks numpy for small pages (runtime.memory), unless the environment chose."""

import os
import subprocess
import sys

import pytest

_PROBE = "import runtime, numpy as np; from runtime.memory import _madvise_hugepage; print(_madvise_hugepage())"


@pytest.mark.parametrize("env, expected", [({}, "False"), ({"NUMPY_MADVISE_HUGEPAGE": "1"}, "True")])
def test_importing_the_runtime_turns_huge_pages_off_unless_the_environment_chose(env, expected):
    base = {k: v for k, v in os.environ.items() if k != "NUMPY_MADVISE_HUGEPAGE"}
    out = subprocess.run([sys.executable, "-c", _PROBE], env={**base, **env}, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == expected
