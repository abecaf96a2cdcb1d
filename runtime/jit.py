"""Kernels: numba-compiled functions with one declared signature, compiled when first called.

A kernel is a compiled loop the runtime calls from Python (or from another
kernel). It declares its one signature (int64 arrays of any layout, mostly), so
whatever layouts its callers pass, one specialisation is compiled and numba
converts the arguments to it, or rejects them with a TypeError. It is compiled
at its first call, not at import: a program compiles only the kernels it runs.
Compiled code is cached on disk by numba (`__pycache__` next to the sources, or
NUMBA_CACHE_DIR) and loaded, not compiled, on later runs. Helpers, the plain
`helper` functions kernels call, are compiled as part of their callers, so the
cache is keyed by a digest of the runtime's kernel sources as well as by numba's
own key (which looks at the function's file only): a change to any of them
compiles again rather than loading code built from the old helpers.

A cold start (an empty or stale cache) compiles for seconds (19.5-19.8 CPU s for
the README's example, 11.8 s of waiting on two cores). The first
time a kernel is about to really compile (its signature is not in numba's cache
index), `notice()` prints one line to stderr, once per process; a warm start is
silent. numba compiles one function at a time in a process, so on a machine with a
second core the first cold compile also starts a helper process that compiles the
largest kernel nearly every program runs (distinct_fused, HANDED_OVER) into the
cache meanwhile; when the program first calls it, it waits for the helper and loads
it (or compiles it itself if the helper failed). A helper still compiling when the
program ends is stopped: numba replaces cache files whole, so none is left half
written. `cold()` tells beforehand whether some kernel would compile, for a front
end that shows the wait its own way (it may call `notice()` itself, which then
prints nothing more). `compile_all()` compiles every kernel up front instead.

What a first run pays for (measured with a `numba.core.event` listener): a fixed
0.1-0.4 s for every distinct function compiled -- each helper, each numba overload
such as np.argsort or np.concatenate, each extra specialisation (a helper called with
the literal 0 is compiled for `Literal[int](0)` and again for int64) -- plus hidden
code: a slice assignment between arrays compiles numba's broadcasting and its
shape-error formatting, and an `inlined` helper is typed again at every call site. So
kernels write such loops out, and a helper with several call sites is a `kernel` of
one signature rather than `inlined`.

What a compiled loop pays for that its code does not show: numba counts references to
arrays with atomic instructions, at every helper call and every copy of an array
variable, so kernels work on `borrowed` views of the arrays they are given and grow
their own arrays outside their hot loops.
"""

from __future__ import annotations

import atexit
import functools
import hashlib
import os
import subprocess
import sys
import threading
from pathlib import Path

import numba
import numba.core.cgutils
import numba.extending

_OPTIONS = dict(cache=True, nogil=True)


@functools.cache
def _sources_digest(package: Path) -> str:
    """A digest of the sources of a package's modules that declare compiled functions."""
    digest = hashlib.sha256()
    for path in sorted(package.rglob("*.py")):
        text = path.read_bytes()
        if path.name == "jit.py" or b"jit import" in text:
            digest.update(str(path.relative_to(package)).encode() + b"\0" + text)
    return digest.hexdigest()


def _package_of(fn) -> Path:
    """The top-level package directory holding fn's module."""
    path = Path(fn.__code__.co_filename).resolve().parent
    while (path.parent / "__init__.py").exists():
        path = path.parent
    return path


def _keyed_by_sources(dispatcher, fn):
    """Make the package's sources part of the dispatcher's cache key.

    numba's on-disk cache is invalidated when the compiled function's own file
    changes, but its machine code also holds the helpers and kernels it calls,
    which may live in other files: after an edit (or a partial update of an
    installed copy) to one of those alone, the cache would serve code compiled
    from the old callee. Keyed by a digest of every module that declares compiled
    functions, any such change compiles again.
    """
    if not isinstance(dispatcher, numba.core.dispatcher.Dispatcher):
        return dispatcher  # NUMBA_DISABLE_JIT: the Python function itself
    cache = dispatcher._cache
    own_key = cache._index_key
    sources = _sources_digest(_package_of(fn))
    cache._index_key = lambda sig, codegen: own_key(sig, codegen) + (sources,)
    return dispatcher


