"""Console epoch tables (YOLOv5 / Ultralytics ``train.py`` stdout): a header of column names, ``e/N`` rows
redrawn by tqdm, ``all`` validation rows; written here with the writers' own format strings."""

from __future__ import annotations

from pathlib import Path

import pytest

from logdoctor import pipeline
from logdoctor.ingest.parsers import sniff
from logdoctor.ingest.sources import open_source
from tests.unit.blindcache import blind_log

BAR = "\u2588" * 10


def _bar(desc: str, n: int, total: int) -> str:
    """One tqdm drawing (default ``{l_bar}{bar}{r_bar}``) of ``desc`` at batch ``n`` of ``total``."""
    pct = 100 * n // total
    return f"{desc}: {pct:3d}%|{BAR[: pct // 10]:10s}| {n}/{total} [00:0{n}<00:00,  3.12it/s]"


def _epoch(row: str, total: int = 4) -> str:
    """A batch loop's output: the bar redrawn with ``\\r`` at each batch; only the last write is complete."""
    return "\r".join(_bar(row, n, total) for n in range(total + 1)) + "\n"


def _v50(epochs: int, ran: int, box: float = 0.1) -> str:
    """YOLOv5 v5.0: train.py:274 header, :325-327 rows (``e/{epochs-1}``, total column), test.py:96, 228."""
    out = [f"Starting training for {epochs} epochs...\n"]
    for e in range(ran):
        out.append(("\n" + "%10s" * 8) % ("Epoch", "gpu_mem", "box", "obj", "cls", "total", "labels", "img_size"))
        out.append("\n")
        b, o, c = box - e / 100, 0.03, 0.01
        out.append(_epoch(("%10s" * 2 + "%10.4g" * 6) % (f"{e}/{epochs - 1}", "3.41G", b, o, c, b + o + c, 17, 640)))
        head = ("%20s" + "%12s" * 6) % ("Class", "Images", "Labels", "P", "R", "mAP@.5", "mAP@.5:.95")
        out.append(_epoch(head, 2))
        out.append(("%20s" + "%12i" * 2 + "%12.3g" * 4) % ("all", 128, 929, 0.5, 0.4, 0.3 + e / 100, 0.1) + "\n")
    return "".join(out)


def _v70(epochs: int, ran: int, done: bool) -> str:
    """YOLOv5 v7.0: train.py header ``%11s * 7`` with GPU_mem/box_loss/Instances/Size, rows :333, val.py:190, 281."""
    out = [f"Starting training for {epochs} epochs...\n"]
    for e in range(ran):
        names = ("Epoch", "GPU_mem", "box_loss", "obj_loss", "cls_loss", "Instances", "Size")
        out.append(("\n" + "%11s" * 7) % names + "\n")
        out.append(
            _epoch(("%11s" * 2 + "%11.4g" * 5) % (f"{e}/{epochs - 1}", "3.77G", 0.1 - e / 200, 0.06, 0.02, 214, 640))
        )
        head = ("%22s" + "%11s" * 6) % ("Class", "Images", "Instances", "P", "R", "mAP50", "mAP50-95")
        out.append(_epoch(head, 2))
        out.append(("%22s" + "%11i" * 2 + "%11.3g" * 4) % ("all", 128, 929, 0.6, 0.5, 0.5 + e / 100, 0.3) + "\n")
    if done:
        out.append(f"\n{ran} epochs completed in 0.011 hours.\n\nValidating runs/train/exp/weights/best.pt...\n")
        out.append(("%22s" + "%11i" * 2 + "%11.3g" * 4) % ("all", 128, 929, 0.9, 0.9, 0.9, 0.9) + "\n")
    return "".join(out)


