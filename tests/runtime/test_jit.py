"""Kernels compile at first call, one signature each, and announce a cold cache once."""

import os
import subprocess
import sys
from pathlib import Path

import numba
import numpy as np
import pytest

from runtime import jit
from runtime.kernels import M, V


def test_a_kernel_compiles_only_its_declared_signature_whatever_the_callers_pass():
    # Declared here, not at module level: the session fixture compiles every kernel declared by then.
    @jit.kernel(V, M)
    def _scaled_sum(scale, block):
        """Per column of `block`, the sum of its rows times scale[column]."""
        out = np.zeros(block.shape[1], np.int64)
        for r in range(block.shape[0]):
            for c in range(block.shape[1]):
                out[c] += block[r, c] * scale[c]
        return out

    @numba.njit
    def _scaled_sum_of_fresh_arrays(n):
        # C-contiguous arrays built inside compiled code: the call is typed with
        # layout "C", and must still resolve to the declared "A" signature.
        return _scaled_sum(np.ones(n, np.int64), np.ones((2, n), np.int64))

    assert not jit.compiled(_scaled_sum)  # declared, not yet compiled
    block = np.arange(6, dtype=np.int64).reshape(2, 3)
    assert _scaled_sum_of_fresh_arrays(3).tolist() == [2, 2, 2]  # first call, from compiled code
    assert _scaled_sum(np.ones(3, np.int64), block).tolist() == [3, 5, 7]  # C layout
    assert _scaled_sum(np.arange(3, dtype=np.int64), np.asfortranarray(block)).tolist() == [0, 5, 14]  # F
    assert _scaled_sum(np.ones(2, np.int64), block[:, ::2]).tolist() == [3, 7]  # strided
    assert jit.compiled(_scaled_sum)
    assert list(_scaled_sum.overloads) == [(V, M)]
    with pytest.raises(TypeError):  # converted or rejected, never reinterpreted
        _scaled_sum(np.ones(3), block)


_RUN_ONE_KERNEL = """
import numpy as np
from runtime import jit, kernels
print(jit.cold())
print(kernels.hash_columns(np.arange(4, dtype=np.int64).reshape(2, 2)).tolist())
stats = kernels.hash_columns.stats
print(sum(stats.cache_misses.values()), sum(stats.cache_hits.values()))
print(sum(jit.compiled(k) for k in jit._kernels))
"""


def _run_one_kernel(cache_dir: Path) -> tuple[list[str], str]:
    env = dict(os.environ, NUMBA_CACHE_DIR=str(cache_dir))
    root = Path(__file__).resolve().parents[2]
    done = subprocess.run(
        [sys.executable, "-c", _RUN_ONE_KERNEL], env=env, cwd=root, capture_output=True, text=True, check=True
    )
    return done.stdout.splitlines(), done.stderr


def test_a_cold_cache_is_announced_once_and_a_warm_one_compiles_nothing(tmp_path):
    """Two fresh interpreters on an empty numba cache directory, calling one small
    kernel (hash_columns, a fraction of a second to compile): the first compiles
    it and prints the notice once; the second loads it and is silent."""
    cold, notices = _run_one_kernel(tmp_path)
    assert notices.count(jit.NOTICE) == 1, notices
    assert cold[0] == "True"
    assert cold[2] == "1 0"  # compiled: one cache miss, no hit
    assert cold[3] == "1"  # only the kernel called was compiled

    warm, notices = _run_one_kernel(tmp_path)
    assert jit.NOTICE not in notices, notices
    assert warm[0] == "True"  # the kernels this run never called are still cold
    assert warm[1] == cold[1]
    assert warm[2] == "0 1"  # loaded from the cache, nothing compiled
    assert warm[3] == "1"


