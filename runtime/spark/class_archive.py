"""Spark's class archive: the JVM's classes parsed and laid out once, mapped at every later start.

Most of Spark's start and of its first jobs is the JVM loading, parsing and
verifying classes (about 15,000 for a read and a write). Java's Class Data
Sharing maps a prebuilt archive of them instead; measured on this project's
2-core machine with Java 17 and Spark 4.0, the driver's start went from 5.1 to
2.5 s and the first read of a table from 2.9 to 1.4 s.

An archive is only valid for the JVM and the classpath it was built with (with
another one the JVM ignores it, quietly, and starts as usual), so its file
name is a digest of the java binary, the Spark version and its jars, and it
lives in the user's cache directory (`$XDG_CACHE_HOME/deltalog`, else
`~/.cache/deltalog`; about 180 MB). Building one costs about 30 s of CPU, so no
run waits for it:

1. A start with no archive takes the build lock and asks its JVM to list the
   classes it loads (`-XX:DumpLoadedClassList`, no measurable cost).
2. When the session stops, a detached process (`python -m
   runtime.spark.class_archive`) waits for that JVM to exit, then runs
   `java -Xshare:dump` over the list, at low priority, into a file beside the
   archive's name, renamed into place when complete; archives of other
   digests are deleted then. On a terminal, one line on stderr says so.
3. Later starts pass `-XX:SharedArchiveFile`.

A build that fails leaves a `.failed` file (with its log) and is not tried
again for that digest. A lock whose process is gone is taken over. Java
options given by the user that choose class sharing themselves turn all of
this off.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

_USER_CHOICES = ("-Xshare", "SharedArchiveFile", "ArchiveClassesAtExit", "DumpLoadedClassList", "SharedClassListFile")
_STALE_LOCK_SECONDS = 15 * 60


def cache_dir(environ=os.environ) -> Path:
    base = environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "deltalog"


@dataclass(frozen=True)
class ClassArchive:
    """What one start does about the archive: `java_options` for its JVM; `building` when
    this start holds the lock and records the class list that `build_after_exit` hands on."""

    archive: Path
    java_options: str
    building: bool

    @property
    def class_list(self) -> Path:
        return self.archive.with_suffix(".classlist")

    @property
    def lock(self) -> Path:
        return self.archive.with_suffix(".building")

    @property
    def failed(self) -> Path:
        return self.archive.with_suffix(".failed")

    def release(self) -> None:
        """Give up this start's claim on the build (its JVM did not start)."""
        if self.building:
            self.lock.unlink(missing_ok=True)
            self.class_list.unlink(missing_ok=True)

    def build_after_exit(self, jvm) -> bool:
        """Start the detached build for the JVM behind `jvm` (py4j's view of it, session
        still running): it waits for that JVM's exit, when its class list is complete.
        Returns whether a build was started."""
        if not self.building:
            return False
        system = jvm.java.lang.System
        java = os.path.join(system.getProperty("java.home"), "bin", "java")
        classpath_file = self.archive.with_suffix(".classpath")
        classpath_file.write_text(system.getProperty("java.class.path"))
        pid = str(jvm.java.lang.ProcessHandle.current().pid())
        log = self.archive.with_suffix(".log")
        command = [sys.executable, "-m", "runtime.spark.class_archive", "--archive", str(self.archive),
                   "--java", java, "--classpath-file", str(classpath_file), "--wait-for", pid]
        with open(log, "wb") as out:
            builder = subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT,
                                       start_new_session=True, cwd=str(Path(__file__).resolve().parents[2]))
        self.lock.write_text(str(builder.pid))  # the lock is the builder's now
        if sys.stderr.isatty():
            print(f"deltalog: building Spark's class archive in the background ({self.archive}; first Spark run only,"
                  " later starts take seconds less)", file=sys.stderr)
        return True


def prepare(java: str, spark_home: str, conf: dict[str, str], directory: Path | None = None) -> ClassArchive | None:
    """What a JVM about to start with `java` and Spark at `spark_home` under `conf` does about
    the archive: map it, or record its classes for it; None when there is nothing to do
    (another start is building it, a build failed, no cache directory, or the user's own
    Java options choose class sharing)."""
    user_options = conf.get("spark.driver.extraJavaOptions", "")
    if any(choice in user_options for choice in _USER_CHOICES):
        return None
    archive = archive_path(java, spark_home, conf, directory)
    if archive.exists():
        return ClassArchive(archive, f"-XX:SharedArchiveFile={archive}", building=False)
    try:
        archive.parent.mkdir(parents=True, exist_ok=True)
        if archive.with_suffix(".failed").exists() or not _take_lock(archive.with_suffix(".building")):
            return None
    except OSError:  # no writable cache directory: no archive
        return None
    class_list = archive.with_suffix(".classlist")
    class_list.unlink(missing_ok=True)
    return ClassArchive(archive, f"-XX:DumpLoadedClassList={class_list}", building=True)


