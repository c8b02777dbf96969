"""Google C++ logging's record prefixes (absl, TensorFlow's tsl) are stripped like a level prefix, and
such a record glued after a row's values ends the row: no column is made of a file name."""

from __future__ import annotations

from pathlib import Path

import pytest

from logdoctor import pipeline

UNIX = 1765712700


#: The writers' own formats, kept as they are (printf-style).
ABSL_NO_TZ = "%c0000 00:00:%02d.%06d %7d %s:%d] %s"
ABSL_TZ = "%c%02d%02d %02d:%02d:%02d.%06d %7d %s:%d] %s"
TSL = "%s.%06d: %c%s %s:%d] %s"
TSL_TID = " %7u"


def _absl_no_tz(sev: str, second: int, msg: str) -> str:
    """abseil-cpp log_format.cc FormatBoundedFields before a time zone is loaded:
    ``"%c0000 00:00:%02d.%06d %7d "``, then ``file:line] ``."""
    return ABSL_NO_TZ % (sev, UNIX + second, 762815, 63616, "gpu_device.cc", 2020, msg)


def _absl_tz(sev: str, second: int, msg: str) -> str:
    """The same with a time zone: month, day, time, the thread id padded to 7, then a blank."""
    return ABSL_TZ % (sev, 12, 14, 13, 45, second % 60, 362248, 63616, "x.cc", 9, msg)


def _absl_raw(sev: str, second: int, msg: str) -> str:
    """A raw log (ABSL_RAW_LOG): the prefix then ``RAW: ``."""
    return _absl_no_tz(sev, second, "RAW: " + msg)


def _tsl(sev: str, second: int, msg: str) -> str:
    """tsl/platform/default/logging.cc: ``"%s.%06d: %c%s %s:%d] %s\\n"`` (no thread id)."""
    stamp = f"2025-12-14 13:45:{second % 60:02d}"
    return TSL % (stamp, 362248, sev, "", "external/local_xla/xla/service/service.cc", 163, msg)


def _tsl_tid(sev: str, second: int, msg: str) -> str:
    """The same with ``log_thread_id``: ``" %7u"`` after the severity letter."""
    stamp = f"2025-12-14 13:45:{second % 60:02d}"
    return TSL % (stamp, 362248, sev, TSL_TID % 63616, "tensorflow/core/util.cc", 87, msg)


@pytest.mark.parametrize("prefix", [_absl_no_tz, _absl_tz, _absl_raw, _tsl, _tsl_tid])
def test_cpp_record_prefixes_are_stripped(tmp_path: Path, prefix) -> None:  # type: ignore[no-untyped-def]
    lines = [prefix("I", s, f"step {s} loss={3 - s / 1000:.4f} lr=0.001") for s in range(100, 700, 100)]
    lines.insert(3, prefix("W", 7, "All configs were filtered out: 4 of them"))
    path = tmp_path / "train.log"
    path.write_text("\n".join(lines) + "\n")
    run = pipeline.load(str(path))
    assert run.table["step"].to_list() == [100, 200, 300, 400, 500, 600]
    assert set(run.table.columns) <= {"step", "loss", "lr", "line_no"}


_BAR = "\x1b[1m{n}/{t}\x1b[0m \x1b[32m━━━━━━━━━━━━━━━━━━━━\x1b[0m\x1b[37m\x1b[0m \x1b[1m0s\x1b[0m 76ms/step - "


def _keras_with_glued_records(epochs: int, steps: int) -> str:
    """Keras 3 ``fit(verbose=1)`` rows (keras/src/utils/progbar.py) beside TensorFlow's C++ records;
    in each epoch XLA's compiler writes one record into the bar's line before its newline (the
    record's date-time right after the last value, as a real log has it)."""
    out = [_absl_no_tz("I", 0, "Created device /job:localhost/replica:0/task:0/device:GPU:0 with 4863 MB memory")]
    for e in range(1, epochs + 1):
        out.append(f"Epoch {e}/{epochs}")
        glued = _tsl("I", e, "ptxas warning : Registers are spilled to local memory, 16 bytes spill stores")
        for n in range(1, steps + 1):
            row = _BAR.format(n=n, t=steps) + f"accuracy: 0.9206 - loss: {1 / (e + n / steps):.4f} - recall: 0.9136"
            out.append(row + (glued if n == steps - 1 else ""))
    return "\n".join(out) + "\n"


def test_a_cpp_record_glued_after_a_row_ends_the_row(tmp_path: Path) -> None:
    path = tmp_path / "fit.log"
    path.write_text(_keras_with_glued_records(epochs=4, steps=6))
    run = pipeline.load(str(path))
    assert set(run.table.columns) <= {"step", "loss", "acc", "recall", "line_no", "epoch", "batches", "batches_total"}
    assert run.n_steps == 4 * 6
    # the value the record touches goes with it (it may be cut short); every other row keeps its own
    assert run.table["recall"].null_count() == 4
    assert run.table["recall"].drop_nulls().unique().to_list() == [0.9136]


def test_a_record_that_cut_a_value_short_leaves_no_value_read_from_it(tmp_path: Path) -> None:
    # a plain print loop whose loss value TensorFlow's record cut in two (``2.04`` + record, ``583``
    # on the line after it): neither ``2.042017`` nor ``12017`` is read as the loss
    lines = []
    for s in range(100, 2100, 100):
        if s == 1000:
            lines += [f"Global Iter: {s} training loss: 1" + _tsl("I", 3, "Creating TensorFlow device (/gpu:0)"), "983"]
        else:
            lines.append(f"Global Iter: {s} training loss: {1.9 + (s % 300) / 1000:.5f}")
    path = tmp_path / "train.log"
    path.write_text("\n".join(lines) + "\n")
    run = pipeline.load(str(path))
    assert 1000 not in run.table["step"].to_list()
    assert run.table["loss"].max() < 2.2
    assert set(run.table.columns) <= {"step", "loss", "line_no"}


def test_a_date_time_that_starts_no_cpp_record_cuts_nothing(tmp_path: Path) -> None:
    # a date-time inside a message that is no C++ record (no severity letter, no file:line]) is left
    # to lines.clean's date-time rule: the values after it are the row's
    lines = [f"2025-12-14 13:45:{s % 60:02d}.362248: step {s} loss={3 - s / 1000:.4f} lr=0.001" for s in range(1, 7)]
    path = tmp_path / "train.log"
    path.write_text("\n".join(lines) + "\n")
    run = pipeline.load(str(path))
    assert run.table["step"].to_list() == [1, 2, 3, 4, 5, 6]
    assert "lr" in run.table.columns
