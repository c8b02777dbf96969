"""A total loss that rises while none of its parts does: a change of the loss weights (info), not a divergence.

The logs are generated in icefall's ``train.py`` line format, rank 0's rows only (``(0/4)``), the
total ``loss`` beside its parts ``simple_loss`` and ``pruned_loss``.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from logdoctor import pipeline
from logdoctor.detectors import lossweights
from logdoctor.model import Report, Severity

ROWS = 300
#: rows where the generated warm-up raises the pruned loss's weight (icefall: 0 -> 0.1 -> 1.0)
WARM = (100, 200)


def _parts(seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Two falling parts with 4% multiplicative noise."""
    rng = np.random.default_rng(seed)
    t = np.arange(ROWS)
    simple = (0.4 + 0.6 * np.exp(-t / 120)) * np.exp(rng.normal(0, 0.04, ROWS))
    pruned = (0.3 + 1.7 * np.exp(-t / 150)) * np.exp(rng.normal(0, 0.04, ROWS))
    return simple, pruned


def _write(path: Path, simple: np.ndarray, pruned: np.ndarray, scale: np.ndarray, ranks: int = 1) -> Path:
    """An icefall log: ``loss = 0.5 * simple + scale * pruned`` every 50 batches; rank 0's rows of 4,
    or the rows of ``ranks`` ranks interleaved (each rank's parts with its own 4% noise)."""
    rng = np.random.default_rng(7)
    lines = ["2023-08-25 19:14:22,598 INFO [train.py:977] (0/4) Training started"]
    for i in range(ROWS):
        epoch, batch = divmod(i, 10)
        for rank in range(ranks):
            s, p = (
                (simple[i], pruned[i]) if rank == 0 else tuple(np.exp(rng.normal(0, 0.04, 2)) * (simple[i], pruned[i]))
            )
            total = 0.5 * s + scale[i] * p
            part = f"loss={total:.4g}, simple_loss={s:.4g}, pruned_loss={p:.4g}"
            lines.append(
                f"2023-08-25 19:{14 + i // 60:02d}:{i % 60:02d},598 INFO [train.py:878] ({rank}/4) Epoch {epoch + 1}, "
                f"batch {50 * batch}, loss[{part}, over 18286.00 frames. utt_duration=823.4 frames, "
                f"utt_pad_proportion=0.01619, over 89.00 utterances.], tot_loss[{part}, over 791542.98 frames. "
                f"utt_duration=393.9 frames, utt_pad_proportion=0.09974, over 8067.49 utterances.], "
                f"batch size: 89, lr: 2.93e-03"
            )
    path.write_text("\n".join(lines) + "\n")
    return path


def _warmup_scale() -> np.ndarray:
    scale = np.zeros(ROWS)
    scale[WARM[0] :] = 0.1
    scale[WARM[1] :] = 1.0
    return scale


def _report(path: Path) -> Report:
    return pipeline.analyze(pipeline.load(str(path)))


def _loud(report: Report, code: str) -> list[str]:
    return [f.message for f in report.findings if f.code == code and f.severity >= Severity.WARNING]


@pytest.mark.parametrize(("seed", "ranks"), [(1, 1), (2, 1), (3, 1), (1, 4)])
def test_a_weight_schedule_that_raises_the_total_while_every_part_falls_is_info(
    tmp_path: Path, seed: int, ranks: int
) -> None:
    simple, pruned = _parts(seed)
    path = _write(tmp_path / "train.log", simple, pruned, _warmup_scale(), ranks)
    # interleaved ranks are read as the lowest rank's rows (ingest/parsers/ranks.py)
    assert pipeline.load(str(path)).table.height == ROWS
    r = _report(path)
    assert r.status == "ok", [f.message for f in r.problems]
    explained = [f for f in r.findings if lossweights.by_weights(f)]
    # the jump at the second warm-up step (0.1 -> 1.0) is found and said as a change of the weights
    assert explained, [(f.code, f.message) for f in r.findings]
    assert all(f.severity == Severity.INFO for f in explained)
    # the level change is shown as info; a divergence over the same jump is its explained symptom
    assert all(f.evidence.get("explained_by") == lossweights.CAUSE for f in explained if f.code != "LD301")
    assert all("explained_by" not in f.evidence for f in explained if f.code == "LD301")
    at = WARM[1] + 1  # the second warm-up step's first row (rank 0's rows, numbered by record order)
    assert any(f.first_step is not None and abs(f.first_step - at) <= 3 for f in explained)
    assert all("a change of the loss weights" in f.message for f in explained)


def test_the_same_log_with_constant_weights_has_no_finding_to_explain(tmp_path: Path) -> None:
    simple, pruned = _parts(1)
    r = _report(_write(tmp_path / "train.log", simple, pruned, np.ones(ROWS)))
    assert r.status == "ok"
    assert not [f for f in r.findings if f.code in ("LD002", "LD301")]


