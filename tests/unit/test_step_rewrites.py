"""One step written twice by consecutive records is one record (the later write wins): no resume,
no interleaved writer; real resumes, restart markers and interleaved writers are left as they were."""

from __future__ import annotations

from pathlib import Path

import polars as pl

from logdoctor import pipeline
from logdoctor.ingest.parsers.base import ParseResult
from logdoctor.structure.build import build_run
from tests.conftest import FIXTURES

_BS = "\b" * 72  # Keras 3 progbar backspaces over its previous drawing before "\r"
_BAR = "\x1b[1m{n}/{t}\x1b[0m \x1b[32m━━━━━━━━━━━━━━━━━━━━\x1b[0m\x1b[37m\x1b[0m \x1b[1m{eta}s\x1b[0m 91ms/step - "


def _keras_fit_log(epochs: int, steps: int) -> str:
    """Keras 3 ``fit(verbose=1)`` with ``ModelCheckpoint(verbose=1)`` in keras/src/utils/progbar.py's
    bytes (as a real run with slow steps writes them, tests' own fixture below): every position
    drawn, the last one drawn before the callback's lines and again after them with the epoch's
    final values (which differ, as the TensorFlow backend's do: the bar's running means lag)."""
    out = []
    for e in range(1, epochs + 1):
        out.append(f"Epoch {e}/{epochs}\n\n")
        for n in range(1, steps + 1):
            loss = 1.0 / (e + n / steps)
            out.append(_BAR.format(n=n, t=steps, eta=0) + f"accuracy: 0.5000 - loss: {loss:.4f}")
            out.append(_BS + "\r" if n < steps else "\n")
        out.append(f"Epoch {e}: val_accuracy improved from None to 0.53125, saving model to /tmp/m.keras\n\n")
        out.append(f"Epoch {e}: finished saving model to /tmp/m.keras\n{_BS}\r")
        final = 0.9 / (e + 1)
        out.append(
            _BAR.format(n=steps, t=steps, eta=1)
            + f"accuracy: 0.6000 - loss: {final:.4f} - val_accuracy: 0.5312 - val_loss: {final + 0.1:.4f}\n"
        )
    return "".join(out)


def test_keras_bar_end_written_twice_around_a_callback_is_one_step(tmp_path: Path) -> None:
    log = tmp_path / "fit.log"
    log.write_bytes(_keras_fit_log(epochs=12, steps=8).encode())
    run = pipeline.load(str(log))
    report = pipeline.analyze(run)
    codes = {f.code for f in report.findings}
    assert run.meta.resumes == 0
    assert run.meta.nonmonotonic_steps == 0
    assert {"LD003", "LD005"}.isdisjoint(codes)
    assert run.n_steps == 12 * 8
    assert run.meta.overwritten_steps == 12  # the bar's first drawing of each epoch's last step
    end = run.table.filter(pl.col("step") == 8)
    assert end["loss"].item() == 0.45  # the later write's value: the epoch's final loss


def _result(steps: list[int], loss: list[float] | None = None, **cols: list) -> ParseResult:
    n = len(steps)
    data = {"step": steps, "loss": loss if loss is not None else [1.0 + 0.01 * i for i in range(n)]}
    data["line_no"] = list(range(1, n + 1))
    data.update(cols)
    return ParseResult(table=pl.DataFrame(data), lines_read=n)


def test_the_later_write_wins_and_the_earlier_fills_what_it_lacks() -> None:
    steps = [1, 2, 3, 3, 4, 5, 6]
    loss = [1.0, 0.9, 0.8, 0.7, 0.6, 0.5, 0.4]
    acc = [0.1, 0.2, 0.3, None, 0.5, 0.6, 0.7]
    run = build_run(_result(steps, loss, acc=acc), "x", "text")
    assert (run.meta.resumes, run.meta.nonmonotonic_steps, run.meta.overwritten_steps) == (0, 0, 1)
    row = run.table.filter(pl.col("step") == 3)
    assert (row["loss"].item(), row["acc"].item(), row["line_no"].item()) == (0.7, 0.3, 4)


def test_a_restart_marker_before_the_repeat_keeps_it_a_resume() -> None:
    steps = [*range(1, 11), 10, *range(11, 21)]
    restart = [0.0] * 10 + [1.0] + [0.0] * 10
    run = build_run(_result(steps, restart=restart), "x", "text")
    assert run.meta.resumes == 1
    assert run.meta.resume_steps == (10,)


def test_a_resume_over_a_stretch_is_still_a_resume() -> None:
    steps = [*range(1, 21), *range(15, 40)]
    run = build_run(_result(steps), "x", "text")
    assert run.meta.resume_steps == (15,)


def test_two_writers_alternating_stay_interleaved() -> None:
    steps = [s for s in range(1, 41) for _ in (0, 1)]
    run = build_run(_result(steps), "x", "text")
    assert run.meta.resumes == 0
    assert run.meta.nonmonotonic_steps == 40


def test_interleaved_bars_merge_only_the_bar_end() -> None:
    # two writers drawing one 5-batch bar each, alternately: every position repeats; only the
    # repeat at the bar's last position (5/5) is one writer's end drawn twice, and even that is
    # merged alone: the other repeats stay the interleaving they are
    batches = [b for b in range(1, 6) for _ in (0, 1)] * 4
    steps = [e * 5 + b for e in range(4) for b in range(1, 6) for _ in (0, 1)]
    run = build_run(_result(steps, batches=batches, batches_total=[5] * len(steps)), "x", "text")
    assert run.meta.resumes == 0
    assert run.meta.nonmonotonic_steps == 16
    assert run.meta.overwritten_steps == 20


def test_real_keras_checkpoint_run_writes_each_epoch_end_twice_and_reads_no_resume() -> None:
    # fixtures/writers/keras/checkpoint_verbose1: Keras 3.15.1 (torch backend) with ModelCheckpoint(verbose=1)
    # and 60 ms batches; this backend's two drawings carry the same training values (an exact
    # duplicate, rule 1), the TensorFlow backend's differ (the test above): either way one step
    run = pipeline.load(str(FIXTURES / "writers" / "keras" / "checkpoint_verbose1" / "train.log"))
    assert (run.meta.resumes, run.meta.nonmonotonic_steps) == (0, 0)
    assert run.meta.duplicate_steps + run.meta.overwritten_steps == 8  # one per epoch
    assert run.n_steps == 8 * 16
