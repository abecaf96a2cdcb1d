"""The embedded Spark session: started once, lazily, and quietly.

A `SparkProvider` holds the settings (`master`, default `local[*]`, and extra
`key=value` confs passed through as with spark-submit) and starts the session
the first time `get()` is called, so a command that reads and writes no table
never pays for a JVM. Startup is quiet: Spark's log4j output goes to a log file
(`log_path`, in the temp directory by default) rather than the terminal, the
console progress bar and the web UI are off, and the driver binds to loopback
when no address is configured. Errors still reach Python as exceptions.
PySpark installs a SIGINT handler of its own; a caller that installed one
keeps it. The JVM maps Spark's classes from an archive built once in the
background (runtime.spark.class_archive), seconds off every later start.

Spark's driver runs in a JVM, and Spark 4 needs Java 17 or 21. Its launcher
(bin/spark-class) takes `$JAVA_HOME/bin/java`, else `java` on PATH; when
neither is there, or the JVM exits before PySpark can reach it, `get()`
raises `SparkUnavailable`, whose one-line message says what was wrong and how
to point JAVA_HOME at a Java 17 (PySpark's own word for it is
`[JAVA_GATEWAY_EXITED]`).
"""

from __future__ import annotations

import glob
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from contextlib import nullcontext
from pathlib import Path

from runtime.spark import class_archive

_LOG4J = """\
rootLogger.level = {level}
rootLogger.appenderRef.file.ref = file
appender.file.type = File
appender.file.name = file
appender.file.fileName = {log}
appender.file.layout.type = PatternLayout
appender.file.layout.pattern = %d{{yy/MM/dd HH:mm:ss}} %p %c{{1}}: %m%n
"""

DEFAULT_CONF = {
    "spark.ui.enabled": "false",
    "spark.ui.showConsoleProgress": "false",
    "spark.sql.execution.arrow.pyspark.enabled": "true",
    # Arrow batches of 128k rows: each task's Arrow vectors stay small and are reused from
    # batch to batch (1,000,000-row batches grow them by doubling, into fresh memory).
    "spark.sql.execution.arrow.maxRecordsPerBatch": "131072",
    # A task's result (its partition's Arrow batches, tens of MB) goes straight to the driver
    # in the task's status message up to this size, instead of through the block manager and
    # a network fetch (over loopback, even in local mode) from 1 MB on. Capped by
    # spark.rpc.message.maxSize (128 MB by default).
    "spark.task.maxDirectResultSize": "128m",
    "spark.sql.session.timeZone": "UTC",
    "spark.sql.shuffle.partitions": "4",
    # Split files into more read tasks than Spark's 128 MB default, so a local session's
    # few cores scan and convert a table of ~100 MB in parallel rather than in one task.
    "spark.sql.files.maxPartitionBytes": "16m",
    "spark.sql.sources.partitionColumnTypeInference.enabled": "false",
    # On, each DataFrame call made from Python asks the JVM for a setting and walks the Python
    # stack (importing IPython to do it): 0.2 s at the first call, for error origins we never show.
    "spark.python.sql.dataFrameDebugging.enabled": "false",
}


class SparkUnavailable(RuntimeError):
    """Spark cannot start on this machine (no usable Java); the message says how to fix it."""


# Where Java 17 installations usually live (Debian/Ubuntu, Fedora, macOS), to name one in the advice.
_JAVA_17_HOMES = ("/usr/lib/jvm/java-17-*", "/usr/lib/jvm/*-17*", "/Library/Java/JavaVirtualMachines/*17*/Contents/Home")


def java_executable(environ=os.environ) -> str | None:
    """The java bin/spark-class takes: `$JAVA_HOME/bin/java`, else `java` on PATH (None if neither is there)."""
    home = environ.get("JAVA_HOME")
    if home:
        java = os.path.join(home, "bin", "java")
        return java if os.access(java, os.X_OK) else None
    return shutil.which("java", path=environ.get("PATH", os.defpath))


