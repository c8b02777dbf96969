"""Progress bars captured without a terminal (``python train.py > train.log``): Keras 3's Progbar
rewinds with backspaces and draws ``━``; a stop message printed onto the bar's unfinished line;
a per-epoch log of a run that ended after two epochs. Each with what must not change."""

from __future__ import annotations

from pathlib import Path

import pytest

from logdoctor import pipeline
from logdoctor.errors import ParseError
from logdoctor.ingest.parsers.lines import read_lines, rewind
from logdoctor.ingest.parsers.text import is_binary
from logdoctor.model import Report

BOLD, OFF = "\x1b[1m", "\x1b[0m"


def _bar(count: int, total: int, metrics: str, width: int = 0) -> str:
    """keras/src/utils/progbar.py (verbose=1, no terminal): ``\\b`` x the last width, ``\\r``, the
    bold counter, the bar, the time, then `` - key: value`` pairs."""
    done = "━" * (20 * count // total)
    text = f"{BOLD}{count}/{total}{OFF} \x1b[32m{done}{OFF}\x1b[37m{'━' * (20 - len(done))}{OFF} {BOLD}0s{OFF} 3ms/step"
    return "\b" * width + "\r" + text + f" - {metrics}"


def _epoch(e: int, epochs: int, losses: list[float], stop: str = "", draws: tuple[int, ...] = (1,)) -> str:
    """One epoch as Keras 3 writes it without a terminal: the bar drawn at the ``draws`` counts
    (its 0.05 s interval allows few), ``stop`` printed onto the bar's line, then the last count."""
    total = len(losses)
    out = f"Epoch {e}/{epochs}\n"
    for i, loss in enumerate(losses[:-1], start=1):
        if i in draws:  # a drawing shorter than the one before is padded with blanks
            pad = " " * (i % 3)
            out += _bar(i, total, f"loss: {loss:.4f}{pad}", width=80 if i > 1 else 0)
    out += stop
    last = losses[-1]
    out += _bar(total, total, f"loss: {last:.4f}", width=80) + "\n" if not stop else ""
    if not stop:  # the epoch's end redraws the last count with its validation values
        out += _bar(total, total, f"loss: {last:.4f} - val_loss: {last + 0.1:.4f}", width=80) + "\n"
    return out


def _analyze(tmp_path: Path, text: str) -> Report:
    path = tmp_path / "train.log"
    path.write_text(text)
    return pipeline.analyze(pipeline.load(str(path)))


def test_backspaces_rewind_a_line_and_are_no_binary_bytes() -> None:
    assert rewind(b"a: 1\b\b\b\b\ra: 2\n") == b"a: 1\r\ra: 2\n"
    assert read_lines(b"x 1\b\b\b\rx 2\ny 3\n")["line"].to_list() == ["x 1", "x 2", "y 3"]
    assert read_lines(b"x 1\b\b\b\rx 2\ny 3\n")["line_no"].to_list() == [1, 1, 2]
    assert not is_binary(("\b" * 200 + "loss: 1\n").encode())
    assert is_binary(bytes(range(1, 32)) * 20)  # other control bytes still say binary
    assert is_binary(b"loss: 1\x00\n")


def test_keras3_bar_without_a_terminal_counts_batches_within_its_epochs(tmp_path: Path) -> None:
    text = "".join(_epoch(e, 4, [1.0 / (e + i / 10) for i in range(1, 17)], draws=(1, 8, 13)) for e in range(1, 5))
    report = _analyze(tmp_path, text)
    st = report.meta.structure
    assert st is not None and (st.planned, st.last_step, st.ending) == (64, 64, "finished")
    assert st.restarts == ()  # the epoch's last count drawn twice is one record, not a resume
    assert not [f for f in report.findings if f.code in ("LD003", "LD005")]


def test_a_stop_printed_onto_the_bars_line_ends_the_run(tmp_path: Path) -> None:
    """keras/src/callbacks/terminate_on_nan.py prints after the bar's update, on its line; the
    bar's final redraw follows (Keras 3's last write of the epoch)."""
    stop = "Batch 7: Invalid loss, terminating training\n"
    losses = [10.0**i for i in range(1, 9)]
    text = _epoch(1, 10, [*losses[:7], 1e30]) + _epoch(2, 10, [1e31] * 7 + [float("inf")], stop)
    text += _bar(8, 8, "loss: inf", width=80) + "\n"
    st = _analyze(tmp_path, text).meta.structure
    assert st is not None and st.ending == "crashed" and st.failure is not None
    assert st.failure.kind == "nan_guard"


def test_a_stop_on_a_rows_line_with_training_after_it_is_no_ending(tmp_path: Path) -> None:
    """The same message on a row's line, then epochs more of training: caught, not the end."""
    stop = "Batch 7: Invalid loss, terminating training\n"
    text = _epoch(1, 4, [1.0] * 8, stop) + _bar(8, 8, "loss: 1.0000", width=80) + "\n"
    text += "".join(_epoch(e, 4, [1.0 / e] * 8) for e in range(2, 5))
    st = _analyze(tmp_path, text).meta.structure
    assert st is not None and st.ending == "finished"


def _sb_lines(epochs: int, start: int = 1) -> str:
    """speechbrain/utils/train_logger.py FileTrainLogger.log_stats."""
    return "".join(
        f"epoch: {e}, lr: 6.00 - train loss: {5.0 / e:.2f} - valid loss: {2.5 / e:.2f}, valid error: 6.46e-01\n"
        for e in range(start, start + epochs)
    )


def test_two_epoch_records_are_a_run(tmp_path: Path) -> None:
    report = _analyze(tmp_path, _sb_lines(2))
    st = report.meta.structure
    assert st is not None and (st.first_step, st.last_step) == (1, 2)


def test_two_loss_lines_without_an_epoch_counter_are_still_refused(tmp_path: Path) -> None:
    for text in ("lr: 6.00 - train loss: 5.0\nlr: 6.00 - train loss: 2.5\n", _sb_lines(2, start=7)):
        path = tmp_path / "train_log.txt"
        path.write_text(text)
        with pytest.raises(ParseError, match="no training steps"):
            pipeline.load(str(path))