def helper(fn):
    """A function kernels call: compiled while its first caller compiles, once for
    each set of argument types (layouts, literal constants) its callers pass."""
    return _keyed_by_sources(numba.njit(**_OPTIONS)(fn), fn)


@numba.extending.intrinsic
def borrowed(typingctx, array):
    """`array` as a view whose references numba does not count.

    numba counts a reference to an array -- an atomic add on its shared count, and
    an atomic subtract to let go -- each time the array is passed to a helper,
    inlined or not, or copied from one variable to another. In a kernel's inner
    loops those atomics took a third of the time (distinct_fused on a 549,000-key
    round: 75 -> 34-47 ms without them), and more when two threads count references
    to one trace. A kernel takes borrowed views of the arrays it is given, which its
    caller keeps alive for the whole call, and uses those. A borrowed view must not
    outlive what it views: it is never returned or stored, and a view of an array
    the kernel made itself needs `kept_alive` after its last use.
    """
    if not isinstance(array, numba.types.Array):
        return None

    def codegen(context, builder, signature, args):
        view = context.make_array(array)(context, builder, value=args[0])
        view.meminfo = numba.core.cgutils.get_null_value(view.meminfo.type)
        view.parent = numba.core.cgutils.get_null_value(view.parent.type)
        return view._getvalue()

    return array(array), codegen


@numba.extending.intrinsic
def kept_alive(typingctx, first, second):
    """0, as a use of the arrays `first` and `second`: numba lets an array go after its
    last use, and this one comes after every use of their borrowed views."""

    def codegen(context, builder, signature, args):
        return context.get_constant(numba.types.int64, 0)

    return numba.types.int64(first, second), codegen


@numba.extending.intrinsic
def prefetch(typingctx, block, row, column):
    """Ask the processor to start loading block[row, column]'s cache line (a 2-D array),
    so that a load of it that comes later does not wait as long."""

    def codegen(context, builder, signature, args):
        import llvmlite.ir as ir

        array = context.make_array(signature.args[0])(context, builder, value=args[0])
        pointer = numba.core.cgutils.get_item_pointer(context, builder, signature.args[0], array, [args[1], args[2]], wraparound=False)
        byte = ir.IntType(8).as_pointer()
        i32 = ir.IntType(32)
        fn = numba.core.cgutils.get_or_insert_function(builder.module, ir.FunctionType(ir.VoidType(), [byte, i32, i32, i32]), "llvm.prefetch.p0i8")
        builder.call(fn, [builder.bitcast(pointer, byte), i32(0), i32(3), i32(1)])
        return context.get_dummy_value()

    return numba.types.void(block, row, column), codegen


def inlined(fn):
    """A helper whose code is inlined into each caller at numba's IR level, then typed
    with it: for small hot helpers whose call would cost more than their work.
    (Inlining every helper compiles more slowly: the IR is typed once per call site.)"""
    return _keyed_by_sources(numba.njit(inline="always", **_OPTIONS)(fn), fn)

NOTICE = "deltalog: compiling runtime kernels (first run only; cached afterwards) ..."

_kernels: list[numba.core.dispatcher.Dispatcher] = []  # every kernel declared, in declaration order
_compiling = threading.RLock()
_noticed = False


def kernel(*argtypes):
    """Decorator: `fn` as a kernel with the signature `argtypes` (numba types),
    compiled (or loaded from the cache) when first called, from Python or from
    another kernel; no other signature is ever compiled."""

    def declare(fn):
        dispatcher = _keyed_by_sources(numba.njit(**_OPTIONS)(fn), fn)
        if not isinstance(dispatcher, numba.core.dispatcher.Dispatcher):
            return dispatcher  # NUMBA_DISABLE_JIT: the Python function itself
        _declare_signature(dispatcher, tuple(argtypes))
        _kernels.append(dispatcher)
        return dispatcher

    return declare