def archive_path(java: str, spark_home: str, conf: dict[str, str], directory: Path | None = None) -> Path:
    """Where the archive for this java, Spark and classpath confs lives (or would)."""
    return (directory or cache_dir()) / f"spark-{_digest(java, spark_home, conf)}.jsa"


def _digest(java: str, spark_home: str, conf: dict[str, str]) -> str:
    """What the JVM will check the archive against, known before it starts: the java binary,
    Spark's jars and the confs that add to the classpath."""
    parts = []
    real = os.path.realpath(java)
    stat = os.stat(real)
    parts.append(f"{real} {stat.st_size} {stat.st_mtime_ns}")
    jars = os.path.join(spark_home, "jars")
    for name in sorted(os.listdir(jars)) if os.path.isdir(jars) else ():
        parts.append(f"{name} {os.path.getsize(os.path.join(jars, name))}")
    for key in ("spark.driver.extraClassPath", "spark.jars", "spark.jars.packages"):
        parts.append(f"{key}={conf.get(key, '')}")
    return hashlib.sha256("\n".join(parts).encode()).hexdigest()[:16]


def _take_lock(lock: Path) -> bool:
    """Create `lock` holding this process's id; a lock whose process is gone, or older than
    `_STALE_LOCK_SECONDS`, is taken over."""
    for _ in range(2):
        try:
            fd = os.open(lock, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
        except FileExistsError:
            if not _stale(lock):
                return False
            lock.unlink(missing_ok=True)
            continue
        with os.fdopen(fd, "w") as f:
            f.write(str(os.getpid()))
        return True
    return False


def _stale(lock: Path) -> bool:
    try:
        pid = int(lock.read_text() or "0")
        age = time.time() - lock.stat().st_mtime
    except (OSError, ValueError):
        return True
    return age > _STALE_LOCK_SECONDS or not _alive(pid)


def _alive(pid: int) -> bool:
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def build(archive: Path, java: str, classpath: str, class_list: Path) -> int:
    """Dump the archive of the classes in `class_list` (java -Xshare:dump) beside `archive`,
    rename it into place, and delete other digests' archives. Returns java's exit code."""
    partial = archive.with_name(f"{archive.name}.{os.getpid()}.partial")
    command = [java, "-Xshare:dump", f"-XX:SharedClassListFile={class_list}", f"-XX:SharedArchiveFile={partial}",
               "-cp", classpath]
    done = subprocess.run(command, stdin=subprocess.DEVNULL)
    if done.returncode != 0 or not partial.exists():
        partial.unlink(missing_ok=True)
        return done.returncode or 1
    os.replace(partial, archive)
    for other in archive.parent.glob("spark-*.jsa"):  # older Spark or Java: 180 MB each
        if other != archive and not other.with_suffix(".building").exists():
            other.unlink(missing_ok=True)
            other.with_suffix(".log").unlink(missing_ok=True)
    return 0


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description="Build Spark's class archive once the JVM that listed the classes has exited.")
    p.add_argument("--archive", type=Path, required=True)
    p.add_argument("--java", required=True)
    p.add_argument("--classpath-file", type=Path, required=True)
    p.add_argument("--wait-for", type=int, default=0, help="the JVM's process id")
    args = p.parse_args(argv)
    choice = ClassArchive(args.archive, "", building=True)
    try:
        os.nice(10)
        while _alive(args.wait_for):
            time.sleep(0.2)
        code = build(args.archive, args.java, args.classpath_file.read_text(), choice.class_list)
        if code != 0:
            choice.failed.write_text(f"java -Xshare:dump exited with {code}; its output: {args.archive.with_suffix('.log')}\n")
        return code
    finally:
        for leftover in (choice.class_list, args.classpath_file, choice.lock):
            leftover.unlink(missing_ok=True)


if __name__ == "__main__":
    raise SystemExit(main())