def java_problem(environ=os.environ) -> str | None:
    """Why Spark's launcher would find no java, as bin/spark-class looks for it; None if it finds one."""
    if java_executable(environ) is not None:
        return None
    home = environ.get("JAVA_HOME")
    if home:
        return f"JAVA_HOME is {home}, which has no bin/java"
    return "JAVA_HOME is not set and there is no java on PATH"


def java_advice() -> str:
    """How to give Spark a Java 17, naming an installation found here if there is one."""
    found = sorted(h for pattern in _JAVA_17_HOMES for h in glob.glob(pattern) if os.access(os.path.join(h, "bin", "java"), os.X_OK))
    if found:
        return f"point JAVA_HOME at a Java 17 installation (export JAVA_HOME={found[0]})"
    return "install Java 17 and point JAVA_HOME at it (export JAVA_HOME=/path/to/jdk-17)"


def _java_version(environ=os.environ) -> str:
    """The first line `java -version` prints, for the java Spark's launcher would take."""
    home = environ.get("JAVA_HOME")
    java = java_executable(environ) or (os.path.join(home, "bin", "java") if home else "java")
    try:
        done = subprocess.run([java, "-version"], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired) as e:
        return f"{java}: {e}"
    said = (done.stderr or done.stdout).strip().splitlines()
    return f"{java}: {said[0] if said else f'exit code {done.returncode}'}"


class SparkProvider:
    """Starts a SparkSession on first use; `stop()` ends it if it was started."""

    def __init__(self, master: str | None = None, conf: dict[str, str] | None = None, log_path: str | None = None):
        self.master = master or "local[*]"
        self.conf = dict(conf or {})
        self.log_path = log_path or os.path.join(tempfile.gettempdir(), f"deltalog-spark-{os.getpid()}.log")
        self.startup_seconds: float | None = None
        self.waited_seconds: float | None = None  # of startup_seconds, how long get() waited
        self.starting = None  # a context manager factory around the start (a progress display's hook)
        self._spark = None
        self._background: _BackgroundStart | None = None
        self._class_archive: class_archive.ClassArchive | None = None

    @property
    def started(self) -> bool:
        return self._spark is not None

    def start_in_background(self) -> None:
        """Begin starting the session on a thread, so that the JVM's start (seconds) overlaps
        what the caller does before its first table; `get()` then waits for it and raises
        what the start raised. For a caller that knows it will need Spark."""
        if self._spark is None and self._background is None:
            self._background = _BackgroundStart(self._start)

    def get(self):
        if self._spark is None:
            began = time.perf_counter()
            with self.starting() if self.starting is not None else nullcontext():
                if self._background is not None:
                    background, self._background = self._background, None
                    self._spark = background.result()
                else:
                    self._spark = self._start()
            self.waited_seconds = time.perf_counter() - began
        return self._spark

    def _start(self):
        began = time.perf_counter()
        if "PYSPARK_GATEWAY_PORT" not in os.environ:  # else PySpark joins a JVM already running
            problem = java_problem()
            if problem:
                raise SparkUnavailable(f"Spark needs Java 17 (or 21), but {problem}: {java_advice()}")
        os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
        os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
        os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
        log4j = Path(self.log_path).with_suffix(".log4j2.properties")
        log4j.write_text(_LOG4J.format(level="warn", log=self.log_path))
        java_opts = f"-Dlog4j2.configurationFile=file:{log4j}"
        conf = dict(DEFAULT_CONF)
        conf.update(self.conf)
        if "spark.driver.extraJavaOptions" in conf:
            java_opts = conf["spark.driver.extraJavaOptions"] + " " + java_opts
        from pyspark import SparkContext
        from pyspark.sql import SparkSession

        if SparkContext._gateway is None and "PYSPARK_GATEWAY_PORT" not in os.environ:  # a JVM starts now
            self._class_archive = _class_archive(conf)
            if self._class_archive is not None:
                java_opts += " " + self._class_archive.java_options
        conf["spark.driver.extraJavaOptions"] = java_opts

        builder = SparkSession.builder.master(self.master).appName("deltalog")
        for key, value in conf.items():
            builder = builder.config(key, value)
        sigint = signal.getsignal(signal.SIGINT)
        # The JVM inherits our stderr and prints a few lines before log4j is set up
        # (and warnings after): give it the log file instead of the terminal.
        with _stderr_to(self.log_path):
            try:
                spark = builder.getOrCreate()
            except Exception as e:
                if self._class_archive is not None:
                    self._class_archive.release()
                    self._class_archive = None
                if "JAVA_GATEWAY_EXITED" not in str(e):
                    raise
                raise SparkUnavailable(
                    f"Spark needs Java 17 (or 21), but its JVM exited at startup ({_java_version()}): {java_advice()}"
                    f" (Spark's log: {self.log_path})"
                ) from None
        if sigint not in (signal.default_int_handler, None) and threading.current_thread() is threading.main_thread():
            # PySpark replaced the caller's own SIGINT handler with one raising KeyboardInterrupt
            # (inside whatever py4j call is under way): the caller's choice stands
            signal.signal(signal.SIGINT, sigint)
        spark.sparkContext.setLogLevel("ERROR")
        self.startup_seconds = time.perf_counter() - began
        return spark

    def stop(self) -> None:
        if self._spark is None and self._background is not None:
            background, self._background = self._background, None
            self._spark = background.result(ignore_errors=True)
        if self._spark is not None:
            if self._class_archive is not None:
                try:
                    self._class_archive.build_after_exit(self._spark.sparkContext._jvm)
                except Exception as e:  # the archive only saves time; the session's work is done
                    print(f"deltalog: note: Spark's class archive is not built: {e}", file=sys.stderr)
                self._class_archive = None
            self._spark.stop()
            self._spark = None


