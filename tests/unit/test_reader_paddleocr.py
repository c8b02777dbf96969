"""PaddleOCR ``train.log`` (and a PaddleDetection log), written in its own format: the plan from the
config dump's ``epoch_num`` and the ``epoch: [e/N]`` counter, ``cur metric, ...`` lines read as
evaluations (``best metric`` is not), launches that printed their config and never stepped."""

from __future__ import annotations

from pathlib import Path

import pytest

from logdoctor import pipeline
from logdoctor.model import Severity
from tests.unit.blindcache import blind_log

_T = "[2024/08/08 05:35:47] ppocr INFO: "


def _dump(epoch_num: int, every: int) -> list[str]:
    """ppocr/utils/utility.py print_dict: ``'{}{} : {}'.format(delimiter * ' ', k, v)``, nested keys
    indented by 4; then tools/program.py preprocess's ``train with paddle ...`` line."""
    return [
        f"{_T}Architecture : ",
        f"{_T}    algorithm : SVTR",
        f"{_T}Global : ",
        f"{_T}    cal_metric_during_train : True",
        f"{_T}    epoch_num : {epoch_num}",
        f"{_T}    eval_batch_step : [0, {every}]",
        f"{_T}    log_smooth_window : 20",
        f"{_T}    print_batch_step : 1",
        f"{_T}Train : ",
        f"{_T}    loader : ",
        f"{_T}        batch_size_per_card : 20",
        f"{_T}        shuffle : True",
        f"{_T}train with paddle 2.6.1 and device Place(gpu:0)",
        f"{_T}train dataloader has 4 iters",
        f"{_T}During the training process, after the 0th iteration, an evaluation is run every {every} iterations",
    ]


def _log(
    epochs: int,
    upto: int | None = None,
    acc: list[float] | None = None,
    per: int = 4,
    every: int = 8,
    false_starts: int = 0,
) -> str:
    """tools/program.py train(): ``'epoch: [{}/{}], global_step: {}, {}, avg_reader_cost: {:.5f} s,
    avg_batch_cost: {:.5f} s, avg_samples: {}, ips: {:.5f} samples/s, eta: {}'`` every step; at each
    ``eval_batch_step`` ``'cur metric, {}'`` of the metric dict then ``'best metric, {}'``; the
    ``latest`` checkpoint saved after each epoch. ``acc``: the evaluation accuracy, one per evaluation."""
    out = [line for _ in range(false_starts) for line in (*_dump(epochs, every), f"{_T}train dataloader has 0 iters")]
    out += _dump(epochs, every)
    step, n_eval, best = 0, 0, 0.0
    for ep in range(1, (upto or epochs) + 1):
        for _ in range(per):
            step += 1
            loss = 100.0 / step + 0.5
            out.append(
                f"{_T}epoch: [{ep}/{epochs}], global_step: {step}, lr: 0.000500, acc: 0.000000, "
                f"norm_edit_dis: 0.100000, CTCLoss: {loss - 0.1:.6f}, SARLoss: 0.100000, loss: {loss:.6f}, "
                "avg_reader_cost: 0.30000 s, avg_batch_cost: 0.40000 s, avg_samples: 8.0, "
                "ips: 20.00000 samples/s, eta: 0:00:40"
            )
            if step % every == 0:
                a = acc[n_eval] if acc is not None else 0.5
                n_eval += 1
                out.append(f"{_T}cur metric, acc: {a}, norm_edit_dis: {0.3 + a / 2 + n_eval / 50}, fps: 400.0")
                best = max(best, a)
                out.append(f"{_T}best metric, acc: {best}, is_float16: False, norm_edit_dis: 0.5, best_epoch: {ep}")
        out.append(f"{_T}save model in ./output/rec/latest")
    if upto is None:
        out.append(f"{_T}best metric, acc: {best}, is_float16: False, norm_edit_dis: 0.5, best_epoch: {epochs}")
    return "\n".join(out) + "\n"


def _load(tmp: Path, text: str):
    path = tmp / "train.log"
    path.write_text(text)
    return pipeline.load(str(path))


def _codes(run) -> set[str]:
    return {f.code for f in pipeline.analyze(run).findings}