def _declare_signature(dispatcher, signature):
    # A numba dispatcher asks for a compilation through two methods: a Python
    # call with argument types it has no code for calls `_compile_for_args`; a
    # kernel being typed that calls this one calls `compile` (through
    # `get_call_template`). Both are redirected to compile the declared
    # signature, then compilation is switched off: from then on numba resolves
    # every call to that signature by converting the arguments (C or F layout
    # to any layout), or raises a TypeError.
    # Two threads may call a kernel for the first time at once (runtime.parallel): one
    # compiles, the other waits for it (re-entrant: compiling a kernel compiles its callees).
    compile_any = dispatcher.compile

    def compile_declared(_requested=None):
        with _compiling:
            if dispatcher._can_compile:
                if not _in_cache(dispatcher, signature):
                    notice()
                    _hand_over(dispatcher)
                compile_any(signature)
                dispatcher.disable_compile()
        return dispatcher.overloads[signature].entry_point

    def compile_for_args(*args, **kws):
        compile_declared()
        return dispatcher  # dispatched again: arguments checked and converted

    dispatcher.compile = compile_declared
    dispatcher._compile_for_args = compile_for_args
    dispatcher.declared_signature = signature


def _in_cache(dispatcher, signature) -> bool:
    """The signature's compiled code is in numba's on-disk cache index, and fresh
    (the index is empty when the source file changed since)."""
    cache = dispatcher._cache
    key = cache._index_key(signature, dispatcher.targetctx.codegen())
    return key in cache._cache_file._load_index()


HANDED_OVER = ("distinct_fused",)  # compiled by a helper process on a cold start (about 10 s of 20)
_HELPER_ENV = "DELTALOG_COMPILE_HELPER"  # set in the helper: it starts no helper of its own
_HELPER_PATIENCE = 300  # seconds: a helper this slow is stopped, and the kernel compiled here
# The helper: each argument is a kernel (module.name) to compile into the cache.
_HELPER_CODE = """
import importlib, sys
for name in sys.argv[1:]:
    module, _, kernel = name.rpartition(".")
    dispatcher = getattr(importlib.import_module(module), kernel)
    dispatcher.compile(dispatcher.declared_signature)
"""
_helper: subprocess.Popen | None = None


def _hand_over(dispatcher) -> None:
    """A cold compile of `dispatcher` is about to start: the first one starts the helper
    process for the HANDED_OVER kernels still to compile (not `dispatcher` itself); a
    compile of a handed-over kernel waits for the helper, then loads what it compiled."""
    global _helper
    if _helper is not None:
        if dispatcher.py_func.__name__ in HANDED_OVER:
            try:
                _helper.wait(timeout=_HELPER_PATIENCE)
            except subprocess.TimeoutExpired:  # compiled here instead (numba's cache takes either copy)
                _stop_helper(_helper)
        return
    if _HELPER_ENV in os.environ or (os.cpu_count() or 1) < 2 or getattr(sys, "frozen", False):
        return  # a frozen app's executable is the app, not Python
    todo = [k for k in _kernels if k.py_func.__name__ in HANDED_OVER and k is not dispatcher and _would_compile(k)]
    if not todo:
        return
    env = dict(os.environ, **{_HELPER_ENV: "1"})
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(_package_of(todo[0].py_func).parent), os.environ.get("PYTHONPATH")]))
    names = [f"{k.py_func.__module__}.{k.py_func.__name__}" for k in todo]
    try:
        _helper = subprocess.Popen([sys.executable, "-c", _HELPER_CODE, *names], env=env, stdin=subprocess.DEVNULL,
                                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    except OSError:  # no processes to be had: this process compiles everything
        return
    atexit.register(_stop_helper, _helper)


def _stop_helper(helper: subprocess.Popen) -> None:
    if helper.poll() is None:
        helper.terminate()
        helper.wait()


def compiled(dispatcher) -> bool:
    """The kernel has been compiled or loaded in this process."""
    return not dispatcher._can_compile


def _would_compile(dispatcher) -> bool:
    """The kernel is neither loaded in this process nor in the on-disk cache."""
    return not compiled(dispatcher) and not _in_cache(dispatcher, dispatcher.declared_signature)


def cold() -> bool:
    """Some declared kernel would compile at its first call: it is neither loaded
    in this process nor in the on-disk cache. (A run compiles only the kernels it
    calls, so a cold cache may still mean a run compiles nothing.)"""
    return any(_would_compile(k) for k in _kernels)


def compile_all() -> None:
    """Compile (or load from the cache) every declared kernel now: for what must
    not pay for compiling later, such as timed benchmarks and tests with deadlines."""
    for k in _kernels:
        k.compile(k.declared_signature)


def notice() -> None:
    """Print the one-line compiling notice to stderr, the first time only."""
    global _noticed
    if not _noticed:
        _noticed = True
        print(NOTICE, file=sys.stderr, flush=True)
