"""Many inputs: expanding paths/globs/directories and analysing them, in parallel or not."""

from __future__ import annotations

from pathlib import Path

import pytest

from logdoctor import pipeline
from logdoctor.config import AnalysisConfig
from logdoctor.model import Severity
from tests.probe import with_probe  # noqa: F401

GOOD = "".join(f"step {i}: loss={3 - i * 0.01:.3f} len_mean={100 + i}\n" for i in range(1, 41))
NANS = GOOD.replace("loss=2.900", "loss=nan")


def _tree(tmp_path: Path) -> Path:
    (tmp_path / "runs").mkdir()
    (tmp_path / "runs" / "a.log").write_text(GOOD)
    (tmp_path / "runs" / "b.log.gz").write_bytes(__import__("gzip").compress(GOOD.encode()))
    (tmp_path / "runs" / "notes.md").write_text("# not a log\n")
    (tmp_path / "runs" / "mlrun").mkdir()
    (tmp_path / "runs" / "mlrun" / "metrics").mkdir()
    (tmp_path / "runs" / "empty").mkdir()
    return tmp_path / "runs"


def test_expand_inputs(tmp_path: Path) -> None:
    runs = _tree(tmp_path)
    assert pipeline.expand_inputs([str(runs)]) == [str(runs / "a.log"), str(runs / "b.log.gz"), str(runs / "mlrun")]
    assert pipeline.expand_inputs([str(runs / "*.log"), str(runs / "a.log")]) == [str(runs / "a.log")]
    assert pipeline.expand_inputs([str(runs / "mlrun")]) == [str(runs / "mlrun")]
    assert pipeline.expand_inputs([str(runs / "empty"), str(runs / "*.nope"), "-"]) == [
        str(runs / "empty"), str(runs / "*.nope"), "-"]


def test_one_broken_file_does_not_stop_the_others(tmp_path: Path) -> None:
    (tmp_path / "good.log").write_text(GOOD)
    (tmp_path / "bad.log").write_text("no steps here\n")
    (tmp_path / "empty.log").write_text("")
    outcomes = pipeline.analyze_paths([str(tmp_path / n) for n in ("good.log", "bad.log", "empty.log")], jobs=2)
    assert [o.exit_code for o in outcomes] == [0, 2, 2]
    assert outcomes[0].report is not None and outcomes[0].report.series.steps == 40
    assert outcomes[1].error == f"{tmp_path / 'bad.log'}: no training steps found"
    assert outcomes[2].error == f"{tmp_path / 'empty.log'}: file is empty"


def test_parallel_and_serial_agree(tmp_path: Path) -> None:
    paths = []
    for i in range(3):
        (tmp_path / f"r{i}.log").write_text(GOOD)
        paths.append(str(tmp_path / f"r{i}.log"))
    serial = pipeline.analyze_paths(paths, jobs=1)
    parallel = pipeline.analyze_paths(paths, jobs=3)
    assert [o.path for o in parallel] == paths
    assert [o.report.series for o in serial] == [o.report.series for o in parallel]  # type: ignore[union-attr]


@pytest.mark.usefixtures("with_probe")
def test_exit_code_follows_fail_on(tmp_path: Path) -> None:
    (tmp_path / "nan.log").write_text(NANS)
    (tmp_path / "ok.log").write_text(GOOD)
    paths = [str(tmp_path / "nan.log"), str(tmp_path / "ok.log")]
    assert [o.exit_code for o in pipeline.analyze_paths(paths, jobs=1)] == [1, 0]
    cfg = AnalysisConfig(ignore=("nonfinite-loss",))
    assert [o.exit_code for o in pipeline.analyze_paths(paths, cfg, jobs=1)] == [0, 0]
    lenient = AnalysisConfig(options={"nanprobe": {"max_nan": 1}}, fail_on=Severity.ERROR)
    assert [o.exit_code for o in pipeline.analyze_paths(paths, lenient, jobs=1)] == [0, 0]
