"""A divergence that batch length explains is the batching's symptom; a real one stays an error.

The README's example (length-grouped megabatches) gave ERROR LD002 at its first length reset
for every prefix of ~100-560 lines, which the finished log does not give: the loss follows batch
length, and the first long batches after short ones lift it 2x above its best for a window.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from logdoctor import pipeline
from logdoctor.diagnosis.lengthrise import length_explained, length_matched
from logdoctor.model import Severity
from tests.conftest import FIXTURES


def _prefix(path: Path, lines: int, tmp: Path) -> pipeline.Report:
    part = tmp / f"prefix{lines}{path.suffix}"
    part.write_bytes(b"".join(path.read_bytes().splitlines(keepends=True)[:lines]))
    return pipeline.analyze(pipeline.load(str(part)))


def test_no_prefix_of_the_example_gives_an_error(tmp_path: Path) -> None:
    path = FIXTURES / "example.log"
    n = len(path.read_bytes().splitlines())
    folded = 0
    # right after the first reset (line 81: too few long batches for the correlation), then across
    # both epochs
    for lines in [83, 85, 87, *range(53, n + 1, 41)]:
        report = _prefix(path, lines, tmp_path)
        assert not [f.code for f in report.findings if f.severity >= Severity.ERROR], lines
        div = [f for f in report.findings if f.code == "LD002"]
        folded += len(div)
        assert all(f.severity == Severity.INFO and f.evidence.get("explained_by") for f in div)
    assert folded >= 5  # the divergence is still reported, as the batching's symptom


def test_the_fold_names_the_verdict_it_is_folded_into(tmp_path: Path) -> None:
    report = _prefix(FIXTURES / "example.log", 300, tmp_path)
    (div,) = [f for f in report.findings if f.code == "LD002"]
    assert report.verdict is not None and report.verdict.batching == "grouped"
    assert div.evidence["explained_by"] == "grouped-batching"
    assert "Explained by the length-grouped megabatches" in div.message
    assert "divergence" not in str(report.verdict.evidence.get("causes", ""))


def _sawtooth(n: int = 400, window: int = 80) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Descending batch length within windows, the loss following it on a falling trend."""
    steps = np.arange(1, n + 1)
    pos = (steps - 1) % window
    length = 1024.0 * np.exp(-pos / 20)
    rng = np.random.default_rng(3)
    loss = (2.0 + 2.5 * np.log(length / 30) / np.log(1024 / 30)) * (1 - 0.3 * steps / n)
    return steps, loss + rng.normal(0, 0.02, n), length


def test_a_rise_that_follows_length_is_explained_and_a_real_one_is_not() -> None:
    from logdoctor import codes
    from logdoctor.diagnosis import lengthstats as ls

    steps, loss, length = _sawtooth()
    div = codes.finding("LD002", "rise", first_step=81, last_step=120, evidence={"factor": 1.5})

    def adjusted(y: np.ndarray) -> np.ndarray:
        resid = ls.detrend(steps, y)
        return y - (resid - ls.remove_length(resid, length))

    assert length_explained([div], steps, adjusted(loss)) == frozenset({81})
    real = loss.copy()
    real[250:] *= 4.0  # a sustained 4x rise that no batch length explains
    assert length_explained([div], steps, adjusted(real)) == frozenset()
    assert length_explained([div], steps, adjusted(loss) - 10.0) == frozenset()  # not positive: no ratio


def test_a_real_divergence_is_still_an_error() -> None:
    report = pipeline.analyze(pipeline.load(str(FIXTURES / "schedule" / "lr_jump.jsonl")))
    assert any(f.code == "LD002" and f.severity == Severity.ERROR for f in report.findings)


@pytest.mark.reallogs
def test_a_real_diverged_training_is_still_an_error(reallogs_dir: Path) -> None:
    path = reallogs_dir / "hf_trainer_state_lyric_lora_diverged.json"
    report = pipeline.analyze(pipeline.load(str(path)))
    assert any(f.code == "LD002" and f.severity == Severity.ERROR for f in report.findings)


def test_a_rise_back_to_the_loss_of_long_batches_is_matched_and_a_real_one_is_not() -> None:
    from logdoctor import codes

    steps, loss, length = _sawtooth(n=90)
    div = codes.finding("LD002", "rise", first_step=81, last_step=90, evidence={"factor": 1.5, "rows_above": 10})
    assert length_matched([div], steps, loss, length) == frozenset({81})
    real = loss.copy()
    real[80:] = 3.0 * loss[:10]  # 3x the loss the run had at these lengths
    assert length_matched([div], steps, real, length) == frozenset()
    longer = length.copy()
    longer[80:] = 4096.0  # longer than any batch before: nothing to compare with
    assert length_matched([div], steps, loss, longer) == frozenset()
