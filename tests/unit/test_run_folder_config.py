"""A run folder's plan from the config its trainer dumps beside the log: detectron2's ``config.yaml``
(``SOLVER.MAX_ITER``, iterations) beside ``metrics.json`` / ``log.txt``, MMEngine's ``config.py``
(``train_cfg``'s ``max_epochs`` / ``max_iters``) beside ``vis_data/scalars.json`` or in its work dir,
SpeechBrain's ``hyperparams.yaml`` (``number_of_epochs``, the classifier's ``out_n_neurons``) beside
``train_log.txt`` (ingest/sidecars.py)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from logdoctor import pipeline
from logdoctor.ingest.sidecars import MAX_BYTES, nested, read_sidecar
from logdoctor.model import Report
from tests.unit.blindcache import blind_log

D2_CONFIG = """CUDNN_BENCHMARK: false
MODEL:
  ROI_HEADS:
    NUM_CLASSES: 80
  RPN:
    MAX_ITER: 7
OUTPUT_DIR: ./output
SOLVER:
  BASE_LR: 0.001
  CLIP_GRADIENTS:
    ENABLED: false
  MAX_ITER: {max_iter}
  STEPS:
  - 30000
TEST:
  EVAL_PERIOD: 0
"""


def _analyze(path: Path) -> Report:
    return pipeline.analyze(pipeline.load(str(path)))


def _codes(report: Report) -> set[str]:
    return {f.code for f in report.findings}


def _metrics_json(folder: Path, last: int, max_iter: int | None) -> Path:
    """detectron2 ``utils/events.py`` JSONWriter lines every 20 iterations (``iteration`` from 19)."""
    folder.mkdir(parents=True, exist_ok=True)
    lines = [
        json.dumps({"iteration": i, "lr": 0.001, "total_loss": 2.0 * (0.999**i) + 0.3, "data_time": 0.01})
        for i in range(19, last + 1, 20)
    ]
    path = folder / "metrics.json"
    path.write_text("\n".join(lines) + "\n")
    if max_iter is not None:
        (folder / "config.yaml").write_text(D2_CONFIG.format(max_iter=max_iter))
    return path


def test_nested_yaml_key_by_indentation() -> None:
    text = D2_CONFIG.format(max_iter=40000)
    assert nested(text, ("SOLVER", "MAX_ITER")) == "40000"
    assert nested(text, ("MODEL", "RPN", "MAX_ITER")) == "7"  # another block's key of the same name
    assert nested(text, ("MAX_ITER",)) is None
    assert nested("SOLVER:\n  BASE_LR: 0.1\nMAX_ITER: 5\n", ("SOLVER", "MAX_ITER")) is None


def test_detectron2_config_yaml_plans_iterations_and_a_stop_before_it_is_named(tmp_path: Path) -> None:
    report = _analyze(_metrics_json(tmp_path / "output", 4999, 40000))
    st = report.meta.structure
    assert st is not None
    assert (st.planned, st.planned_source, st.ending) == (40000, "config.yaml", "stopped")
    stop = [f for f in report.findings if f.code == "LD016"]
    assert stop and "config.yaml" in stop[0].message
    assert any("config.yaml beside the log: SOLVER.MAX_ITER 40000" in n for n in report.meta.notes)


def test_detectron2_finished_run_stays_silent_and_absent_config_claims_nothing(tmp_path: Path) -> None:
    report = _analyze(_metrics_json(tmp_path / "done", 999, 1000))
    st = report.meta.structure
    assert st is not None and (st.planned, st.ending) == (1000, "finished")
    assert report.status == "ok"
    report = _analyze(_metrics_json(tmp_path / "bare", 4999, None))
    st = report.meta.structure
    assert st is not None and (st.planned, st.ending) == (None, "unknown")
    assert "LD016" not in _codes(report)


def test_detectron2_config_whose_budget_the_rows_pass_is_no_plan(tmp_path: Path) -> None:
    """A config.yaml of another launch (MAX_ITER 1000) beside rows that go on to 4999: not the run's plan."""
    report = _analyze(_metrics_json(tmp_path / "output", 4999, 1000))
    st = report.meta.structure
    assert st is not None and st.planned is None
    assert "LD016" not in _codes(report)


