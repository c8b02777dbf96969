"""Lines gathered before a parse: due after the gap, at once for a possible non-finite value."""

from __future__ import annotations

import math

import pytest

from logdoctor.tail.pending import Pending


def test_lines_wait_for_the_gap_then_come_out_whole_and_in_order() -> None:
    p = Pending(gap=2.0)
    assert not p.due(0.0) and p.wait(0.0) == math.inf and p.take() == b""
    p.add(b"step 1 loss=3.1\n", 10.0)
    p.add(b"", 10.5)
    p.add(b"step 2 loss=3.0\n", 11.0)
    assert not p.due(11.9) and p.wait(11.0) == pytest.approx(1.0)
    assert p.due(12.0)
    assert p.take() == b"step 1 loss=3.1\nstep 2 loss=3.0\n"
    assert len(p) == 0 and not p.due(100.0)
    p.add(b"step 3 loss=2.9\n", 100.0)  # the gap counts from the first line kept since the take
    assert not p.due(101.0) and p.due(102.0)


@pytest.mark.parametrize(
    "line",
    [
        b"step 5 loss=nan\n",
        b"step 5 loss=NaN acc=0.5\n",
        b'{"step": 5, "loss": Infinity}\n',
        b"step 5 loss=-inf\n",
        b"5,inf,0.1\n",
        b"step 5 loss=1e400\n",
        b"step 5 loss=2.5E+308\n",
    ],
)
def test_a_possible_non_finite_value_is_due_at_once(line: bytes) -> None:
    p = Pending(gap=60.0)
    p.add(b"step 4 loss=3.0\n", 0.0)
    assert not p.due(0.0)
    p.add(line, 0.1)
    assert p.due(0.1)
    p.take()
    p.add(b"step 6 loss=3.0\n", 0.2)
    assert not p.due(0.2)  # the take cleared it


@pytest.mark.parametrize(
    "line", [b"INFO step 5 loss=3.0\n", b"[info] step 5 confidence=0.9 loss=2.9\n", b"step 5 lr=1e-400x\n"]
)
def test_words_around_nan_or_inf_are_not_urgent(line: bytes) -> None:
    p = Pending(gap=60.0)
    p.add(line, 0.0)
    assert not p.due(1.0)


def test_many_bytes_are_due_before_the_gap() -> None:
    p = Pending(gap=60.0, max_bytes=100)
    p.add(b"x" * 99 + b"\n", 0.0)
    assert p.due(0.0)
