"""Every runtime kernel compiled (or loaded from numba's cache) before the first test:
kernels compile at their first call, which must not count against hypothesis deadlines."""

import pytest

from runtime import jit


@pytest.fixture(scope="session", autouse=True)
def _kernels_compiled():
    jit.compile_all()
