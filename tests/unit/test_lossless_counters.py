"""Rows without a loss still count for counters and scales (skipped iterations, loss scale)."""

from __future__ import annotations

from pathlib import Path

from logdoctor import pipeline
from logdoctor.model import Finding

EXCERPTS = Path(__file__).resolve().parents[1] / "data" / "excerpts"
# tests/data/excerpts/megatron_gpt2_n8_skipped_iterations.txt: the first 8 ``iteration`` lines
# (file lines 1475-1521) of experiments/gpt2-meg/meg_gpt2_base_n8_dp1_tp4_pp8-1809562.out in
# bigscience-workshop/bigscience (commit 9e64edec2ad1fb9263bf39ba616a84ff64b4d947; the
# repository's licence applies). Iteration 10 has every batch skipped: a loss scale and a skip
# count, no ``lm loss``.
MEGATRON = EXCERPTS / "megatron_gpt2_n8_skipped_iterations.txt"


def _ld020(path: str) -> Finding:
    report = pipeline.analyze(pipeline.load(path))
    found = [f for f in report.findings if f.code == "LD020"]
    assert len(found) == 1
    return found[0]


def _raw_counts(path: Path) -> tuple[int, float]:
    """Independent reading: the sum of ``number of skipped iterations`` and the first loss scale."""
    total, first = 0, None
    for line in path.read_text().splitlines():
        fields = dict((k.strip(), v.strip()) for k, _, v in (f.partition(":") for f in line.split("|")) if v.strip())
        total += int(fields["number of skipped iterations"])
        first = first if first is not None else float(fields["loss scale"])
    assert first is not None
    return total, first


def test_real_megatron_all_skipped_iteration_counts() -> None:
    total, first = _raw_counts(MEGATRON)
    assert (total, first) == (19, 8388608.0)
    f = _ld020(str(MEGATRON))
    assert f.evidence["skipped_total"] == total
    assert f.evidence["loss_scale_first"] == first
    assert "19 iterations were skipped" in f.message and "from 8,388,608" in f.message
    assert f.first_step == 10


def _megatron(rows: list[tuple[int, float | None, float, int]]) -> list[str]:
    out = []
    for it, loss, scale, skipped in rows:
        lm = f" lm loss: {loss:.6E} |" if loss is not None else ""
        out.append(
            f" iteration {it:8d}/    1000 | consumed samples: {it * 4:12d} | elapsed time per iteration "
            f"(ms): 1500.0 | learning rate: 1.000E-04 | global batch size:     4 |{lm} loss scale: "
            f"{scale:.1f} | number of skipped iterations: {skipped:3d} | number of nan iterations:   0 |"
        )
    return out


def test_generated_lossless_rows_mid_run_count(tmp_path: Path) -> None:
    rows: list[tuple[int, float | None, float, int]] = [(k * 10, 8.0 - k * 0.05, 65536.0, 0) for k in range(1, 41)]
    rows[20] = (210, None, 32768.0, 10)  # an all-skipped interval mid-run, no loss printed
    rows[21] = (220, 6.9, 32768.0, 2)
    path = tmp_path / "megatron.out"
    path.write_text("\n".join(_megatron(rows)) + "\n")
    run = pipeline.load(str(path))
    assert 210 not in run.table["step"].to_list()  # not a loss row
    f = _ld020(str(path))
    assert f.evidence["skipped_total"] == 12 and f.first_step == 210
    assert f.evidence["loss_scale_min"] == 32768.0


def test_generated_no_lossless_rows_unchanged(tmp_path: Path) -> None:
    rows: list[tuple[int, float | None, float, int]] = [(k * 10, 8.0 - k * 0.05, 65536.0, 0) for k in range(1, 41)]
    rows[21] = (220, 6.9, 32768.0, 2)
    path = tmp_path / "megatron.out"
    path.write_text("\n".join(_megatron(rows)) + "\n")
    assert _ld020(str(path)).evidence["skipped_total"] == 2
