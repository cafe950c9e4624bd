"""Issue 28: writes that are atomic under threads and processes, strict JSON, and a lock that follows no link."""

import json
import multiprocessing as mp
import threading

import pytest

from grpo_lab.io import DirLock, read_json, write_json_atomic


def _writer(path, k, n=150):
    for i in range(n):
        write_json_atomic(path, {"writer": k, "i": i, "pad": "x" * (2000 + 37 * k)})


def _read_all(path, stop, bad):
    while not stop.is_set():
        try:
            text = path.read_text()
        except FileNotFoundError:
            continue
        try:
            json.loads(text)
        except json.JSONDecodeError:
            bad.append(text[:80])


def test_concurrent_writers_never_expose_a_partial_file(tmp_path):
    path = tmp_path / "r.json"
    write_json_atomic(path, {"start": True})
    stop, bad, errors = threading.Event(), [], []
    reader = threading.Thread(target=_read_all, args=(path, stop, bad))
    reader.start()

    def thread_writer(k):
        try:
            _writer(path, k)
        except Exception as e:  # noqa: BLE001 - a FileNotFoundError here was the bug
            errors.append(repr(e))

    threads = [threading.Thread(target=thread_writer, args=(k,)) for k in range(4)]
    procs = [mp.get_context("fork").Process(target=_writer, args=(path, 10 + k)) for k in range(2)]
    for t in threads + procs:
        t.start()
    for t in threads:
        t.join()
    for p in procs:
        p.join()
    stop.set()
    reader.join()
    assert not errors and all(p.exitcode == 0 for p in procs)
    assert not bad, f"a reader saw {len(bad)} partial files, e.g. {bad[0]!r}"
    assert read_json(path)["i"] == 149  # some writer's last write, whole
    assert not list(tmp_path.glob(".*.tmp"))  # no temporary file left behind


def test_json_is_strict_non_finite_numbers_are_null(tmp_path):
    import numpy as np

    path = write_json_atomic(tmp_path / "x.json", {"a": float("nan"), "b": [float("inf"), 1.5, np.float32(0.25)],
                                                   "c": np.float64("-inf"), "d": {"e": np.int64(3)}})
    text = path.read_text()
    assert "NaN" not in text and "Infinity" not in text
    assert json.loads(text) == {"a": None, "b": [None, 1.5, 0.25], "c": None, "d": {"e": 3}}


def test_a_symlinked_lock_is_refused_and_its_target_untouched(tmp_path):
    target = tmp_path / "precious.txt"
    target.write_text("keep me")
    run = tmp_path / "run"
    run.mkdir()
    (run / ".lock").symlink_to(target)
    with pytest.raises(RuntimeError, match="symbolic link"):
        with DirLock(run):
            pass
    assert target.read_text() == "keep me"
    (run / ".lock").unlink()
    (run / ".lock").mkdir()  # not a regular file either
    with pytest.raises(RuntimeError, match="not a regular file"):
        with DirLock(run):
            pass


def test_an_atomic_write_gives_the_mode_a_plain_write_would(tmp_path):
    """Issue 38: every results, config and report file was left at mkstemp's 0600 whatever the umask."""
    import os
    import stat

    from grpo_lab.io import write_json_atomic, write_text_atomic

    old = os.umask(0o022)
    try:
        new = write_json_atomic(tmp_path / "results.json", {"a": 1})
        assert stat.S_IMODE(new.stat().st_mode) == 0o644  # readable by the lab, as open(path, "w") makes it
        os.umask(0o077)
        assert stat.S_IMODE(write_text_atomic(tmp_path / "private.md", "x").stat().st_mode) == 0o600
        os.chmod(new, 0o664)  # a file made group-writable by its owner keeps that mode when replaced
        write_json_atomic(new, {"a": 2})
        assert stat.S_IMODE(new.stat().st_mode) == 0o664 and new.read_text().strip().endswith("}")
    finally:
        os.umask(old)


def test_a_caller_racing_the_owner_is_told_its_pid_not_unknown(tmp_path):
    """Issue 38: the owner takes the flock, then writes its pid; a caller arriving in between read an empty file
    and was told "process (unknown)" (1 of 299 racing callers). It now waits a moment for the pid."""
    import fcntl
    import os
    import threading
    import time

    import pytest

    from grpo_lab.io import DirLock

    lock = tmp_path / ".lock"
    fd = os.open(lock, os.O_CREAT | os.O_RDWR, 0o644)
    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)  # the owner holds the lock and has not written its pid yet

    def write_pid_late():
        time.sleep(0.1)
        os.write(fd, b"424242")

    t = threading.Thread(target=write_pid_late)
    t.start()
    try:
        with pytest.raises(RuntimeError, match="in use by process 424242"):
            with DirLock(tmp_path):
                pass
    finally:
        t.join()
        os.close(fd)