_HAND_OVER = """
import os
import shutil
import sys
import numpy as np
from runtime import jit, kernels
jit.HANDED_OVER = ("in_advance_product",)  # small, for the test's sake
os.cpu_count = lambda: 2  # a helper whatever the machine
if {fail}:
    sys.executable = shutil.which("false")  # a helper that fails at once
kernels.hash_columns(np.arange(4, dtype=np.int64).reshape(2, 2))  # the first cold compile starts the helper
print(jit._helper is not None)
print(kernels.in_advance_product(np.array([[1]], np.int64), np.array([[0, 1, 2]], np.int64)).tolist())
stats = kernels.in_advance_product.stats
print(sum(stats.cache_misses.values()), sum(stats.cache_hits.values()))
print(jit._helper.wait())
"""


@pytest.mark.parametrize("fail", [False, True])
def test_a_cold_start_has_a_helper_process_compile_the_handed_over_kernel(tmp_path, fail):
    """The first cold compile starts a helper process for the HANDED_OVER kernels; a call of
    one waits for it and loads what it compiled from the cache (nothing compiled here), or,
    when the helper failed, compiles it here: the same answer either way."""
    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path))
    root = Path(__file__).resolve().parents[2]
    done = subprocess.run([sys.executable, "-c", _HAND_OVER.format(fail=fail)], env=env, cwd=root,
                          capture_output=True, text=True, check=True)
    started, answer, stats, returncode = done.stdout.splitlines()
    assert started == "True"
    assert answer == "[False, True, True]"  # 0 is before the frontier {1}, 1 and 2 are not
    assert (stats, returncode) == (("1 0", "1") if fail else ("0 1", "0"))


_HELPER = """
from runtime.jit import helper


@helper
def answer():
    return {value}
"""

_KERNEL = """
from runtime.jit import kernel
from runtime.kernels import I
from pkg.helpers import answer


@kernel(I)
def call(x):
    return x + answer()
"""


def test_a_kernel_compiles_again_when_only_a_helper_in_another_file_changed(tmp_path):
    """numba's own cache is invalidated by the compiled function's file alone; the kernel's
    code also holds the helper it calls from another file. After an edit of that file
    only, the next run must not be served the kernel compiled with the old helper."""
    package = tmp_path / "pkg"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "kernels.py").write_text(_KERNEL)
    root = Path(__file__).resolve().parents[2]
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(tmp_path), str(root)]), NUMBA_CACHE_DIR=str(tmp_path / "cache"))

    def run(value: int) -> str:
        (package / "helpers.py").write_text(_HELPER.format(value=value))
        code = "from pkg.kernels import call; print(call(1))"
        return subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True).stdout.strip()

    kernel_file = package / "kernels.py"
    stamp = kernel_file.stat().st_mtime_ns
    assert run(10) == "11"
    assert run(10) == "11"  # (from the cache)
    assert run(20) == "21"
    assert kernel_file.stat().st_mtime_ns == stamp  # the kernel's own file never changed


def test_a_borrowed_view_reads_and_writes_the_array_it_views_in_any_layout():
    @jit.inlined
    def _cell(block, r, c):
        return block[r, c]

    @jit.kernel(M, M)
    def _copy_through_views(source, target):
        # Views passed to an inlined helper in a loop: where reference counting would happen.
        source_view, target_view = jit.borrowed(source), jit.borrowed(target)
        total = 0
        for r in range(source_view.shape[0]):
            for c in range(source_view.shape[1]):
                target_view[r, c] = _cell(source_view, r, c)
                total += _cell(target_view, r, c)
        return total + jit.kept_alive(source, target)

    block = np.arange(12, dtype=np.int64).reshape(3, 4) * 7 - 20
    for source in (block, np.asfortranarray(block), block[::-1, ::2], block[:, 1:]):
        target = np.zeros(source.shape, np.int64)
        copies = sys.getrefcount(source), sys.getrefcount(target)
        assert _copy_through_views(source, target) == source.sum()
        assert target.tolist() == source.tolist()
        assert (sys.getrefcount(source), sys.getrefcount(target)) == copies
