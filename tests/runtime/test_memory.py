"""The runtime asks numpy for small pages and glibc to reuse freed blocks (runtime.memory),
unless the environment chose."""

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


# A 64 MB block allocated, freed and allocated again: the page faults of its second filling.
_REFILL = """
import resource, numpy as np, runtime
def faults():
    return resource.getrusage(resource.RUSAGE_SELF).ru_minflt
np.ones(8_000_000)
before = faults()
np.ones(8_000_000)
print(faults() - before)
"""


@pytest.mark.parametrize("env, faulted", [({}, False), ({"MALLOC_MMAP_MAX_": "65536"}, True)])
def test_importing_the_runtime_has_freed_blocks_reused_unless_the_environment_chose(env, faulted):
    """A freed 64 MB block serves the next one without faulting its 16,384 pages in again,
    unless the user set glibc's allocator themselves (here to its default)."""
    base = {k: v for k, v in os.environ.items() if k not in ("MALLOC_MMAP_MAX_", "MALLOC_TRIM_THRESHOLD_", "GLIBC_TUNABLES")}
    out = subprocess.run([sys.executable, "-c", _REFILL], env={**base, **env}, capture_output=True, text=True, check=True)
    assert (int(out.stdout) > 8_000) == faulted
