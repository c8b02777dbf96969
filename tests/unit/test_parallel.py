"""fan_out: the same results as a loop, in order, with the caller working and errors re-raised."""

from __future__ import annotations

import os
import time

import pytest

from logdoctor.parallel import fan_out


def square_and_pid(x: int, offset: int) -> tuple[int, int]:
    if x < 0:
        raise ValueError(f"negative: {x}")
    return x * x + offset, os.getpid()


def polars_threads(_: int, __: None) -> int:
    import polars as pl

    time.sleep(0.1)  # slow enough that the spawned worker starts and takes some items
    return pl.thread_pool_size()


def test_results_equal_a_loop_in_order_and_the_caller_works_too() -> None:
    items = list(range(40))
    got = fan_out(square_and_pid, items, 3, workers=2)
    assert [v for v, _ in got] == [x * x + 3 for x in items]
    pids = {pid for _, pid in got}
    assert os.getpid() in pids  # the calling process took items while the worker started


def test_one_worker_or_one_item_stays_in_process() -> None:
    assert fan_out(square_and_pid, [5], 0, workers=4) == [(25, os.getpid())]
    assert {pid for _, pid in fan_out(square_and_pid, [1, 2], 0, workers=1)} == {os.getpid()}


def test_an_error_in_a_worker_is_raised_in_the_caller() -> None:
    with pytest.raises(ValueError, match="negative"):
        fan_out(square_and_pid, [1, 2, 3, -4, 5, 6, 7, 8], 0, workers=2)


def test_workers_get_one_polars_thread_and_the_caller_keeps_its_environment() -> None:
    before = os.environ.get("POLARS_MAX_THREADS")
    values = fan_out(polars_threads, list(range(30)), None, workers=2)
    assert 1 in values  # the worker's polars runs one thread
    assert os.environ.get("POLARS_MAX_THREADS") == before