def _ultralytics(epochs: int, ran: int) -> str:
    """Ultralytics 8.3 (engine/trainer.py:413-421, ``{epoch + 1}/{epochs}``; detect/train.py:113-121;
    segment/val.py:57): no ``Starting training`` line here, the counter's base is read from ``N/N``."""
    out = []
    for e in range(1, ran + 1):
        names = ("Epoch", "GPU_mem", "box_loss", "seg_loss", "cls_loss", "dfl_loss", "Instances", "Size")
        out.append(("\n" + "%11s" * 8) % names + "\n")
        row = ("%11s" * 2 + "%11.4g" * 6) % (f"{e}/{epochs}", "2.61G", 1.2 - e / 50, 2.3, 1.4, 1.1, 12, 640)
        out.append(_epoch(row))
        head = ("%22s" + "%11s" * 10) % (
            "Class", "Images", "Instances", "Box(P", "R", "mAP50", "mAP50-95)", "Mask(P", "R", "mAP50", "mAP50-95)"
        )  # fmt: skip
        out.append(_epoch(head, 1))
        vals = (0.6, 0.8, 0.8, 0.6, 0.6, 0.8, 0.8, 0.5 + e / 100)
        out.append(("%22s" + "%11i" * 2 + "%11.3g" * 8) % ("all", 4, 17, *vals) + "\n")
    return "".join(out)


def _write(tmp: Path, text: str) -> Path:
    path = tmp / "train_stdout.txt"
    path.write_text(text)
    return path


def test_v50_rows_are_read_with_their_total_plan_and_evaluations(tmp_path: Path) -> None:
    path = _write(tmp_path, _v50(3, 3))
    assert sniff(open_source(str(path))).name == "epoch_table"
    run = pipeline.load(str(path))
    st = run.meta.structure
    assert run.table["step"].to_list() == [1, 2, 3]  # epochs done; the counter counts from 0
    assert run.table["loss"].to_list() == pytest.approx([0.14, 0.13, 0.12], rel=1e-3)  # the total column
    assert (st.planned, st.ending) == (3, "finished")
    assert run.evals["metrics_map_0_5"].to_list() == pytest.approx([0.3, 0.31, 0.32])
    assert run.evals["step"].to_list() == [1, 2, 3]


def test_v70_parts_are_summed_and_a_stop_before_the_plan_is_seen(tmp_path: Path) -> None:
    run = pipeline.load(str(_write(tmp_path, _v70(10, 4, done=False))))
    st = run.meta.structure
    assert run.table["loss"][0] == pytest.approx(0.1 + 0.06 + 0.02)  # utils/loss.py: lbox + lobj + lcls
    assert any("their sum" in n for n in run.meta.notes)
    assert (st.last_step, st.planned, st.ending) == (4, 10, "stopped")
    assert run.evals.height == 4


def test_the_final_validation_of_saved_weights_is_no_evaluation_of_an_epoch(tmp_path: Path) -> None:
    run = pipeline.load(str(_write(tmp_path, _v70(3, 3, done=True))))
    assert run.evals["metrics_map50"].to_list() == pytest.approx([0.5, 0.51, 0.52])  # not the 0.9 of best.pt
    assert run.meta.structure.ending == "finished"


def test_a_healthy_finished_run_is_silent(tmp_path: Path) -> None:
    report = pipeline.analyze(pipeline.load(str(_write(tmp_path, _v70(6, 6, done=True)))))
    assert report.status == "ok"


def test_ultralytics_counts_from_one_and_names_box_and_mask_metrics(tmp_path: Path) -> None:
    run = pipeline.load(str(_write(tmp_path, _ultralytics(5, 5))))
    st = run.meta.structure
    assert run.table["step"].to_list() == [1, 2, 3, 4, 5]
    assert (st.planned, st.ending) == (5, "finished")
    assert run.table["loss"][0] == pytest.approx(1.18 + 2.3 + 1.4 + 1.1)  # v8SegmentationLoss: loss.sum()
    assert run.evals["metrics_map50_95_m"].to_list() == pytest.approx([0.51, 0.52, 0.53, 0.54, 0.55])


