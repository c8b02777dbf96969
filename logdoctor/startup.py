"""The collector during a command's start-up: off while the modules load, their objects frozen after.

Start-up allocates ~1M objects that all live to the process's end (polars, numpy, rich, typer and
ours); each full collection while they load walks all of them again (~30 ms of a ~0.3 s small-log
run). ``begin`` turns the collector off for a whole process (the console script, ``python -m``);
``done``, called once the command has what it needs, moves everything alive into the permanent
generation (``gc.freeze``) and turns collection back on, so the analysis of a large log collects its
own cycles as before without re-walking the modules. In a process that did not ``begin`` (a test or
a library calling ``cli.main(argv)``) both do nothing.
"""

from __future__ import annotations

import gc

_began = False


def begin() -> None:
    """Collector off until ``done`` (a whole-process run only)."""
    global _began
    if not _began and gc.isenabled():
        _began = True
        gc.disable()


def done() -> None:
    """Freeze what start-up made and collect again; idempotent, a no-op without ``begin``."""
    global _began
    if _began:
        _began = False
        gc.freeze()
        gc.enable()