def test_the_plan_is_epoch_num_and_a_finished_run_is_silent(tmp_path: Path) -> None:
    acc = [0.2, 0.4, 0.55, 0.62, 0.7, 0.74, 0.77, 0.8, 0.81, 0.83]
    run = _load(tmp_path, _log(20, acc=acc))
    st = run.meta.structure
    assert (st.planned_epochs, st.planned, st.last_step, st.ending) == (20, 80, 80, "finished")
    assert run.evals["val_acc"].to_list() == acc  # the cur metric lines, not the best metric ones
    assert all(f.severity < Severity.WARNING for f in pipeline.analyze(run).findings)  # healthy: silent


def test_a_run_that_ends_before_its_epoch_num_is_stopped(tmp_path: Path) -> None:
    st = _load(tmp_path, _log(500, upto=42, per=10, every=100)).meta.structure
    assert (st.planned_epochs, st.last_step, st.ending) == (500, 420, "stopped")


def test_accuracy_zero_at_every_evaluation_is_a_collapse(tmp_path: Path) -> None:
    """Exact-match acc 0 at every evaluation while the partial credit (norm_edit_dis, a similarity:
    higher is better) of the same predictions rises: predictions never right, not an output the
    model lacks (evalmetrics' sibling rule is for another head's score of the same kind)."""
    run = _load(tmp_path, _log(20, acc=[0.0] * 10))
    assert run.evals["val_acc"].to_list() == [0.0] * 10
    assert run.evals["norm_edit_dis"].to_list()[-1] > run.evals["norm_edit_dis"].to_list()[0]
    assert "LD413" in _codes(run)


def test_accuracy_zero_at_every_evaluation_of_a_run_stopped_early_is_not_judged_yet(tmp_path: Path) -> None:
    """The same 10 evaluations at 0 in a run stopped at epoch 20 of 40: it had not had its training, and a
    score trained from scratch may sit at 0 longer than that at its start (evalmetrics' null: 16)."""
    run = _load(tmp_path, _log(40, upto=20, acc=[0.0] * 10))
    assert run.meta.structure.ending == "stopped"
    assert "LD413" not in _codes(run)


def test_accuracy_zero_at_the_first_evaluation_then_rising_is_no_collapse(tmp_path: Path) -> None:
    acc = [0.0, 0.0, 0.1, 0.3, 0.45, 0.6, 0.66, 0.7, 0.72, 0.75]
    run = _load(tmp_path, _log(20, acc=acc))
    assert "LD413" not in _codes(run)


def test_a_loop_current_epoch_num_is_no_plan(tmp_path: Path) -> None:
    """``epoch_num: 3, loss: ...`` on a step line counts epochs; only a dump line ending with it is a plan."""
    lines = [f"step: {s}, epoch_num: {1 + s // 10}, loss: {5 - s / 100:.3f}" for s in range(1, 60)]
    st = _load(tmp_path, "\n".join(lines) + "\n").meta.structure
    assert st.planned_epochs is None


@pytest.mark.parametrize(
    ("name", "planned_epochs", "last_step", "ending"),
    [
        ("paddleocr_svtr_rec_three_launches_acc0.log", 20, 80, "finished"),
        ("paddleocr_carplate_rec_ten_false_starts_stopped_42of500.log", 500, 60540, "stopped"),
    ],
)
def test_real_paddleocr_logs(name: str, planned_epochs: int, last_step: int, ending: str) -> None:
    run = pipeline.load(str(blind_log(name)))
    st = run.meta.structure
    assert (st.planned_epochs, st.last_step, st.ending) == (planned_epochs, last_step, ending)


def test_real_paddleocr_accuracy_zero_at_every_evaluation() -> None:
    """Its truth: acc exactly 0.0 at every evaluation of the last launch (no_learning)."""
    run = pipeline.load(str(blind_log("paddleocr_svtr_rec_three_launches_acc0.log")))
    assert run.evals["val_acc"].to_list() == [0.0] * 4
    assert "LD413" in _codes(run)


