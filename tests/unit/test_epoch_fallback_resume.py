"""A restart that only the epoch column shows: the epoch falls back while the step continues."""

from __future__ import annotations

import json
from pathlib import Path

from logdoctor import pipeline
from logdoctor.structure.restarts import epoch_falls

EXCERPTS = Path(__file__).resolve().parents[1] / "data" / "excerpts"


def _state(rows: list[tuple[int, float, float]]) -> dict[str, object]:
    return {
        "global_step": rows[-1][0],
        "max_steps": 4000,
        "log_history": [{"loss": loss, "learning_rate": 1e-5, "epoch": ep, "step": s} for s, loss, ep in rows],
    }


def _resumed(at: int = 50, n: int = 100) -> list[tuple[int, float, float]]:
    """Rows every 10 steps; the run resumes at row ``at`` with its step counting on and its
    epoch starting again from 0 (HF ``ignore_data_skip=True`` over a streaming dataset)."""
    rows = []
    for k in range(1, n + 1):
        ep = k / 100 if k < at else (k - at + 1) / 100
        rows.append((k * 10, 2.0 - k / 200, round(ep, 2)))
    return rows


def test_generated_trainer_state_epoch_fallback_is_a_resume(tmp_path: Path) -> None:
    path = tmp_path / "trainer_state.json"
    path.write_text(json.dumps(_state(_resumed())))
    run = pipeline.load(str(path))
    st = run.meta.structure
    assert st is not None
    assert [(r.step, r.kind, r.source) for r in st.restarts] == [(500, "resume", "epoch_fell_back")]
    assert run.meta.resumes == 1 and run.meta.overwritten_steps == 0 and run.n_steps == 100
    report = pipeline.analyze(run)
    (ld003,) = [f for f in report.findings if f.code == "LD003"]
    assert "At step 500 only the epoch column shows it" in ld003.message


def test_real_hf_console_lines_with_an_epoch_fallback(tmp_path: Path) -> None:
    """The training dicts of tests/data/excerpts/hf_console_wav2vec2_inf_eval.txt (source noted in
    test_console_evals.py), then the same run resumed: its step (row order) continues while its
    epoch starts from 0 again, as HF prints after a resume with ignore_data_skip on a stream."""
    text = (EXCERPTS / "hf_console_wav2vec2_inf_eval.txt").read_text()
    real = [ln for ln in text.splitlines() if ln.startswith("{'loss'")]
    assert len(real) >= 18
    after = [f"{{'loss': {3.3 - k / 100:.4f}, 'learning_rate': 0.0001, 'epoch': {k / 300:.2f}}}" for k in range(1, 30)]
    path = tmp_path / "stdout.txt"
    path.write_text("\n".join([*real, *after]) + "\n")
    run = pipeline.load(str(path))
    st = run.meta.structure
    assert st is not None and [r.source for r in st.restarts] == ["epoch_fell_back"]
    first_after = len(real) + 1  # rows are numbered by order: the resume is the first row after
    assert st.restarts[0].step == int(run.table["step"][first_after - 1])


def test_healthy_epochs_and_appended_runs_are_not_epoch_fallbacks(tmp_path: Path) -> None:
    path = tmp_path / "trainer_state.json"
    path.write_text(json.dumps(_state([(k * 10, 2.0 - k / 200, round(k / 100, 2)) for k in range(1, 101)])))
    st = pipeline.load(str(path)).meta.structure
    assert st is not None and st.restarts == ()
    import polars as pl

    t = pl.DataFrame({"step": [10, 20, 10, 20], "epoch": [0.5, 1.0, 0.5, 1.0]})  # step back too
    assert not epoch_falls(t).any()
    wobble = pl.DataFrame({"step": [10, 20, 30, 40], "epoch": [0.5, 0.49, 0.51, 0.6]})  # not a fall
    assert not epoch_falls(wobble).any()
