"""logdoctor.startup: the collector is off only between begin and done, and only after begin."""

from __future__ import annotations

import gc

from logdoctor import startup


def test_done_without_begin_changes_nothing() -> None:
    assert gc.isenabled()
    frozen = gc.get_freeze_count()
    startup.done()
    assert gc.isenabled() and gc.get_freeze_count() == frozen


def test_begin_turns_collection_off_until_done() -> None:
    assert gc.isenabled()
    try:
        startup.begin()
        assert not gc.isenabled()
        kept = [object()]
        startup.done()
        assert gc.isenabled() and gc.get_freeze_count() > 0
        startup.done()  # idempotent
        assert gc.isenabled()
        del kept
    finally:
        gc.unfreeze()
        gc.enable()