def test_detectron2_garbage_and_oversized_config_are_ignored_with_a_notice(tmp_path: Path) -> None:
    path = _metrics_json(tmp_path / "output", 499, None)
    (path.parent / "config.yaml").write_bytes(b"\xff\xfe\x00 not yaml")
    plan = read_sidecar(path)
    assert plan is not None and plan.steps is None and "config.yaml" in plan.note
    (path.parent / "config.yaml").write_text("SOLVER:\n  MAX_ITER: many\n")
    assert "states no SOLVER.MAX_ITER" in read_sidecar(path).note  # type: ignore[union-attr]
    (path.parent / "config.yaml").write_text(D2_CONFIG.format(max_iter=40000) + "# pad\n" * MAX_BYTES)
    assert "not read" in read_sidecar(path).note  # type: ignore[union-attr]
    assert pipeline.load(str(path)).meta.structure.planned is None


def test_a_log_that_states_its_plan_keeps_its_own(tmp_path: Path) -> None:
    """detectron2's log.txt prints its full config (``MAX_ITER: 4000``): the log's value comes first."""
    folder = tmp_path / "output"
    folder.mkdir()
    (folder / "config.yaml").write_text(D2_CONFIG.format(max_iter=40000))
    log = folder / "log.txt"
    head = "[08/30 12:00:00 detectron2]: Running with full config:\nSOLVER:\n  BASE_LR: 0.001\n  MAX_ITER: 4000\n"
    rows = "".join(
        f"[08/30 12:{i // 60 % 60:02d}:00 d2.utils.events]:  eta: 0:10:00  iter: {i}  "
        f"total_loss: {2.0 * 0.999**i + 0.3:.4f}  time: 0.30  data_time: 0.01  lr: 0.001  max_mem: 100M\n"
        for i in range(19, 4000, 20)
    )
    log.write_text(head + rows)
    st = pipeline.load(str(log)).meta.structure
    assert st is not None and st.planned == 4000 and st.planned_source != "config.yaml"


