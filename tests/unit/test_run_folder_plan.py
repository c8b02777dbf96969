"""A run folder's plan: the ``args.yaml`` (Ultralytics) or ``opt.yaml`` (YOLOv5) a trainer writes beside its
``results.csv`` states the epochs and the patience that the table itself does not."""

from __future__ import annotations

import json
from importlib.resources import files
from pathlib import Path

import jsonschema

from logdoctor import pipeline
from logdoctor.ingest.sidecars import MAX_BYTES, read_sidecar
from logdoctor.model import Report
from logdoctor.renderers.jsonreport import JsonRenderer
from tests.unit.blindcache import blind_log

KEYS = (
    "train/box_loss", "train/cls_loss", "train/dfl_loss", "metrics/precision(B)", "metrics/recall(B)",
    "metrics/mAP50(B)", "metrics/mAP50-95(B)", "val/box_loss", "val/cls_loss", "val/dfl_loss", "lr/pg0",
)  # fmt: skip


def _map(e: int, best: int | None) -> float:
    """mAP50-95 that rises to epoch ``best`` and then falls slowly (None: rises to the end)."""
    if best is None or e <= best:
        return 0.1 + 0.4 * e / 100
    return 0.1 + 0.4 * best / 100 - (e - best) / 2000


def _results_csv(folder: Path, epochs: int, best: int | None = None, name: str = "results.csv") -> Path:
    """Ultralytics 8.3 ``engine/trainer.py`` save_metrics: ``epoch`` (from 1) then the keys, no padding."""
    lines = [",".join(("epoch", *KEYS))]
    for e in range(1, epochs + 1):
        m = _map(e, best)
        vals = (1.5 - e / 200, 1.2 - e / 250, 1.1 - e / 300, 0.6, 0.5, m + 0.2, m, 1.4, 1.1, 1.05, 0.001)
        lines.append(",".join([str(e), *(f"{v:.5g}" for v in vals)]))
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    path.write_text("\n".join(lines) + "\n")
    return path


def _args(folder: Path, text: str, name: str = "args.yaml") -> None:
    (folder / name).write_text(text)


def _analyze(path: Path) -> Report:
    return pipeline.analyze(pipeline.load(str(path)))


def _codes(report: Report) -> set[str]:
    return {f.code for f in report.findings}


def test_args_yaml_gives_the_plan_and_a_stop_before_it_is_a_warning(tmp_path: Path) -> None:
    path = _results_csv(tmp_path / "train5", 50)
    _args(tmp_path / "train5", "task: pose\nmode: train\nepochs: 100\ntime: null\npatience: 100\nbatch: 16\n")
    report = _analyze(path)
    st = report.meta.structure
    assert st is not None
    assert (st.planned, st.planned_source, st.ending) == (100, "args.yaml", "stopped")
    assert "LD016" in _codes(report)
    assert any("args.yaml beside the log: epochs 100, patience 100" in n for n in report.meta.notes)
    doc = json.loads(JsonRenderer().render(report))
    jsonschema.validate(doc, json.loads(files("logdoctor").joinpath("schema/report.schema.json").read_text()))


def test_without_args_yaml_the_plan_is_unknown_and_nothing_is_claimed(tmp_path: Path) -> None:
    report = _analyze(_results_csv(tmp_path / "train5", 50))
    st = report.meta.structure
    assert st is not None and (st.planned, st.ending) == (None, "unknown")
    assert "LD016" not in _codes(report)


def test_a_finished_run_with_its_args_yaml_stays_silent(tmp_path: Path) -> None:
    path = _results_csv(tmp_path / "train", 60)
    _args(tmp_path / "train", "epochs: 60\npatience: 100\n")
    report = _analyze(path)
    st = report.meta.structure
    assert st is not None and st.ending == "finished"
    assert report.status == "ok"


def test_early_stopping_is_recognised_from_the_metric_it_watches(tmp_path: Path) -> None:
    """The best mAP exactly ``patience`` epochs before the end: Ultralytics' EarlyStopping stopped it."""
    path = _results_csv(tmp_path / "train14", 80, best=50)
    _args(tmp_path / "train14", "epochs: 400\npatience: 30\n")
    report = _analyze(path)
    st = report.meta.structure
    assert st is not None and st.ending == "early_stopped"
    assert st.ending_source is not None and st.ending_source.startswith("patience 30: best metrics_map50")
    assert "LD016" not in _codes(report)
    # one epoch more since the best than the patience: no early stop, a silent one
    path = _results_csv(tmp_path / "train15", 81, best=50)
    _args(tmp_path / "train15", "epochs: 400\npatience: 30\n")
    st = _analyze(path).meta.structure
    assert st is not None and st.ending == "stopped"


def test_opt_yaml_of_yolov5(tmp_path: Path) -> None:
    _results_csv(tmp_path / "exp20", 197)
    _args(tmp_path / "exp20", "weights: yolov5s.pt\nepochs: 300\nbatch_size: 16\nresume: true\n", "opt.yaml")
    st = pipeline.load(str(tmp_path / "exp20" / "results.csv")).meta.structure
    assert (st.planned, st.planned_source, st.ending) == (300, "opt.yaml", "stopped")


def test_garbage_time_plans_and_other_file_names_are_ignored(tmp_path: Path) -> None:
    folder = tmp_path / "run"
    path = _results_csv(folder, 20)
    _args(folder, "\x00\x01 not yaml [[[\n")
    plan = read_sidecar(path)
    assert plan is not None and plan.epochs is None and "states no 'epochs: N'" in plan.note
    assert pipeline.load(str(path)).meta.structure.planned is None
    _args(folder, "epochs: many\n")
    assert read_sidecar(path).epochs is None  # type: ignore[union-attr]
    _args(folder, "epochs: 100\ntime: 2.5\n")  # Ultralytics: a time budget replaces the epochs
    assert read_sidecar(path).epochs is None  # type: ignore[union-attr]
    _args(folder, "epochs: 100\n" + "# pad\n" * MAX_BYTES)
    assert "not read" in read_sidecar(path).note  # type: ignore[union-attr]
    _args(folder, "epochs: 100\n")
    other = _results_csv(folder, 20, name="metrics.csv")
    assert read_sidecar(other) is None  # only the writers' own tables look beside themselves
    assert pipeline.load(str(other)).meta.structure.planned is None


def test_real_run_folders() -> None:
    """Public run folders of the blind corpus (dev), fetched with their sidecars; skipped without the cache."""
    for name, planned, ending in (
        ("ultralytics_yolo11pose_hand_stopped_50of100_results.csv", 100, "stopped"),
        ("yolov5_numberdetect_exp20_resumed_stopped_197of300_results.csv", 300, "stopped"),
        ("ultralytics_yolo11fork_train14_early_stop_results.csv", 400, "early_stopped"),
    ):
        folder = blind_log(name).parent / f"{name}.run"
        if not (folder / "results.csv").is_file():
            continue  # fetched before sidecars were (python bench/blind/corpus.py fetch)
        st = pipeline.load(str(folder / "results.csv")).meta.structure
        assert (st.planned, st.ending) == (planned, ending), name
