"""Property: the same records give the same report in every format the repo reads (issue 46.1).

One generated run (a falling training loss, an evaluation every ``EVERY`` steps that either keeps
falling or rises after the first epoch) is written as a text log, JSON lines, CSV, a
``trainer_state.json``, TensorBoard event files, an MLflow run folder and a W&B transaction log,
under many spellings of its keys. Every format must give the same report (status and finding codes),
and the overfitting run must be found (LD410) whatever its evaluation key is called, the healthy
one never. A short seeded run: a few examples per test.
"""

from __future__ import annotations

import json
import math
import random
import tempfile
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import HealthCheck, Phase, given, seed, settings
from hypothesis import strategies as st

import logdoctor
from tests.wandb_support import history, write_log

STEPS = 400
EVERY = 40  # an evaluation every 40 steps; one epoch = 100 steps
#: Spellings of the training loss key that every reader takes for the total training loss.
TRAIN_KEYS = ("loss", "train_loss", "train/loss", "train_loss_step")
#: Spellings of the evaluation loss: every split word, path and Lightning aggregate form.
EVAL_LOSS_KEYS = (
    "eval_loss", "eval/loss", "val_loss", "val/loss", "valid_loss", "validation_loss", "dev_loss", "dev/loss",
    "test_loss", "test/loss", "evaluation_loss", "val_loss_epoch", "dev_total_loss",
)  # fmt: skip
#: Evaluation metrics that ride along (not losses): they must not change what is found.
EXTRA_KEYS = ("metrics/mAP50(B)", "val_acc", "eval_accuracy", "dev_wer", "valid_f1", "test/bleu")

Records = tuple[list[tuple[int, float, float]], list[tuple[int, float, float]]]


def records(rng: random.Random, overfit: bool) -> Records:
    """(train rows (step, loss, lr), eval rows (step, eval loss, extra metric))."""
    train = [(s, 2.5 * math.exp(-s / 150) + 0.3 + rng.gauss(0, 0.01), 1e-3) for s in range(1, STEPS + 1)]
    evals = []
    for k, s in enumerate(range(EVERY, STEPS + 1, EVERY)):
        base = 1.2 - 0.1 * min(k, 3)
        rise = 0.08 * max(0, k - 3) if overfit else -0.01 * max(0, k - 3)
        evals.append((s, base + rise + rng.gauss(0, 0.003), 0.5 + 0.02 * k + rng.gauss(0, 0.002)))
    return train, evals


def _text(d: Path, tk: str, ek: str, xk: str, recs: Records) -> Path:
    ev = {s: (v, x) for s, v, x in recs[1]}
    lines = []
    for s, loss, lr in recs[0]:
        lines.append(f"step {s} | {tk} {loss:.5f} | lr {lr:.2e}")
        if s in ev:
            lines.append(f"step {s} | {ek} {ev[s][0]:.5f} | {xk} {ev[s][1]:.5f}")
    (d / "train.log").write_text("\n".join(lines) + "\n")
    return d / "train.log"


def _dicts(tk: str, ek: str, xk: str, recs: Records, lr_key: str = "lr") -> list[dict[str, float]]:
    ev = {s: (v, x) for s, v, x in recs[1]}
    out: list[dict[str, float]] = []
    for s, loss, lr in recs[0]:
        out.append({"step": s, tk: loss, lr_key: lr})
        if s in ev:
            out.append({"step": s, ek: ev[s][0], xk: ev[s][1]})
    return out


def _jsonl(d: Path, tk: str, ek: str, xk: str, recs: Records) -> Path:
    (d / "metrics.jsonl").write_text("".join(json.dumps(r) + "\n" for r in _dicts(tk, ek, xk, recs)))
    return d / "metrics.jsonl"


def _csv(d: Path, tk: str, ek: str, xk: str, recs: Records) -> Path:
    cols = ["step", tk, "lr", ek, xk]
    rows = [",".join(str(r.get(c, "")) for c in cols) for r in _dicts(tk, ek, xk, recs)]
    (d / "metrics.csv").write_text(",".join(cols) + "\n" + "\n".join(rows) + "\n")
    return d / "metrics.csv"


