"""Watchers: inotify wakes on changes to the watched names only; polling always says "look"."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest

from logdoctor.tail.watch import InotifyWatcher, PollWatcher, make_watcher


def _inotify() -> InotifyWatcher:
    w = make_watcher(True)
    if not isinstance(w, InotifyWatcher):
        pytest.skip("inotify is not available here")
    return w


def _later(action: object, delay: float = 0.05) -> threading.Timer:
    t = threading.Timer(delay, action)  # type: ignore[arg-type]
    t.start()
    return t


def test_inotify_wakes_on_append_to_a_watched_file(tmp_path: Path) -> None:
    log = tmp_path / "train.log"
    log.write_text("")
    w = _inotify()
    w.watch({str(tmp_path): ("train.log",)})
    assert w.wait(0.01) is False
    _later(lambda: log.write_text("step 1 loss=1\n"))
    assert w.wait(5.0) is True
    w.close()


def test_inotify_ignores_other_files_in_the_directory(tmp_path: Path) -> None:
    w = _inotify()
    w.watch({str(tmp_path): ("rank*.log",)})
    (tmp_path / "checkpoint.bin").write_bytes(b"x")
    assert w.wait(0.05) is False
    (tmp_path / "rank3.log").write_text("step 1 loss=1\n")  # creation of a matching name
    assert w.wait(1.0) is True
    w.close()


def test_inotify_skips_missing_directories(tmp_path: Path) -> None:
    w = _inotify()
    w.watch({str(tmp_path / "not-yet"): ("a.log",), str(tmp_path): ("a.log",)})
    assert w.watched == (str(tmp_path),)
    w.close()


def test_poll_watcher_sleeps_and_says_look_again() -> None:
    w = PollWatcher()
    t0 = time.monotonic()
    assert w.wait(0.02) is True
    assert time.monotonic() - t0 >= 0.02
    assert isinstance(make_watcher(False), PollWatcher)
