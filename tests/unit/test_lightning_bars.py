"""Lightning's TQDMProgressBar in a file: steps derived from ``Epoch N: i/T`` count from the log's first epoch.

The bar prints no global step, so the step is ``(epoch - first) x T + i``. Lightning adds ``val_loss``
to the postfix from the end of the first epoch: the first epoch's drawings and the later ones are two
line shapes, and each shape counted from its own first epoch put epoch 1's steps on epoch 0's (a
healthy run read as counter resets). The console is generated (fixtures/lightning_console.py) with the
loss of every step known.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import polars as pl
import pytest

from fixtures.lightning_console import Console, console, format_num
from logdoctor import pipeline
from logdoctor.ingest.aliases import FieldMap
from logdoctor.ingest.chunks import ChunkParser
from logdoctor.ingest.parsers import pieces
from logdoctor.ingest.parsers.textplan import Plan
from logdoctor.ingest.parsers.textshape import first_epoch
from logdoctor.model import Severity
from tests.tail_replay import replay

EPOCHS, STEPS = 3, 40
#: what reads a run's steps as another writer's or a new start
MISREAD = {"LD002", "LD003", "LD005", "LD018"}


def _write(tmp: Path, c: Console, name: str = "train.log") -> Path:
    path = tmp / name
    path.write_text(c.text)
    return path


def _chunked_steps(data: bytes, cuts: str) -> list[int]:
    """Steps a chunk reader gives, fed one ``\\r``/``\\n`` segment (``cuts="r"``) or one physical line
    (``"n"``) at a time, as tail feeds a growing file."""
    parts = data.splitlines(keepends=True) if cuts == "r" else [x + b"\n" for x in data.split(b"\n")[:-1]]
    reader = ChunkParser("train.log", FieldMap())
    reader.sniff(data)
    steps: list[int] = []
    for part in parts:
        table, _ = reader.parse(part)
        steps += table["step"].to_list() if table.height else []
    return steps


def test_lightning_pads_its_numbers_as_the_fixture_writes_them() -> None:
    # Tqdm.format_num: 3 significant digits, padded to 5 characters (the NeMo run: 6.640, 15.40, nan.0)
    assert [format_num(x) for x in (6.64, 15.4, 98.6, float("nan"), 0.00152)] == [
        "6.640",
        "15.40",
        "98.60",
        "nan.0",
        "0.00152",
    ]


def test_every_epoch_of_a_lightning_console_counts_on_from_the_first(tmp_path: Path) -> None:
    c = console(EPOCHS, STEPS, seed=3)
    run = pipeline.load(str(_write(tmp_path, c)))
    assert run.table["step"].to_list() == list(range(1, EPOCHS * STEPS + 1))
    logged = np.array([float(format_num(x)) for x in c.losses])
    assert np.allclose(run.table["loss"].to_numpy(), logged)  # each count's last drawing, not the one before
    assert run.meta.resumes == 0 and run.meta.repeated_steps == 0 and not run.earlier
    # the bar reset at each epoch's end (``Epoch 0: 0/40`` with the last values) is no step of its own
    assert run.meta.skip_reasons["progress bar at 0/N"] >= EPOCHS - 1
    report = pipeline.analyze(run)
    assert not {f.code for f in report.findings} & MISREAD, [f.code for f in report.findings]


def test_the_first_nan_is_placed_at_its_step_in_a_later_epoch(tmp_path: Path) -> None:
    c = console(EPOCHS, STEPS, seed=3, nan_at=2 * STEPS + 12)
    report = pipeline.analyze(pipeline.load(str(_write(tmp_path, c))))
    (nan,) = [f for f in report.findings if f.code == "LD001"]
    assert nan.severity == Severity.ERROR and nan.first_step == 2 * STEPS + 12


@pytest.mark.parametrize("cuts", ["r", "n"])
def test_read_as_it_grows_the_steps_never_go_back(tmp_path: Path, cuts: str) -> None:
    """A chunk from ``Epoch 1`` on holds no ``Epoch 0`` bar: the reader carries the first epoch (and
    drops the bar's reset drawing below the steps of the chunks before)."""
    c = console(EPOCHS, STEPS, seed=4)
    steps = _chunked_steps(c.text.encode(), cuts)
    assert np.all(np.diff(steps) >= 0), steps
    assert sorted(set(steps)) == list(range(1, EPOCHS * STEPS + 1))


def test_replayed_live_nothing_misreads_the_steps(tmp_path: Path) -> None:
    r = replay(_write(tmp_path, console(EPOCHS, STEPS, seed=5)), rate=100.0)
    assert r.unbacked() == []
    raised = {f.code for f, _ in r.raised_at()}
    assert not raised & MISREAD, raised
    assert r.session is not None
    steps = r.session.history.frame()["step"].to_numpy()
    assert np.all(np.diff(steps) > 0) and steps[-1] == EPOCHS * STEPS


@pytest.mark.parametrize("cuts", ["whole", "r", "n"])
def test_a_run_appended_from_epoch_0_again_is_still_another_launch(tmp_path: Path, cuts: str) -> None:
    text = console(EPOCHS, STEPS, seed=6).text + console(EPOCHS, STEPS, seed=7).text
    if cuts == "whole":
        path = tmp_path / "two.log"
        path.write_text(text)
        run = pipeline.load(str(path))
        assert len(run.earlier) == 1 and run.earlier[0].table["step"].to_list() == list(range(1, 121))
        assert run.table["step"].to_list() == list(range(1, 121))
        return
    steps = _chunked_steps(text.encode(), cuts)
    back = np.flatnonzero(np.diff(steps) < 0)
    assert back.size == 1 and steps[back[0] + 1] == 1  # the second launch starts again at its step 1


def _plan() -> Plan:
    return Plan(role="train", train={"epoch": 0, "batches": 1, "batches_total": 2, "loss": 3}, derived_step=True)


@pytest.mark.parametrize(
    ("epochs", "carried", "first"),
    [
        ([[0.0, 0.0], [1.0, 2.0]], None, 0),  # two shapes: the log's lowest epoch, not each shape's
        ([[1.0, 2.0]], None, 1),  # a counter from 1 (``| epoch 1 |``)
        ([[3.0, 4.0]], None, 1),  # a log that begins at a later epoch counts on from its earlier ones
        ([[1.0, 2.0]], 0, 0),  # a later chunk: the epoch the chunks before counted from
        ([[0.0, 1.0]], 1, 0),  # an epoch 0 after a log from 1: lower
        ([], 0, 0),  # no derived step in the chunk: the carried one stands
        ([], None, None),
    ],
)
def test_the_first_epoch_is_one_for_the_whole_log(
    epochs: list[list[float]], carried: int | None, first: int | None
) -> None:
    frames = [pl.DataFrame({"line_no": range(len(s)), "_vals": [[str(e), "1", "9", "2.5"] for e in s]}) for s in epochs]
    parts = [(frame, _plan()) for frame in frames]
    assert first_epoch(parts, carried) == first


def test_the_fast_path_agrees_on_a_bar_drawn_line_by_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each drawing on its own line (a job log that turns ``\\r`` into newlines): long enough for the
    fast path, which leaves a step derived from the epoch to the general path."""
    path = tmp_path / "bars.log"
    path.write_text(console(EPOCHS, STEPS, seed=8).text.replace("\r", "\n"))
    runs = []
    for least in (0, 10**9):
        monkeypatch.setattr(pieces, "FAST_MIN_LINES", least)
        runs.append(pipeline.load(str(path), fmt="text"))
    fast, slow = runs
    assert fast.table.equals(slow.table) and fast.meta == slow.meta
    assert slow.table["step"].to_list() == list(range(1, EPOCHS * STEPS + 1))


def test_the_logger_version_in_the_bar_is_bookkeeping_not_a_metric(tmp_path: Path) -> None:
    """Lightning's bar prints ``v_num=0`` (its logger's version) on every drawing: constant by design,
    no column that 'carries no information' (LD007), no metric; a metric that is 0 throughout still is."""
    from logdoctor.structure.counters import degenerate_columns
    from logdoctor.structure.layout import metric_columns

    run = pipeline.load(str(_write(tmp_path, console(EPOCHS, STEPS, seed=3))))
    assert "v_num" in run.table.columns  # read, and kept as the log's
    assert "v_num" not in metric_columns(run.table)
    assert not [f for f in pipeline.analyze(run).findings if f.code == "LD007"]
    assert not [n for n in run.meta.notes if n.startswith("v_num")]
    both = run.table.with_columns(pl.lit(0.0).alias("aux_loss"))
    assert degenerate_columns(both) == [("aux_loss", 0.0)]


#: Lightning's ModelCheckpoint (verbose) message, as it lands on the bar's line at an epoch's end
_CKPT = "Epoch {e}, global step {s}: 'val_loss' reached 2.68 (best 2.68), saving model to '/tmp/x/ep{e}.ckpt' as top 1"


def test_a_message_glued_after_a_bars_closing_bracket_is_a_record_of_its_own(tmp_path: Path) -> None:
    """The drawing ends at its ``]``: a callback's message written onto the bar's line is read apart,
    and its words and path make no column; the steps and losses are those of the clean console."""
    c = console(EPOCHS, STEPS, seed=3)
    text = c.text
    for e in range(EPOCHS):  # each epoch's last drawing at N/N, as Lightning leaves it before validation
        last = text.rfind(f"Epoch {e}: 100%|")
        end = text.index("]", last) + 1
        text = text[:end] + _CKPT.format(e=e, s=(e + 1) * STEPS) + text[end:]
    glued = tmp_path / "glued.log"
    glued.write_text(text)
    run, clean = pipeline.load(str(glued)), pipeline.load(str(_write(tmp_path, c)))
    assert run.table["step"].to_list() == clean.table["step"].to_list()
    assert np.allclose(run.table["loss"].to_numpy(), clean.table["loss"].to_numpy())
    assert not [col for col in run.table.columns if "saving" in col or "ckpt" in col], run.table.columns


def test_only_a_tqdm_drawing_ends_at_its_bracket() -> None:
    """Padding after a drawing, and a ``]`` in a line that is no tqdm drawing, split nothing."""
    from logdoctor.ingest.parsers.lines import read_lines

    drawing = "Epoch 0: 100%|##########| 40/40 [00:02<00:00, 19.49it/s, train_loss=4.100]"
    lines = [
        drawing + "      ",  # a shorter drawing over a longer one: padding, no message
        drawing + "\x1b[A",  # tqdm's cursor-up after a nested bar: the drawing's own
        "[rank0] step 5 loss 2.1",  # a tag, no bar
        "2024-01-01 [00:02<00:00] loss=1.2 then more text",  # a bracket without the pct|bar| i/N before it
        "Epoch 1: 50%|#####     | 20/40 [00:01<00:01]done",  # a drawing with a message glued on
    ]
    got = read_lines("\n".join(lines).encode() + b"\n")
    assert got["line"].to_list() == [*lines[:4], "Epoch 1: 50%|#####     | 20/40 [00:01<00:01]", "done"]
    assert got["line_no"].to_list() == [1, 2, 3, 4, 5, 5]  # the message keeps its physical line's number