def test_the_dump_alone_states_the_plan() -> None:
    """The config dump's ``epoch_num : N`` is the planned epochs even before any step line."""
    import polars as pl

    from logdoctor.ingest.parsers.lines import LINE, LINE_NO
    from logdoctor.ingest.parsers.markers import scan_markers

    lines = [*_dump(1200, 2000), *_dump(500, 2000)]
    m = scan_markers(pl.DataFrame({LINE_NO: list(range(1, len(lines) + 1)), LINE: lines}))
    assert (m.epochs_planned, m.epochs_planned_source) == (500, "config")
    assert [v for f, _, v in m.plans if f == "epochs_planned"] == [1200, 500]


def _launches(run) -> dict[str, str]:
    found = [f for f in pipeline.analyze(run).findings if f.code == "LD018"]
    return {k: str(v) for k, v in found[0].evidence.items()} if found else {}


def test_launches_that_print_their_config_and_never_step_are_launches(tmp_path: Path) -> None:
    run = _load(tmp_path, _log(20, acc=[0.2, 0.4, 0.5, 0.6, 0.7, 0.75, 0.8, 0.82, 0.84, 0.85], false_starts=3))
    ev = _launches(run)
    assert ev["launches"] == "4" and len(ev["stepless_launch_lines"].split(",")) == 3
    st = run.meta.structure
    assert (st.ending, st.last_step) == ("finished", 80)  # the launch that trained is the report's


def _startup(dumps: int) -> list[str]:
    """A banner (detectron2's ``Rank of current process`` / ``Environment info`` / ``Command line
    arguments``) then ``dumps`` copies of one YAML config (its file, then the full config)."""
    out = [
        "[08/30 23:00:05] detectron2 INFO: Rank of current process: 0. World size: 1",
        "[08/30 23:00:05] detectron2 INFO: Environment info:",
        "[08/30 23:00:05] detectron2 INFO: Command line arguments: Namespace(config_file='a.yaml')",
    ]
    for _ in range(dumps):
        out += ["[08/30 23:00:05] detectron2 INFO: Running with full config:", "SOLVER:", "  BASE_LR: 0.0001"]
        out += ["  MAX_ITER: 2000", "  CHECKPOINT_PERIOD: 5000", "  IMS_PER_BATCH: 16"]
    return out


def _plan_lines(lines: list[str]) -> tuple[int, ...]:
    return tuple(i for i, line in enumerate(lines, 1) if "MAX_ITER" in line)


def _stepless(lines: list[str]) -> list[tuple[int, int]]:
    import numpy as np
    import polars as pl

    from logdoctor.ingest.parsers.lines import LINE, LINE_NO
    from logdoctor.ingest.parsers.stepless import stepless_launches

    rows = [
        *lines,
        *(f"[08/30 23:00:36] d2.utils.events INFO:  iter: {i}  total_loss: 7.5" for i in range(19, 200, 20)),
    ]
    frame = pl.DataFrame({LINE_NO: list(range(1, len(rows) + 1)), LINE: rows})
    return [
        (e.block_line, e.line)
        for e in stepless_launches(frame, np.arange(len(lines) + 1, len(rows) + 1), _plan_lines(lines))
    ]


def test_a_process_that_dumps_its_config_twice_is_one_launch() -> None:
    assert _stepless(_startup(2)) == []


def test_its_banner_printed_again_before_a_step_is_another_launch() -> None:
    first = _startup(2)
    assert _stepless([*first, *_startup(2)]) == [(1, len(first))]


def test_processes_of_one_launch_that_print_the_same_opening_are_no_launches() -> None:
    """A launcher's processes each print the opening (a JIT extension build) but state no plan."""
    build = [
        "Using /root/.cache/torch_extensions as PyTorch extensions root...",
        "Detected CUDA files, patching ldflags",
    ]
    build.append("Emitting ninja build file /root/.cache/torch_extensions/build.ninja...")
    assert _stepless([*build, "[launch.py:158:main] Setting CUDA_VISIBLE_DEVICES=0", *build, *_startup(1)]) == []