def _class_archive(conf: dict[str, str]) -> class_archive.ClassArchive | None:
    java = java_executable()
    if java is None:
        return None
    from pyspark.find_spark_home import _find_spark_home

    return class_archive.prepare(java, _find_spark_home(), conf)


class _BackgroundStart:
    """`start()` run on a daemon thread. While it runs, the JVM it launches takes file
    descriptor 2 for its log (_stderr_to); this process's own messages meanwhile go to a
    copy of the descriptor taken before, so a compile error printed then still reaches the
    terminal. (A `sys.stderr` without a descriptor, as under pytest's capsys, is left alone:
    the swap of descriptor 2 does not reach it.)"""

    def __init__(self, start):
        self._value = self._error = None
        self._stderr = None
        try:
            if sys.stderr.fileno() == 2:
                sys.stderr.flush()
                self._stderr = sys.stderr
                sys.stderr = os.fdopen(os.dup(2), "w", buffering=1, encoding=self._stderr.encoding, errors=self._stderr.errors)
        except (AttributeError, OSError, ValueError):
            pass
        self._thread = threading.Thread(target=self._run, args=(start,), name="deltalog-spark-start", daemon=True)
        self._thread.start()

    def _run(self, start) -> None:
        try:
            self._value = start()
        except BaseException as e:  # handed to the thread that asks for the session
            self._error = e

    def result(self, ignore_errors: bool = False):
        self._thread.join()
        if self._stderr is not None:
            copy, sys.stderr, self._stderr = sys.stderr, self._stderr, None
            copy.close()
        if self._error is not None and not ignore_errors:
            raise self._error
        return self._value


class _stderr_to:
    """Point file descriptor 2 at a file while a child process is started."""

    def __init__(self, path: str):
        self.path = path

    def __enter__(self):
        sys.stderr.flush()
        self.saved = os.dup(2)
        fd = os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
        os.dup2(fd, 2)
        os.close(fd)

    def __exit__(self, *exc):
        os.dup2(self.saved, 2)
        os.close(self.saved)
        return False