def test_bars_redrawn_after_an_erase_line_code_are_read(tmp_path: Path) -> None:
    """Ultralytics' own progress bar (8.3.1xx on, ``utils/tqdm.py``) starts every drawing with ``\\r\\x1b[K``,
    also into a file: the cells are read with the code removed, as a coloured line's are."""
    text = "\n".join(
        "\r\x1b[K" + line.replace("\r", "\r\x1b[K") if "%|" in line else line for line in _ultralytics(5, 5).split("\n")
    )
    path = _write(tmp_path, text)
    assert sniff(open_source(str(path))).name == "epoch_table"
    run = pipeline.load(str(path))
    assert run.table["step"].to_list() == [1, 2, 3, 4, 5]
    assert run.meta.structure.planned == 5


@pytest.mark.parametrize(
    "text",
    [
        "Epoch loss acc lr\n1 0.5 0.9 0.01\n2 0.4 0.9 0.01\n",  # no e/N counter
        "\x1b[1mEpoch loss acc lr\x1b[0m\n\r\x1b[K1 0.5 0.9 0.01\n",  # coloured, still no e/N counter
        "Epoch gpu_mem box obj\n0/9 1G 0.1\n",  # a row shorter than its header
        "0/9 1G 0.1 0.2 0.3 0.6 17 640\n",  # rows without a header
    ],
)
def test_tables_without_a_header_and_counter_are_left_to_other_readers(tmp_path: Path, text: str) -> None:
    assert sniff(open_source(str(_write(tmp_path, text)))).name != "epoch_table"


def test_real_yolov5_stdout() -> None:
    """A public CPU run of YOLOv5 (2022-7-28, the v6.x header): bench/blind manifest; skipped without the cache."""
    run = pipeline.load(str(blind_log("yolov5_stdout_insect_cpu_10ep.txt")))
    st = run.meta.structure
    assert (run.meta.format, st.rows, st.planned, st.ending) == ("epoch_table", 10, 10, "finished")
    assert run.evals["metrics_map_0_5"][-1] == pytest.approx(0.247)
    assert run.table["loss"][0] == pytest.approx(0.05812 + 0.02423 + 0.09789)


def test_a_crash_after_the_last_epoch_row_ends_the_run(tmp_path: Path) -> None:
    """The failure events of the console are read as in any text log (ingest/parsers/events.py)."""
    crash = (
        'Traceback (most recent call last):\n  File "train.py", line 630, in <module>\n    main(opt)\n'
        "torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 20.00 MiB\n"
    )
    report = pipeline.analyze(pipeline.load(str(_write(tmp_path, _v70(10, 4, done=False) + crash))))
    assert report.meta.structure.ending == "crashed"
    assert "LD010" in {f.code for f in report.findings}
    stopped = _v70(10, 4, done=False) + "^CTraceback (most recent call last):\nKeyboardInterrupt\n"
    assert pipeline.load(str(_write(tmp_path, stopped))).meta.structure.ending == "interrupted"


def test_a_launch_appended_to_the_same_console_keeps_its_own_rows(tmp_path: Path) -> None:
    """``python train.py >> train.log`` twice: the second launch counts its epochs from 0 again. Its rows
    must not overwrite the first launch's (they are another run), and the first launch's crash is its
    own ending, listed with the launches (LD018) and reported for that run."""
    crash = (
        'Traceback (most recent call last):\n  File "train.py", line 630, in <module>\n    main(opt)\n'
        "torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 20.00 MiB\n"
    )
    path = _write(tmp_path, _v70(10, 3, done=False) + crash + _v70(10, 10, done=True))
    run = pipeline.load(str(path))
    assert run.meta.structure.rows == 13  # 3 rows of launch 1, 10 of launch 2
    assert run.meta.structure.ending == "finished"  # the last launch's own ending
    report = pipeline.analyze(run)
    assert "LD018" in {f.code for f in report.findings}
    assert report.status == "error"  # the earlier launch's crash is in the headline
    # one launch whose bar redraws the same epoch is still one launch (no LD018)
    single = pipeline.analyze(pipeline.load(str(_write(tmp_path, _v70(6, 6, done=True)))))
    assert "LD018" not in {f.code for f in single.findings}
