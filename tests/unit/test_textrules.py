"""Line rules of the text parser: key names from the text around values; the fast path agrees."""

from __future__ import annotations

import random
from pathlib import Path

import polars as pl
import pytest
from polars.testing import assert_frame_equal

from logdoctor import pipeline
from logdoctor.ingest.aliases import FieldMap
from logdoctor.ingest.parsers import pieces, textfast
from logdoctor.ingest.parsers.lines import read_lines
from logdoctor.ingest.parsers.textplan import plan_for
from logdoctor.ingest.parsers.textrules import key_phrase, line_keys, resolve


@pytest.mark.parametrize(
    ("gap", "want"),
    [
        (" | lm loss: ", "lm loss"),
        (" acc=", "acc"),
        (", Batch Loss:     ", "Batch Loss"),
        (" : Up. ", "Up."),
        ("', 'global_step/max_steps': '", "global_step/max_steps"),
        (" | batch: n_seq=", "n_seq"),
        ("2026-", None),
        (" | ", None),
        ("the rest of the ", None),
    ],
)
def test_key_phrase(gap: str, want: str | None) -> None:
    assert key_phrase(gap) == want


def test_unit_attached_to_previous_value_is_not_a_key() -> None:
    assert key_phrase("ms step_avg:", attached=True) == "step_avg"
    assert key_phrase("s:", attached=False) == "s"


@pytest.mark.parametrize(
    ("phrase", "want"),
    [
        ("number of skipped iterations", "number_of_skipped_iterations"),
        ("validation loss at iteration", "step"),
        ("Tokens per Sec", "throughput"),
        ("global batch size", "seqs"),
        ("optim/total_grad_norm", "grad_norm"),
        ("ms/iter", "ms_iter"),
        ("val loss", "val_loss"),
    ],
)
def test_resolve(phrase: str, want: str) -> None:
    assert resolve(phrase, FieldMap()) == want


def test_value_before_its_unit_and_totals() -> None:
    keys = line_keys("step 1/74 | train loss 4.67 | (1234.5 ms | 45000 tok/s)")
    assert keys.keys == ("step", "step", "train loss", None, "tok/s")
    assert keys.totals == (False, True, False, False, False)
    batches = line_keys("| epoch   1 |   200/ 2983 batches | lr 20.00")
    assert batches.keys == ("epoch", "batches", "batches", "lr")


def test_nan_inside_a_key_is_not_a_value() -> None:
    keys = line_keys("| number of nan iterations:   0 | loss nan |")
    assert keys.keys == ("number of nan iterations", "loss")


def test_plan_routes_train_and_eval_keys() -> None:
    plan = plan_for("step 100: train loss 2.31, val loss 2.40", FieldMap())
    assert plan.role == "train" and set(plan.train) == {"step", "loss"}
    assert set(plan.evals) == {"val_loss", "step"}
    assert plan_for("print(f'step {i}: loss {x:.4f}') # 3", FieldMap()).role == "source code / config"


def _canonical_log(n: int, seed: int) -> bytes:
    rng = random.Random(seed)
    out = []
    for s in range(1, n + 1):
        out.append(
            f"step {s}/{n} | loss={rng.uniform(1, 5):.4f} acc=0.5 lr=3.0e-04 tok/s=25100 "
            f"epoch={s // 1000} | batch: n_seq=12 tokens={rng.randint(7000, 8000)} "
            f"len_mean=658.7 batch_fp={rng.getrandbits(32):08x}"
        )
        if s % 997 == 0:
            out += [
                "WARNING: noise at step",
                f"eval step {s} | val_loss=2.0",
                f"step {s + 1} | loss=nan",
            ]
        if s % 1500 == 0:
            out.append(f"step {s}/{n} | loss=1,234.5 acc=0.5")
    return ("\n".join(out) + "\n").encode()


def test_fast_path_equals_general_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "big.log"
    path.write_bytes(_canonical_log(pieces.FAST_MIN_LINES + 500, seed=3))
    calls: list[int] = []
    original = textfast.fast_rows

    def spy(data: bytes, fields: FieldMap, out: object) -> textfast.FastRead | None:
        fast = original(data, fields, out)  # type: ignore[arg-type]
        calls.append(fast.lines - fast.rest.height if fast else 0)
        return fast

    monkeypatch.setattr("logdoctor.ingest.parsers.text.fast_rows", spy)
    fast = pipeline.load(str(path))
    assert calls and calls[0] > pieces.FAST_MIN_LINES  # the fast path really read most lines
    monkeypatch.setattr(pieces, "FAST_MIN_LINES", 10**9)
    monkeypatch.setattr("logdoctor.ingest.parsers.text.fast_rows", original)
    slow = pipeline.load(str(path))
    assert_frame_equal(fast.table, slow.table)
    assert_frame_equal(fast.evals, slow.evals)
    assert fast.meta.skip_reasons == slow.meta.skip_reasons
    assert fast.meta.total_steps == slow.meta.total_steps


def test_read_lines_numbers_physical_lines() -> None:
    frame = read_lines(b"a\r\nb\xff\n\nx 1\r2\nlast")
    assert frame["line_no"].to_list() == [1, 2, 4, 4, 5]
    assert frame["line"].to_list() == ["a", "b\ufffd", "x 1", "2", "last"]


TRICKY = [
    "tok/s=12345678.9 fp=3e2a9c1d x=1,234,567.5 t=20.1ms lr=3.0e-04 e=1e5 a=.5 y=12345678",
    "step 254/52000 | loss=nan acc=-inf 2026-11-20 10:01:02,123 information infinity",
    "gpt2-124M fp16 é5 ٣ 5.51s/it [00:06<3:35:58] 'loss': '1.921' number of nan iterations: 0",
]


@pytest.mark.parametrize("line", TRICKY)
def test_python_and_polars_find_the_same_values(line: str) -> None:
    from logdoctor.ingest.parsers.textrules import VALUE_RE

    got = pl.Series([line]).str.extract_all(VALUE_RE.pattern).to_list()[0]
    assert got == VALUE_RE.findall(line)


def test_value_forms() -> None:
    from logdoctor.ingest.parsers.textrules import VALUE_RE

    assert VALUE_RE.findall(TRICKY[0]) == [
        "12345678.9",
        "3e2a9c1d",
        "1,234,567.5",
        "20.1",
        "3.0e-04",
        "1e5",
        ".5",
        "12345678",
    ]


def test_a_ratio_written_out_is_read_as_its_value_not_its_numerator() -> None:
    lk = line_keys("Instance: 1500; Time: 1.02s; loss: 812.5; acc: 1790/2770=0.6462")
    assert lk.keys == ("Instance", "Time", "loss", None, None, "acc")
    assert not any(lk.totals)


def test_a_dev_mark_after_the_training_loss_covers_only_the_values_after_it() -> None:
    plan = plan_for("epoch 3 | train loss 2.1 | acc 0.5 | dev loss 2.3 | acc 0.4", FieldMap())
    assert plan.train == {"epoch": 0, "loss": 1, "acc": 2}
    assert set(plan.evals) == {"dev_loss", "val_acc"}