def test_a_launch_that_printed_its_failure_is_not_listed_twice() -> None:
    import numpy as np
    import polars as pl

    from logdoctor.ingest.parsers.lines import LINE, LINE_NO
    from logdoctor.ingest.parsers.stepless import stepless_launches

    lines = [*_startup(1), *_startup(1), "[08/30 23:00:36] d2.utils.events INFO:  iter: 19  total_loss: 7.5"]
    frame = pl.DataFrame({LINE_NO: list(range(1, len(lines) + 1)), LINE: lines})
    assert stepless_launches(frame, np.array([len(lines)]), _plan_lines(lines), failed=(5,)) == ()


def test_paddleocr_metric_directions() -> None:
    """RecMetric's norm_edit_dis is 1 - the normalised edit distance, DetMetric's hmean an F-score: both up."""
    from logdoctor import vocab

    assert vocab.direction("norm_edit_dis") == vocab.Direction.UP
    assert vocab.direction("hmean") == vocab.Direction.UP
    assert vocab.direction("edit_dis") is None  # a distance named alone says no direction


def test_real_paddledetection_log_reads_its_epoch_counter_and_stays_silent() -> None:
    """PaddleDetection's LogPrinter ``Epoch: [e] [i/N]`` (ppdet/engine/callbacks.py): 72 epochs read,
    no plan in the log (cfg.epoch is not printed), a healthy finished run: no warning."""
    run = pipeline.load(str(blind_log("paddledet_rtdetr_ssdd_72ep_finished.log")))
    assert run.meta.structure.epochs == 72 and run.meta.structure.planned is None
    assert all(f.severity < Severity.WARNING for f in pipeline.analyze(run).findings)


def test_a_launch_between_two_that_trained_is_a_stepless_launch_too() -> None:
    """A launch that printed its opening and plan, then nothing, between two launches that trained:
    found where the opening is printed again after the first row, not only before it."""
    import numpy as np
    import polars as pl

    from logdoctor.ingest.parsers.lines import LINE, LINE_NO
    from logdoctor.ingest.parsers.stepless import stepless_launches

    def rows(n: int) -> list[str]:
        return [f"[08/30 23:00:36] d2.utils.events INFO:  iter: {i}  total_loss: 7.5" for i in range(19, n, 20)]

    lines = [*_startup(1), *rows(100), *_startup(1), *_startup(1), *rows(200)]
    frame = pl.DataFrame({LINE_NO: list(range(1, len(lines) + 1)), LINE: lines})
    trained = np.array([i for i, line in enumerate(lines, 1) if "iter:" in line])
    gap = len(_startup(1)) + len(rows(100))  # the stepless launch's first line is gap + 1
    found = [(e.block_line, e.line) for e in stepless_launches(frame, trained, _plan_lines(lines))]
    assert found == [(gap + 1, gap + len(_startup(1)))]
    # the same log without the launch in between: the two that trained are no stepless launch
    both = [*_startup(1), *rows(100), *_startup(1), *rows(200)]
    frame = pl.DataFrame({LINE_NO: list(range(1, len(both) + 1)), LINE: both})
    trained = np.array([i for i, line in enumerate(both, 1) if "iter:" in line])
    assert stepless_launches(frame, trained, _plan_lines(both)) == ()


def test_a_stepless_launch_between_two_runs_is_listed_and_ends_no_run(tmp_path: Path) -> None:
    """End to end: the launch in between is LD018's third launch, and the run before it stopped before
    its plan with no message (it is not said to have crashed at the later launch's lines)."""

    def rows(n: int) -> list[str]:
        return [
            f"[08/30 23:00:36] d2.utils.events INFO:  iter: {i}  total_loss: {7.5 - i / 1000:.3f}  lr: 0.0001"
            for i in range(19, n, 20)
        ]

    run = _load(tmp_path, "\n".join([*_startup(1), *rows(1000), *_startup(1), *_startup(1), *rows(2000)]) + "\n")
    report = pipeline.analyze(run)
    ev = _launches(run)
    gap = len(_startup(1)) + len(rows(1000))
    assert ev["launches"] == "3" and ev["stepless_launch_lines"] == str(gap + 1)
    assert [p.ending for p in report.earlier_runs if p.rows] == ["stopped"]
    assert not any(f.code == "LD010" for p in report.earlier_runs for f in p.findings)
    assert (run.meta.structure.ending, report.status) == ("finished", "ok")
