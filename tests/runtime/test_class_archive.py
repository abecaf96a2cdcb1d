"""Spark's class archive: which Java options a start gets, and the detached build that makes one.

The build is run for real with this machine's java over a small class list (the
JDK's own start-up classes, a 5 MB archive in a fraction of a second), and the
JVM is asked to map the result; Spark itself is not started here.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from types import SimpleNamespace

import pytest

from runtime.spark import class_archive
from runtime.spark.session import java_executable

JAVA = java_executable()  # Spark needs it; the tests do too


@pytest.fixture
def spark_home(tmp_path):
    home = tmp_path / "spark"
    (home / "jars").mkdir(parents=True)
    (home / "jars" / "spark-core.jar").write_bytes(b"x" * 10)
    return home


def prepare(spark_home, cache, conf=None):
    return class_archive.prepare(JAVA, str(spark_home), conf or {}, cache)


def test_a_first_start_records_its_classes_and_holds_the_lock(spark_home, tmp_path):
    choice = prepare(spark_home, tmp_path / "cache")
    assert choice.building
    assert choice.java_options == f"-XX:DumpLoadedClassList={choice.class_list}"
    assert choice.lock.read_text() == str(os.getpid())
    assert not choice.archive.exists()


def test_a_start_while_another_builds_neither_records_nor_waits(spark_home, tmp_path):
    first = prepare(spark_home, tmp_path / "cache")
    second = prepare(spark_home, tmp_path / "cache")
    assert first.building and second is None


def test_the_lock_of_a_process_that_is_gone_is_taken_over(spark_home, tmp_path):
    first = prepare(spark_home, tmp_path / "cache")
    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait()
    first.lock.write_text(str(gone.pid))
    again = prepare(spark_home, tmp_path / "cache")
    assert again.building
    assert again.lock.read_text() == str(os.getpid())


def test_an_archive_present_is_mapped(spark_home, tmp_path):
    first = prepare(spark_home, tmp_path / "cache")
    first.archive.write_bytes(b"archive")
    choice = prepare(spark_home, tmp_path / "cache")
    assert not choice.building
    assert choice.java_options == f"-XX:SharedArchiveFile={first.archive}"


def test_a_build_that_failed_is_not_tried_again(spark_home, tmp_path):
    first = prepare(spark_home, tmp_path / "cache")
    first.lock.unlink()
    first.failed.write_text("java -Xshare:dump exited with 1")
    choice = prepare(spark_home, tmp_path / "cache")
    assert choice is None


def test_the_archive_belongs_to_its_jars_and_classpath_confs(spark_home, tmp_path):
    def path(conf=None):
        return class_archive.archive_path(JAVA, str(spark_home), conf or {}, tmp_path / "cache")

    name = path().name
    assert prepare(spark_home, tmp_path / "cache").archive == path()
    assert path({"spark.jars": "extra.jar"}).name != name
    (spark_home / "jars" / "delta.jar").write_bytes(b"y")
    assert path().name != name
    assert path({"spark.sql.shuffle.partitions": "4"}) == path()


@pytest.mark.parametrize("options", ["-Xshare:off", "-XX:SharedArchiveFile=/opt/my.jsa", "-XX:ArchiveClassesAtExit=a.jsa"])
def test_java_options_that_choose_class_sharing_themselves_turn_it_off(spark_home, tmp_path, options):
    assert prepare(spark_home, tmp_path / "cache", {"spark.driver.extraJavaOptions": f"-Xmx2g {options}"}) is None
    assert not (tmp_path / "cache").exists()


def test_the_detached_build_waits_for_the_jvm_then_leaves_an_archive_the_jvm_maps(spark_home, tmp_path, capsys):
    cache = tmp_path / "cache"
    choice = prepare(spark_home, cache)
    older = cache / "spark-0000000000000000.jsa"
    older.write_bytes(b"an archive of other jars")
    # The "JVM" that recorded the class list: java itself listing its start-up classes, still
    # running for a moment after the session stopped, as Spark's JVM does.
    subprocess.run([JAVA, f"-XX:DumpLoadedClassList={choice.class_list}", "-version"], capture_output=True, check=True)
    running = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(1.5)"])
    lang = SimpleNamespace(System=SimpleNamespace(getProperty={"java.home": os.path.dirname(os.path.dirname(os.path.realpath(JAVA))),
                                                                "java.class.path": str(tmp_path)}.get),
                           ProcessHandle=SimpleNamespace(current=lambda: SimpleNamespace(pid=lambda: running.pid)))
    assert choice.build_after_exit(SimpleNamespace(java=SimpleNamespace(lang=lang)))
    assert capsys.readouterr().err == ""  # the one-line notice is for a terminal; this stderr is not one
    time.sleep(0.5)
    assert not choice.archive.exists(), "the build waits for the JVM's exit (its class list is complete then)"
    running.wait()
    deadline = time.monotonic() + 60
    while choice.lock.exists() and time.monotonic() < deadline:
        time.sleep(0.1)
    assert choice.archive.exists(), choice.archive.with_suffix(".log").read_text()
    assert not older.exists() and not choice.class_list.exists() and not choice.lock.exists()
    mapped = subprocess.run([JAVA, "-Xshare:on", f"-XX:SharedArchiveFile={choice.archive}", "-Xlog:class+load=info",
                             "-cp", str(tmp_path), "-version"], capture_output=True, text=True)
    assert mapped.returncode == 0, mapped.stderr
    assert "java.lang.Object source: shared objects file" in mapped.stdout
    assert prepare(spark_home, cache).java_options == f"-XX:SharedArchiveFile={choice.archive}"


def test_a_dump_that_fails_leaves_the_failed_file_and_no_lock(spark_home, tmp_path):
    choice = prepare(spark_home, tmp_path / "cache")
    choice.class_list.write_text("java/lang/Object id: 0\n")
    classpath = tmp_path / "cp.txt"
    classpath.write_text(str(tmp_path))
    false = shutil.which("false")
    code = class_archive.main(["--archive", str(choice.archive), "--java", false, "--classpath-file", str(classpath)])
    assert code != 0
    assert "exited with" in choice.failed.read_text()
    assert not choice.archive.exists() and not choice.lock.exists()
    assert prepare(spark_home, tmp_path / "cache") is None
