"""Run one function over many inputs in worker processes, with the calling process working too."""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Future
from typing import Any, TypeVar

T = TypeVar("T")
R = TypeVar("R")

#: Threads each worker's polars may use: the processes are the parallelism (2 workers x all cores
#: of polars threads oversubscribe the machine and were slower than one process under load).
WORKER_ENV = {"POLARS_MAX_THREADS": "1"}


def fan_out(
    fn: Callable[[T, Any], R],
    items: Sequence[T],
    arg: Any,
    workers: int,
    done: Callable[[int, R], R | None] | None = None,
) -> list[R]:
    """``[fn(item, arg) for item in items]`` across ``workers`` processes in all, this one included.

    The caller already has every module loaded, so it starts at once while ``workers - 1`` spawned
    processes import theirs (~1 s); items are handed out one at a time to whoever is free, and the
    results keep the order of ``items``. ``fn`` must be picklable (a module-level function).
    ``done(index, result)`` is called as each result arrives (from more than one thread); what it
    returns, when not None, is kept instead of the result (a caller that writes a part out drops it).
    """
    if workers <= 1 or len(items) <= 1:
        out = []
        for i, item in enumerate(items):
            out.append(_kept(done, i, fn(item, arg)))
        return out
    import multiprocessing  # only here: a single input never pays for the process pool's imports
    from concurrent.futures import ProcessPoolExecutor

    results: list[Any] = [None] * len(items)
    queue = _Queue(items)
    errors: list[BaseException] = []
    state = threading.Condition()
    outstanding = [0]  # items handed to the pool whose result is not stored yet
    # spawn, not fork: forking a process that has started polars' thread pool can deadlock
    pool = ProcessPoolExecutor(
        max_workers=workers - 1, mp_context=multiprocessing.get_context("spawn"), initializer=_worker_setup
    )

    def feed() -> None:
        with state:
            nxt = queue.take()
            if nxt is None:
                state.notify_all()
                return
            outstanding[0] += 1
        fut = pool.submit(fn, nxt[1], arg)
        fut.add_done_callback(_callback(finish, nxt[0]))

    def finish(index: int, fut: Future[Any]) -> None:
        try:
            results[index] = _kept(done, index, fut.result())
        except BaseException as err:  # re-raised in the caller below
            errors.append(err)
        with state:
            outstanding[0] -= 1
        feed()

    with pool:
        for _ in range(workers - 1):
            feed()
        while (mine := queue.take()) is not None:
            results[mine[0]] = _kept(done, mine[0], fn(mine[1], arg))
        with state:
            state.wait_for(lambda: outstanding[0] == 0)
    if errors:
        raise errors[0]
    return results


def _kept(done: Callable[[int, R], R | None] | None, index: int, result: R) -> R:
    """``result``, or what ``done`` returns for it instead."""
    if done is None:
        return result
    other = done(index, result)
    return result if other is None else other


def _callback(finish: Callable[[int, Future[Any]], None], index: int) -> Callable[[Future[Any]], None]:
    return lambda fut: finish(index, fut)


class _Queue:
    """Hands out ``(index, item)`` pairs once each, from several threads."""

    def __init__(self, items: Sequence[Any]) -> None:
        self._it: Iterator[tuple[int, Any]] = iter(enumerate(items))
        self._lock = threading.Lock()

    def take(self) -> tuple[int, Any] | None:
        with self._lock:
            return next(self._it, None)


def _worker_setup() -> None:
    """Runs first in each worker, before anything there has used polars' thread pool."""
    os.environ.update(WORKER_ENV)