def _scalars(folder: Path, epochs: int, per_epoch: int = 10) -> Path:
    """MMEngine LocalVisBackend ``scalars.json``: one record per logged iteration with ``epoch`` and ``step``."""
    folder.mkdir(parents=True, exist_ok=True)
    lines = [
        json.dumps({"lr": 0.004, "loss": 1.0 / (1 + s / 50), "time": 0.2, "epoch": (s - 1) // per_epoch + 1, "step": s})
        for s in range(1, epochs * per_epoch + 1)
    ]
    path = folder / "scalars.json"
    path.write_text("\n".join(lines) + "\n")
    return path


MM_CONFIG = """default_scope = 'mmdet'
max_epochs = {epochs}
model = dict(type='RTMDet', train_cfg=dict(assigner=dict(type='DynamicSoftLabelAssigner', topk=13)))
train_cfg = dict(
    type='EpochBasedTrainLoop',
    max_epochs=max_epochs,
    val_interval=5)
val_cfg = dict(type='ValLoop')
"""


def test_mmengine_config_py_beside_scalars_json(tmp_path: Path) -> None:
    vis = tmp_path / "work_dirs" / "rtmdet" / "20230605_123125" / "vis_data"
    path = _scalars(vis, 30)
    (vis / "config.py").write_text(MM_CONFIG.format(epochs=200))
    report = _analyze(path)
    st = report.meta.structure
    assert st is not None and (st.planned, st.planned_source, st.ending) == (2000, "config.py", "stopped")
    assert "LD016" in _codes(report)
    assert any("config.py beside the log: train_cfg max_epochs=200" in n for n in report.meta.notes)
    (vis / "config.py").write_text(MM_CONFIG.format(epochs=30))
    report = _analyze(path)
    assert report.meta.structure.ending == "finished" and "LD016" not in _codes(report)  # type: ignore[union-attr]


def test_mmengine_work_dir_dump_and_max_iters(tmp_path: Path) -> None:
    """Without vis_data/config.py: the runner's dump ``<work_dir>/<config name>.py`` two folders up."""
    work = tmp_path / "work_dirs" / "rtmdet"
    path = _scalars(work / "20230605_123125" / "vis_data", 30)
    (work / "rtmdet.py").write_text("train_cfg = dict(type='IterBasedTrainLoop', max_iters=900, val_interval=100)\n")
    st = pipeline.load(str(path)).meta.structure
    assert st is not None and (st.planned, st.planned_source, st.ending) == (900, "config.py", "stopped")
    (work / "rtmdet.py").write_text("model = dict(train_cfg=dict(max_epochs=3))\n")  # a model's, not the loop's
    plan = read_sidecar(path)
    assert plan is not None and plan.epochs is None and "no train_cfg" in plan.note
    other = _scalars(tmp_path / "elsewhere" / "20230605_123125" / "logs", 30)
    (other.parent.parent.parent / "elsewhere.py").write_text(MM_CONFIG.format(epochs=200))
    assert read_sidecar(other) is None  # the work dir is looked in only from vis_data


def _train_log(folder: Path, epochs: int, loss: float | None = None) -> Path:
    """SpeechBrain ``utils/train_logger.py`` FileTrainLogger: ``epoch: N, lr: x - train loss: y - valid loss: z``."""
    folder.mkdir(parents=True, exist_ok=True)
    lines = [
        f"epoch: {e}, lr: 1.00e-03 - train loss: {loss if loss else 2.0 / e:.3g} - valid loss: "
        f"{loss if loss else 2.1 / e:.3g}, valid error: {0.5 / e:.3g}"
        for e in range(1, epochs + 1)
    ]
    path = folder / "train_log.txt"
    path.write_text("\n".join(lines) + "\n")
    return path


def test_speechbrain_hyperparams_yaml_plan_and_class_count(tmp_path: Path) -> None:
    folder = tmp_path / "results" / "1986"
    path = _train_log(folder, 12)
    (folder / "hyperparams.yaml").write_text(
        "# Generated 2024-01-01 from:\nseed: 1986\nnumber_of_epochs: 30 # more\noutput_neurons: 5000\n"
        "out_n_neurons: 7 # (anger, fear, ...)\nclassifier: !new:speechbrain.nnet.linear.Linear\n  n_neurons: 7\n"
    )
    report = _analyze(path)
    st = report.meta.structure
    assert st is not None and (st.planned_source, st.ending) == ("hyperparams.yaml", "stopped")
    assert "LD016" in _codes(report)
    facts = [f for f in report.meta.config_facts if f.name == "classes"]
    assert [(f.value, f.source) for f in facts] == [(7, "hyperparams.yaml out_n_neurons")]
    (folder / "hyperparams.yaml").write_text("number_of_epochs: 12\noutput_neurons: 5000\n")
    report = _analyze(path)
    assert report.meta.structure.ending == "finished" and "LD016" not in _codes(report)  # type: ignore[union-attr]
    assert not [f for f in report.meta.config_facts if f.name == "classes"]  # a token count is no class count
    (folder / "hyperparams.yaml").write_text("lr: 0.1\n")
    assert "states no number_of_epochs" in read_sidecar(path).note  # type: ignore[union-attr]


@pytest.mark.parametrize(
    ("name", "planned", "source", "ending"),
    [
        ("detectron2_plainloop_gdp_five_launches_metrics.json", 40000, "config.yaml", "stopped"),
        ("detectron2_mask2former_mgm_three_launches_metrics.json", 4000, "config.yaml", "finished"),
        ("detectron2_mask2former_mgm_three_launches_log.txt", 4000, "config", "finished"),  # the log's own
        ("mmengine_rtmdet_ear_stopped_81of200_scalars.json", 4200, "config.py", "stopped"),
        ("speechbrain_moabb_eegnet_bnci2014001_sub1_train_log.txt", 468, "hyperparams.yaml", "finished"),
    ],
)
def test_real_run_folders(name: str, planned: int, source: str, ending: str) -> None:
    """Public run folders of the blind corpus (dev), fetched with their sidecars; skipped without them."""
    folder = blind_log(name).parent / f"{name}.run"
    logs = [p for p in folder.glob("*") if p.suffix != ".yaml" and p.name != "config.py"] if folder.is_dir() else []
    if not logs:
        pytest.skip(f"{folder} not fetched (python bench/blind/corpus.py fetch)")
    st = pipeline.load(str(logs[0])).meta.structure
    assert st is not None and (st.planned, st.planned_source, st.ending) == (planned, source, ending)


def test_speechbrain_log_txt_reads_the_experiment_folders_hyperparams(tmp_path: Path) -> None:
    """create_experiment_directory writes ``log.txt`` (its logger's file, which the FileTrainLogger's
    lines reach too) beside ``hyperparams.yaml``; a detectron2 ``config.yaml`` there comes first."""
    folder = tmp_path / "results" / "1986"
    lines = _train_log(folder, 3).read_text().splitlines()
    path = folder / "log.txt"
    path.write_text(
        "".join(f"2026-12-07 22:41:0{i},1 - speechbrain.utils.train_logger - {t}\n" for i, t in enumerate(lines))
    )
    (folder / "hyperparams.yaml").write_text("seed: 1986\nnumber_of_epochs: 8\n")
    st = _analyze(path).meta.structure
    assert st is not None and (st.planned_epochs, st.planned_source, st.ending) == (8, "hyperparams.yaml", "stopped")
    (folder / "config.yaml").write_text(D2_CONFIG.format(max_iter=3))
    assert read_sidecar(path).source == "config.yaml"  # type: ignore[union-attr]