def _trainer_state(d: Path, tk: str, ek: str, xk: str, recs: Records) -> Path:
    hist = [{**r, "epoch": r["step"] / 100} for r in _dicts(tk, ek, xk, recs, lr_key="learning_rate")]
    state = {"log_history": hist, "global_step": STEPS, "max_steps": STEPS}
    (d / "trainer_state.json").write_text(json.dumps(state))
    return d / "trainer_state.json"


def _tensorboard(d: Path, tk: str, ek: str, xk: str, recs: Records) -> Path:
    from tensorboard.compat.proto.event_pb2 import Event
    from tensorboard.compat.proto.summary_pb2 import Summary
    from tensorboard.summary.writer.event_file_writer import EventFileWriter

    writer = EventFileWriter(str(d / "tb"))
    for r in _dicts(tk, ek, xk, recs):
        values = [Summary.Value(tag=k, simple_value=v) for k, v in r.items() if k != "step"]
        writer.add_event(Event(step=int(r["step"]), wall_time=1000.0 + r["step"], summary=Summary(value=values)))
    writer.close()
    return d / "tb"


def _mlflow(d: Path, tk: str, ek: str, xk: str, recs: Records) -> Path:
    run = d / "mlruns" / "0" / "0123abcd"
    series: dict[str, list[str]] = {}
    for r in _dicts(tk, ek, xk, recs):
        for k, v in r.items():
            if k != "step":
                series.setdefault(k, []).append(f"{1000 + int(r['step'])} {v!r} {int(r['step'])}\n")
    for k, lines in series.items():
        path = run / "metrics" / k
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("".join(lines))
    (run / "meta.yaml").write_text("run_id: 0123abcd\n")
    return run


def _wandb(d: Path, tk: str, ek: str, xk: str, recs: Records) -> Path:
    recs_out = []
    for r in _dicts(tk, ek, xk, recs):
        items = {k: v for k, v in r.items() if k != "step"}
        recs_out.append(history(int(r["step"]), **items))
    (d / "run-equiv.wandb").write_bytes(write_log(recs_out))
    return d / "run-equiv.wandb"


WRITERS: dict[str, Callable[[Path, str, str, str, Records], Path]] = {
    "text": _text, "jsonl": _jsonl, "csv": _csv, "trainer_state": _trainer_state,
    "tensorboard": _tensorboard, "mlflow": _mlflow, "wandb": _wandb,
}  # fmt: skip


def answer(writer: str, tk: str, ek: str, xk: str, recs: Records) -> tuple[str, tuple[str, ...]]:
    """(status, sorted finding codes) of the report on ``recs`` written by ``writer``."""
    if writer == "tensorboard":
        pytest.importorskip("tensorboard")
    with tempfile.TemporaryDirectory() as tmp:
        report = logdoctor.analyze(str(WRITERS[writer](Path(tmp), tk, ek, xk, recs)))
        return report.status, tuple(sorted(f.code for f in report.problems))


@seed(4601)
@settings(
    max_examples=12,
    phases=[Phase.explicit, Phase.generate],
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
@given(
    st.sampled_from(TRAIN_KEYS),
    st.sampled_from(EVAL_LOSS_KEYS),
    st.sampled_from(EXTRA_KEYS),
    st.booleans(),
    st.integers(0, 2**16),
)
def test_every_format_gives_the_same_report(tk: str, ek: str, xk: str, overfit: bool, rng_seed: int) -> None:
    recs = records(random.Random(rng_seed), overfit)
    answers = {w: answer(w, tk, ek, xk, recs) for w in WRITERS}
    assert len(set(answers.values())) == 1, answers
    codes = next(iter(answers.values()))[1]
    assert ("LD410" in codes) == overfit, answers


@pytest.mark.parametrize("ek", EVAL_LOSS_KEYS)
def test_overfitting_is_found_whatever_the_eval_key_is_called(ek: str) -> None:
    recs = records(random.Random(7), overfit=True)
    assert "LD410" in answer("jsonl", "loss", ek, "val_acc", recs)[1]
    assert "LD410" not in answer("jsonl", "loss", ek, "val_acc", records(random.Random(7), overfit=False))[1]