@pytest.mark.parametrize("ranks", [1, 4])
def test_a_divergence_that_raises_the_parts_with_the_total_stays_a_divergence(tmp_path: Path, ranks: int) -> None:
    simple, pruned = _parts(1)
    simple[150:] *= 3.0
    pruned[150:] *= 3.0
    r = _report(_write(tmp_path / "train.log", simple, pruned, np.ones(ROWS), ranks))
    assert _loud(r, "LD002") or _loud(r, "LD301"), [(f.code, f.message) for f in r.findings]
    assert not [f for f in r.findings if lossweights.by_weights(f)]


def test_one_part_rising_with_the_total_is_no_change_of_the_weights(tmp_path: Path) -> None:
    simple, pruned = _parts(2)
    simple[150:] *= 4.0  # one part blows up, the other keeps falling: the total rises with it
    r = _report(_write(tmp_path / "train.log", simple, pruned, np.ones(ROWS)))
    assert _loud(r, "LD002") or _loud(r, "LD301"), [(f.code, f.message) for f in r.findings]
    assert not [f for f in r.findings if lossweights.by_weights(f)]


def test_a_part_that_diverges_after_the_weights_changed_is_still_a_divergence(tmp_path: Path) -> None:
    simple, pruned = _parts(3)
    pruned[250:] *= np.linspace(1.0, 6.0, ROWS - 250)  # the pruned loss climbs after its weight went to 1.0
    r = _report(_write(tmp_path / "train.log", simple, pruned, _warmup_scale()))
    assert r.status != "ok", [(f.code, f.message) for f in r.findings]


def test_divergence_is_judged_on_the_parts_once_the_weights_explain_the_total(tmp_path: Path) -> None:
    simple, pruned = _parts(4)
    scale = np.where(np.arange(ROWS) < 100, 0.0, 1.0)  # the pruned term switched on: the total jumps 4x
    pruned[230:] *= np.linspace(1.0, 3.0, ROWS - 230)  # later the part itself climbs 3x (the total less than its jump)
    r = _report(_write(tmp_path / "train.log", simple, pruned, scale))
    explained = [f for f in r.findings if f.code == "LD002" and lossweights.by_weights(f)]
    assert explained and explained[0].first_step == 101
    on_part = [f for f in r.findings if f.code == "LD002" and f.evidence.get("part") == "pruned_loss"]
    assert on_part and on_part[0].severity == Severity.ERROR and on_part[0].first_step > 230
    assert "The loss part `pruned_loss` diverged" in on_part[0].message


def test_a_single_part_beside_the_total_is_no_evidence(tmp_path: Path) -> None:
    simple, pruned = _parts(1)
    path = tmp_path / "train.log"
    _write(path, simple, pruned, _warmup_scale())
    # drop the pruned part: the total and one part (the rule needs two)
    text = path.read_text().replace(", pruned_loss=", ", pruned_x=")
    path.write_text(text)
    run = pipeline.load(str(path))
    assert lossweights.own_parts(run) is None


def test_weights_change_needs_every_part_flat_or_falling() -> None:
    steps = np.arange(40, dtype=float)
    rng = np.random.default_rng(0)
    noise = np.exp(rng.normal(0, 0.03, (3, 40)))
    total = np.where(steps < 20, 1.0, 2.0) * noise[0]
    flat = 0.5 * noise[1]
    rising = np.where(steps < 20, 0.5, 1.0) * noise[2]
    before, after = (10.0, 19.0), (20.0, 29.0)
    got = lossweights.weights_change(lossweights.Parts(steps, total, {"a": flat, "b": flat.copy()}), before, after)
    assert got is not None and got[0].noise_units > lossweights.NOISE_K
    assert lossweights.weights_change(lossweights.Parts(steps, total, {"a": flat, "b": rising}), before, after) is None
    # a total that does not rise is nothing to explain
    assert lossweights.weights_change(lossweights.Parts(steps, flat, {"a": flat, "b": flat}), before, after) is None


def test_a_gans_generator_rising_while_its_discriminator_falls_is_no_weight_change(tmp_path: Path) -> None:
    """The loss analysed is the main one of several objectives (no total is logged): the generator's
    rise while the discriminator's parts fall is the GAN's failure (the discriminator wins), never
    explained away as loss weights."""
    rng = np.random.default_rng(3)
    t = np.arange(ROWS)
    g = np.where(t < 150, 2.0 - t / 300, 1.5 * np.exp((t - 150) / 40)) * np.exp(rng.normal(0, 0.03, ROWS))
    d_real = (0.2 + 0.5 * np.exp(-t / 80)) * np.exp(rng.normal(0, 0.03, ROWS))
    d_fake = (0.2 + 0.5 * np.exp(-t / 90)) * np.exp(rng.normal(0, 0.03, ROWS))
    path = tmp_path / "gan.csv"
    rows = [f"{i},{g[i]:.5g},{d_real[i]:.5g},{d_fake[i]:.5g}" for i in range(ROWS)]
    path.write_text("step,loss_g,loss_d_real,loss_d_fake\n" + "\n".join(rows) + "\n")
    report = _report(path)
    assert any("main part" in n for n in report.run.meta.notes)
    assert lossweights.own_parts(report.run) is None
    assert _loud(report, "LD002"), [(f.code, f.severity, f.message[:80]) for f in report.findings]
