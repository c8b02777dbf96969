"""Many inputs: expanding paths/globs/directories and analysing them, in parallel or not."""

from __future__ import annotations

from pathlib import Path

import pytest

from logdoctor import pipeline
from logdoctor.config import AnalysisConfig
from logdoctor.model import Severity

GOOD = "".join(f"step {i}: loss={3 - i * 0.01:.3f} len_mean={100 + i}\n" for i in range(1, 41))
NANS = GOOD.replace("loss=2.900", "loss=nan")


def _tree(tmp_path: Path) -> Path:
    (tmp_path / "runs").mkdir()
    (tmp_path / "runs" / "a.log").write_text(GOOD)
    (tmp_path / "runs" / "b.log.gz").write_bytes(__import__("gzip").compress(GOOD.encode()))
    (tmp_path / "runs" / "notes.md").write_text("# not a log\n")
    (tmp_path / "runs" / "mlrun").mkdir()
    (tmp_path / "runs" / "mlrun" / "metrics").mkdir()
    (tmp_path / "runs" / "mlrun" / "metrics" / "loss").write_text("1700000000000 2.5 1\n1700000000100 2.4 2\n")
    (tmp_path / "runs" / "empty").mkdir()
    return tmp_path / "runs"


def test_expand_inputs(tmp_path: Path) -> None:
    runs = _tree(tmp_path)
    assert pipeline.expand_inputs([str(runs)]) == [
        str(runs / "a.log"),
        str(runs / "b.log.gz"),
        str(runs / "mlrun"),
    ]
    assert pipeline.expand_inputs([str(runs / "*.log"), str(runs / "a.log")]) == [str(runs / "a.log")]
    assert pipeline.expand_inputs([str(runs / "mlrun")]) == [str(runs / "mlrun")]
    assert pipeline.expand_inputs([str(runs / "empty"), str(runs / "*.nope"), "-"]) == [
        str(runs / "empty"),
        str(runs / "*.nope"),
        "-",
    ]


def test_a_project_folder_stands_for_the_runs_in_its_wandb_folder(tmp_path: Path) -> None:
    (tmp_path / "train.log").write_text(GOOD)
    runs = [tmp_path / "wandb" / name for name in ("run-20261201_010000-b", "offline-run-20261130_230000-a")]
    for run in runs:
        run.mkdir(parents=True)
        (run / f"{run.name.rsplit('-', 1)[1]}.wandb").write_bytes(b"")
    (tmp_path / "wandb" / "latest-run").symlink_to(runs[0])
    # oldest first by start time; the log beside them too; latest-run not twice
    assert pipeline.expand_inputs([str(tmp_path)]) == [str(tmp_path / "train.log"), str(runs[1]), str(runs[0])]


@pytest.mark.slow
def test_parallel_run_survives_broken_files_and_matches_serial(tmp_path: Path) -> None:
    (tmp_path / "good.log").write_text(GOOD)
    (tmp_path / "bad.log").write_text("no steps here\n")
    (tmp_path / "empty.log").write_text("")
    paths = [str(tmp_path / n) for n in ("good.log", "bad.log", "empty.log")]
    outcomes = pipeline.analyze_paths(paths, jobs=2)
    assert [o.path for o in outcomes] == paths
    assert [o.exit_code for o in outcomes] == [0, 2, 2]
    assert outcomes[1].error is not None
    assert outcomes[1].error.startswith(f"{tmp_path / 'bad.log'}: no training steps found")
    assert outcomes[2].error == f"{tmp_path / 'empty.log'}: file is empty"
    serial = pipeline.analyze_paths(paths, jobs=1)
    assert [(o.error, o.report and o.report.series) for o in serial] == [
        (o.error, o.report and o.report.series) for o in outcomes
    ]


def test_exit_code_follows_fail_on(tmp_path: Path) -> None:
    (tmp_path / "nan.log").write_text(NANS)
    (tmp_path / "ok.log").write_text(GOOD)
    paths = [str(tmp_path / "nan.log"), str(tmp_path / "ok.log")]
    assert [o.exit_code for o in pipeline.analyze_paths(paths, jobs=1)] == [1, 0]
    cfg = AnalysisConfig(ignore=("nonfinite-loss",))
    assert [o.exit_code for o in pipeline.analyze_paths(paths, cfg, jobs=1)] == [0, 0]
    strict = AnalysisConfig(fail_on=Severity.INFO)  # ok.log holds info findings (too short, plateau)
    assert [o.exit_code for o in pipeline.analyze_paths(paths, strict, jobs=1)] == [1, 1]


def test_detector_thresholds_reach_the_real_detectors() -> None:
    """spiky.log has loss spikes (LD101, warning): a z threshold of 1000 silences them."""
    path = [str(Path(__file__).resolve().parents[2] / "fixtures" / "spiky.log")]
    (default,) = pipeline.analyze_paths(path, jobs=1)
    assert default.exit_code == 1 and "LD101" in {f.code for f in default.report.findings}  # type: ignore[union-attr]
    deaf = AnalysisConfig(options={"spikes": {"z_threshold": 1000}})
    (quiet,) = pipeline.analyze_paths(path, deaf, jobs=1)
    assert quiet.exit_code == 0 and "LD101" not in {f.code for f in quiet.report.findings}  # type: ignore[union-attr]


def test_auto_jobs_keeps_small_sweeps_in_one_process(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    small = [tmp_path / f"r{i}.log" for i in range(8)]
    for p in small:
        p.write_text("step 1 | loss=1.0\n")
    assert pipeline.auto_jobs([str(p) for p in small]) == 1
    monkeypatch.setattr(pipeline.os, "cpu_count", lambda: 4)
    monkeypatch.setattr(pipeline.os, "getloadavg", lambda: (1.2, 1.0, 1.0))
    monkeypatch.setattr(pipeline, "BYTES_PER_WORKER", 10)  # pretend each file is a big log
    assert pipeline.auto_jobs([str(p) for p in small]) == 3  # 4 cores, one busy
    assert pipeline.auto_jobs([str(small[0]), str(tmp_path / "missing.log")]) == 1
