"""The text parser reads each tool's style with the right values, and refuses what is not a log."""

from __future__ import annotations

import json
import math
import re
from pathlib import Path

import numpy as np
import polars as pl
import pytest

from fixtures.gen_text_formats import STYLES
from logdoctor import pipeline
from logdoctor.errors import InputError, ParseError
from logdoctor.ingest.aliases import FieldMap
from logdoctor.ingest.parsers import PARSERS
from logdoctor.ingest.parsers.text import TextParser
from logdoctor.ingest.sources import open_source

FORMATS = Path(__file__).resolve().parents[2] / "fixtures" / "formats"
TRUTHS = [FORMATS / f"{name}.truth.json" for name in STYLES]
CANONICAL = (
    "step 254/52000 | loss=4.6012 acc=0.0312 lr=3.0e-04 grad_norm=1.23 tok/s=25100 epoch=0 | "
    "batch: n_seq=12 tokens=7904 len_mean=658.7 len_min=610 len_max=700 pad_frac=0.035 "
    "batch_fp=3f2a9c1d"
)


def _write(tmp_path: Path, text: str | bytes, name: str = "run.log") -> str:
    path = tmp_path / name
    path.write_bytes(text.encode() if isinstance(text, str) else text)
    return str(path)


def _same(got: object, want: object) -> bool:
    if isinstance(want, float) and isinstance(got, float):
        return math.isclose(got, want, rel_tol=1e-9) or (math.isnan(want) and math.isnan(got))
    return got == want


@pytest.mark.parametrize("truth_path", TRUTHS, ids=[p.name.split(".")[0] for p in TRUTHS])
def test_fixture_matches_truth(truth_path: Path) -> None:
    truth = json.loads(truth_path.read_text())
    run = pipeline.load(str(truth_path.with_name(truth_path.name.replace(".truth.json", ".log"))))
    table = run.table
    assert run.meta.format == "text"
    assert run.n_steps == truth["steps"]
    assert (table["step"][0], table["step"][-1]) == (truth["first_step"], truth["last_step"])
    assert run.meta.total_steps == truth["total_steps"]
    assert run.evals.height == truth["evals"]
    assert int(table["loss"].is_nan().sum() + table["loss"].is_infinite().sum()) == truth.get("nonfinite", 0)
    assert run.meta.skip_reasons.get("no loss value", 0) >= truth.get("skipped_no_loss", 0)
    for row in truth["values"]:
        got = table.filter(pl.col("step") == row["step"]).row(0, named=True)
        for key, want in row.items():
            assert _same(got[key], want), f"{key} at step {row['step']}: {got[key]} != {want}"


def test_canonical_line_types_and_values(tmp_path: Path) -> None:
    run = pipeline.load(_write(tmp_path, CANONICAL + "\n"))
    row = run.table.row(0, named=True)
    assert row["step"] == 254 and row["loss"] == 4.6012 and row["lr"] == 3.0e-4
    assert row["throughput"] == 25100 and row["seqs"] == 12 and row["tokens"] == 7904
    assert (row["len_mean"], row["len_min"], row["len_max"], row["pad_frac"]) == (
        658.7,
        610,
        700,
        0.035,
    )
    assert row["batch_fp"] == "3f2a9c1d"
    assert run.table.schema["batch_fp"] == pl.String
    assert all(run.table.schema[c] == pl.Float64 for c in run.table.columns if c not in ("step", "line_no", "batch_fp"))
    assert run.meta.total_steps == 52000


def test_eval_lines_go_to_evals_never_steps(tmp_path: Path) -> None:
    text = "\n".join(
        [
            "step 1 | loss=3.0",
            "eval step 1 | val_loss=2.31 val_acc=0.41",
            "step 2 | val_loss=2.2",
            "validation | step 2 | loss 2.5",
            "step 3 | loss=2.9 val_loss=2.1",
            " | valid | loss 9.6 | num_updates 3",
        ]
    )
    run = pipeline.load(_write(tmp_path, text + "\n"))
    assert run.table["step"].to_list() == [1, 3]
    assert run.table["loss"].to_list() == [3.0, 2.9]
    assert "val_loss" not in run.table.columns
    ev = run.evals
    assert ev["step"].to_list() == [1, 2, 2, 3, 3] and ev.schema["step"] == pl.Int64
    assert ev["val_loss"].to_list() == [2.31, 2.2, 2.5, 2.1, 9.6]
    assert run.meta.skip_reasons["eval line"] == 4


def test_false_positive_traps_are_not_steps(tmp_path: Path) -> None:
    text = "\n".join(
        [
            "config: max_steps=52000 warmup_steps=100 loss_scale=1.0",
            "for step in range(10): loss = step * 2",
            '    print(f"step {step}: loss {loss:.4f}")',
            "sample: the information about step 3 in the infinite story",
            "step 7 | loss=1.5",
        ]
    )
    run = pipeline.load(_write(tmp_path, text + "\n"))
    assert run.table["step"].to_list() == [7]
    assert run.meta.skip_reasons["source code / config"] >= 2


def test_only_traps_is_a_parse_error(tmp_path: Path) -> None:
    path = _write(tmp_path, "max_steps=52000\nfor step in range(9):\nthe information of step 4\n")
    with pytest.raises(ParseError, match="no training steps"):
        pipeline.load(path)


def test_nan_and_inf_losses_are_data(tmp_path: Path) -> None:
    text = "step 1 loss=nan\nstep 2 loss=inf\nstep 3 loss=-inf\nstep 4 loss=NaN\nstep 5 loss=2.0\n"
    run = pipeline.load(_write(tmp_path, text))
    loss = run.table["loss"].to_list()
    assert math.isnan(loss[0]) and loss[1] == math.inf and loss[2] == -math.inf and math.isnan(loss[3])
    assert loss[4] == 2.0 and not run.meta.skip_reasons


def test_missing_loss_line_is_skipped_with_reason(tmp_path: Path) -> None:
    text = " iteration 10/ 100 | learning rate: 1.0E-04 | loss scale: 1.0 |\n"
    text += " iteration 20/ 100 | learning rate: 1.0E-04 | lm loss: 2.5E+00 | loss scale: 1.0 |\n"
    run = pipeline.load(_write(tmp_path, text))
    assert run.table["step"].to_list() == [20] and run.table["loss"][0] == 2.5
    assert run.meta.skip_reasons == {"no loss value": 1}
    assert run.meta.total_steps == 100


def test_numbers_with_units_separators_and_percent(tmp_path: Path) -> None:
    text = "iter 5: loss 2.3104, time 20.1ms, mfu 5.2%, tokens 1,234,567\n"
    row = pipeline.load(_write(tmp_path, text)).table.row(0, named=True)
    assert (row["step"], row["loss"], row["time"], row["mfu"], row["tokens"]) == (
        5,
        2.3104,
        20.1,
        5.2,
        1234567,
    )


def test_user_map_override_names_the_loss(tmp_path: Path) -> None:
    path = _write(tmp_path, "step 1 | objective=0.7 loss=9\nstep 2 | objective=0.6 loss=9\n")
    run = pipeline.load(path, fields=FieldMap.parse(["loss=objective"]))
    assert run.table["loss"].to_list() == [0.7, 0.6]


def test_binary_and_empty_inputs_are_refused(tmp_path: Path) -> None:
    binary = _write(tmp_path, b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" * 50, "x.png")
    with pytest.raises(InputError, match="binary"):
        pipeline.load(binary)
    with pytest.raises(InputError, match="empty"):
        pipeline.load(_write(tmp_path, b"", "empty.log"))


def test_text_is_the_last_parser() -> None:
    assert isinstance(PARSERS[-1], TextParser)


def test_loss_records_without_steps_are_numbered_in_order(tmp_path: Path) -> None:
    text = "{'loss': 2.5, 'learning_rate': 5e-05, 'epoch': 0.1}\n" * 2
    text += "{'loss': 2.1, 'learning_rate': 4e-05, 'epoch': 0.3}\n{'train_runtime': 12.5}\n"
    run = pipeline.load(_write(tmp_path, text))
    assert run.table["step"].to_list() == [1, 2, 3]
    assert run.table["loss"].to_list() == [2.5, 2.5, 2.1]
    assert run.table["epoch"].to_list() == [0.1, 0.1, 0.3]
    assert any("record order" in n for n in run.meta.notes)


def test_stray_loss_in_a_config_is_not_a_run(tmp_path: Path) -> None:
    path = _write(tmp_path, "label smoothing loss: 0.1\nwarmup 100\n")
    with pytest.raises(ParseError, match="no training steps"):
        pipeline.load(path)


def test_steps_win_over_unstepped_loss_lines(tmp_path: Path) -> None:
    text = "loss: 9.0\nloss: 8.0\nloss: 7.0\nstep 1 loss=2.0\nstep 2 loss=1.5\n"
    run = pipeline.load(_write(tmp_path, text))
    assert run.table["step"].to_list() == [1, 2] and run.meta.skip_reasons["no step"] == 3


def test_gzip_log_reads_like_plain(tmp_path: Path) -> None:
    import gzip

    plain = (FORMATS / "megatron.log").read_bytes()
    gz = tmp_path / "megatron.log.gz"
    gz.write_bytes(gzip.compress(plain))
    a, b = pipeline.load(str(FORMATS / "megatron.log")), pipeline.load(str(gz))
    assert a.table.equals(b.table) and a.evals.equals(b.evals)


def test_no_steps_error_names_reasons_and_keys(tmp_path: Path) -> None:
    path = _write(tmp_path, "iteration 10 | lr: 0.1 | scale 4\niteration 20 | lr: 0.1\nhello\n")
    with pytest.raises(ParseError) as err:
        pipeline.load(path)
    msg = str(err.value)
    assert "no loss value: 2" in msg and "no step: 1" in msg and "keys seen: lr, scale, step" in msg
    assert "\n" not in msg


def test_numpy_and_torch_scalar_reprs_are_values(tmp_path: Path) -> None:
    text = "step 1 | loss=np.float64(2.5) acc=np.float32(0.25)\n"
    text += "step 2 | loss: tensor(2.25, device='cuda:0', grad_fn=<NllLossBackward0>)\n"
    run = pipeline.load(_write(tmp_path, text))
    assert run.table["loss"].to_list() == [2.5, 2.25]
    assert run.table["acc"].to_list()[0] == 0.25


def test_restart_markers_flag_the_next_step(tmp_path: Path) -> None:
    text = "Training started\nstep 1 loss=3\nstep 2 loss=2.9\n[2019-05-16] Training started\n"
    text += "step 3 loss=2.8\nstep 4 loss=2.7\nResuming training from checkpoint 4\nstep 5 loss=2\n"
    result = TextParser().parse(open_source(_write(tmp_path, text)), FieldMap())
    assert result.table["restart"].to_list() == [0, 0, 1, 0, 1]


def test_clean_keeps_the_message_column_on_an_empty_frame() -> None:
    """Regression: when the fast path takes every line, the rest is empty and still has ``msg``."""
    import polars as pl

    from logdoctor.ingest.parsers.lines import LINE, clean

    empty = pl.DataFrame({LINE: [], "line_no": []}, schema={LINE: pl.String, "line_no": pl.Int64})
    assert "msg" in clean(empty).columns


def test_end_of_training_summary_dict_is_not_a_step(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """ms-swift prints a final {'train_runtime': ..., 'train_loss': ...} dict with the last step's
    counter; it is a run average, not a step, and must not look like a resume."""
    from logdoctor import pipeline

    lines = [f"{{'loss': '{2 - i / 100:.3f}', 'global_step/max_steps': '{i}/3', 'epoch': '0.{i}'}}" for i in (1, 2, 3)]
    lines.append("{'train_runtime': '4426', 'train_loss': '1.206', 'global_step/max_steps': '3/3'}")
    log = tmp_path / "stdout.log"
    log.write_text("\n".join(lines) + "\n")
    run = pipeline.load(str(log))
    assert run.table["loss"].to_list() == [1.99, 1.98, 1.97]
    assert run.meta.resumes == 0 and run.meta.skip_reasons.get("run summary record") == 1


def test_torchtune_progress_bar_reads_epoch_and_global_step(tmp_path: Path) -> None:
    # torchtune's recipes set the tqdm description to ``{epoch + 1}|{global_step}|Loss: {loss}``
    # after ``pbar.update(1)``: each step is drawn twice (new count, old description; then the
    # new description), as in a public torchtune log; one row per global step, the bar's count no step
    losses = (1.9749605655670166, 2.0130014419555664, 2.1916301250457764)
    segs = ["  0%|          | 0/512 [00:00<?, ?it/s]"]
    for n, loss in enumerate(losses, start=1):
        segs.append(f"1|{n}|Loss: {loss}:   0%|          | {n}/512 [00:2{n}<4:02:59, 28.53s/it]")
        segs.append(f"1|{n}|Loss: {loss}:   0%|          | {n + 1}/512 [00:2{n}<1:43:37, 12.19s/it]")
    log = "INFO:torchtune.utils._logging:Loss is initialized.\n" + "\r".join(segs) + "\n"
    table = pipeline.load(_write(tmp_path, log)).table
    assert table["step"].to_list() == [1, 2, 3]
    assert table["loss"].to_list() == list(losses)
    assert table["epoch"].to_list() == [1, 1, 1]


def test_nemo_megatron_reduced_train_loss_is_the_loss(tmp_path: Path) -> None:
    # NeMo 2 / Megatron strategy progress lines (a public BioNeMo Evo2 fine-tune): the loss is
    # ``reduced_train_loss`` (the loss averaged over data-parallel ranks), ``global_step`` the step
    lines = [
        f"Training epoch 0, iteration {i}/9 | lr: {2e-05 * i:g} | global_batch_size: 4 | global_step: {i} | "
        f"reduced_train_loss: {1.3 - 0.01 * i:.4g} | train_step_timing in s: 0.25 | consumed_samples: {4 * i + 4}"
        for i in range(10)
    ]
    table = pipeline.load(_write(tmp_path, "\n".join(lines) + "\n")).table
    assert table["step"].to_list() == list(range(10))
    assert table["loss"].to_list() == [float(f"{1.3 - 0.01 * i:.4g}") for i in range(10)]


def _tqdm_hash_bars(n: int, desc: str = "Training") -> str:
    """tqdm bars split at ``\\r``, as the skin_lesion_classifier console prints them: a bar drawn
    with a digit (``|8  |``) beside bars of ``#`` and blanks only (``|#   |``). A ``desc`` that no
    progress-bar rewrite reads (textblocks) leaves the bar in the line, as the line's shape sees it."""
    out = []
    for i in range(n):
        k = 10 + 2 * i
        out.append(
            f"{desc}:   9%|8         | {k}/115 [00:32<05:37,  3.22s/it, acc=39.{i:02d}%, loss=2.{i}551]\r"
            f"{desc}:  10%|#         | {k + 1}/115 [00:38<05:17,  3.09s/it, acc=40.{i:02d}%, "
            f"loss=2.{i}589]\n"
        )
    return "".join(out)


def test_a_bar_of_hashes_never_shifts_a_value_under_another_key(tmp_path: Path) -> None:
    # issue 28: a literal ``#`` read as the shape's value mark put ``|#   |`` lines in the shape of
    # ``|8   |`` lines, one value short: the loss was read as acc and the loss as null
    table = pipeline.load(_write(tmp_path, _tqdm_hash_bars(5))).table
    hashed = table.filter(pl.col("acc") >= 40)
    assert hashed.height == 5
    assert hashed["loss"].to_list() == [2.0589, 2.1589, 2.2589, 2.3589, 2.4589]
    assert hashed["acc"].to_list() == [40.0, 40.01, 40.02, 40.03, 40.04]
    assert table["loss"].null_count() == 0
    assert table["loss"].is_between(2.0, 2.5).all()


@pytest.mark.parametrize("tag", ["Val", "Valid", "Eval", "Test"])
def test_a_tagged_tqdm_bar_is_a_step_and_its_eval_tag_an_eval_record(tmp_path: Path, tag: str) -> None:
    # issue 28 (skin_lesion_classifier): ``Epoch 001 [Train]:  10%|#  | 12/115 [...]`` is read like the
    # untagged ``Epoch N:`` bar (step = (epoch - 1) * 115 + n); the ``[Val]`` bars are evaluations
    text = _tqdm_hash_bars(3, "Epoch 002 [Train]") + (
        f"Epoch 002 [{tag}]  :   4%|4   | 1/25 [00:03<01:12,  3.01s/it, acc=56.25%, loss=1.0992]\r"
        f"Epoch 002 [{tag}]  :   8%|8   | 2/25 [00:06<01:09,  3.01s/it, acc=60.94%, loss=1.0890]\n"
    )
    run = pipeline.load(_write(tmp_path, text))
    t = run.table
    assert t["step"].to_list() == [125, 126, 127, 128, 129, 130]
    assert t["loss"].to_list() == [2.0551, 2.0589, 2.1551, 2.1589, 2.2551, 2.2589]
    assert t["acc"].to_list() == [39.0, 40.0, 39.01, 40.01, 39.02, 40.02]
    assert sorted(run.evals["val_loss"].to_list()) == [1.089, 1.0992]
    assert sorted(run.evals["val_acc"].to_list()) == [56.25, 60.94]


def test_a_bar_redrawn_at_the_same_count_is_one_step_not_an_interleaved_writer(tmp_path: Path) -> None:
    # tqdm redraws a bar at the same count when set_postfix changes its values (skin_lesion_classifier:
    # ``12/115 [00:38, loss=2.7589]`` then ``12/115 [00:41, loss=2.5619]``): one step, its last
    # drawing kept, not 115 repeated steps of "interleaved writers" (LD005)
    bars = "".join(
        f"Epoch 001 [Train]:  {k}%|#    | {k}/115 [00:{k:02d}<05:17,  3.09s/it, acc=39.{k:02d}%, loss=2.{k:02d}]\r"
        f"Epoch 001 [Train]:  {k}%|#    | {k}/115 [00:{k + 1:02d}<05:17,  3.09s/it, acc=40.{k:02d}%, loss=1.{k:02d}]\r"
        for k in range(1, 40)
    )
    run = pipeline.load(_write(tmp_path, bars + "\n"))
    assert run.table["step"].to_list() == list(range(1, 40))
    assert run.table["loss"].to_list() == [float(f"1.{k:02d}") for k in range(1, 40)]
    assert run.meta.repeated_steps == 0 and run.meta.overwritten_steps == 0
    assert run.meta.skip_reasons["progress-bar redraw"] == 39
    assert "LD005" not in {f.code for f in pipeline.analyze(run).findings}


def test_a_bar_at_zero_is_no_step_of_its_own_and_no_resume(tmp_path: Path) -> None:
    # ``Epoch 002 [Train]:   0%|  | 0/115 [00:03<?, ?it/s, loss=1.65]``: no batch of epoch 2 is done, so
    # its step (epoch 1's 115/115) is no second write of that step, and no counter reset (LD003)
    def epoch(e: int) -> str:
        out = f"Epoch {e:03d} [Train]:   0%|     | 0/40 [00:03<?, ?it/s, acc=1{e}.00%, loss=3.{e}000]\r"
        return out + "".join(
            f"Epoch {e:03d} [Train]:  {k}%|#    | {k}/40 [00:{k:02d}<05:17,  3.09s/it, acc=4{e}.{k:02d}%, "
            f"loss={e}.{k:02d}]\r"
            for k in range(1, 41)
        )

    run = pipeline.load(_write(tmp_path, epoch(1) + "\n" + epoch(2) + "\n" + epoch(3) + "\n"))
    assert run.table["step"].to_list() == list(range(121))  # epoch 1's 0/40 writes no other row's step
    assert run.table["loss"].to_list()[39:43] == [1.39, 1.40, 2.01, 2.02]
    assert run.meta.resumes == 0 and run.meta.repeated_steps == 0 and run.meta.overwritten_steps == 0
    assert run.meta.skip_reasons["progress bar at 0/N"] == 2
    codes = {f.code for f in pipeline.analyze(run).findings}
    assert "LD003" not in codes and "LD005" not in codes


def _tqdm_console(train: int = 24, val: int = 5, epochs: int = 2) -> str:
    """A console log of the shape a public PyTorch loop wrote (a tagged tqdm bar per phase, every
    drawing kept behind a ``\\r``, the ascii bar ``|#1        |``, each count drawn twice: with the
    values of the batch before and after its postfix update), with seeded values; Windows line ends."""
    rng = np.random.default_rng(28)
    out = ["2026-05-08 22:41:54 | INFO | [Training] Starting: 2 epochs\r\n"]
    for e in range(1, epochs + 1):
        for tag, n_batches in (("Train", train), ("Val]  ", val)):
            name = "Train]" if tag == "Train" else "Val]  "
            draws, acc, loss = [], None, None
            for n in range(n_batches + 1):
                pct = 100 * n // n_batches
                bar = ("#" * (pct // 10) + (str(pct % 10) if pct % 10 and pct < 100 else "")).ljust(10)
                head = f"  Epoch {e:03d} [{name}: {pct:3d}%|{bar}| {n}/{n_batches} [00:{n:02d}<00:30,  3.10s/it"
                draws.append(head + (f", acc={acc:.2f}%, loss={loss:.4f}]" if loss is not None else "]"))
                if n < n_batches:
                    acc, loss = float(rng.uniform(20, 90)), float(rng.uniform(0.5, 3.0))
                    draws.append(head + f", acc={acc:.2f}%, loss={loss:.4f}]")
            out.append("\r" + "\r".join(draws) + "\r\n")
        out.append(f"2026-05-09 00:46:32 | INFO | Epoch [{e:03d}/{epochs}] TrainLoss=1.0 | ValLoss=1.1\r\n")
    return "".join(out)


def test_tagged_tqdm_bars_keep_every_value_under_its_own_key(tmp_path: Path) -> None:
    # issue 28: a public console log of this shape printed "NaN/inf loss 945 steps" and blamed
    # non-finite loss at 99%: every ``|#         |`` drawing put the loss under acc, and a null under loss
    text = _tqdm_console()
    path = tmp_path / "console.log"
    path.write_bytes(text.encode())
    run = pipeline.load(str(path))
    t = run.table
    assert t["loss"].null_count() == 0 and t["loss"].is_finite().all()
    assert pipeline.summarize(run).nonfinite_loss_steps == 0
    # each step holds a (loss, acc) pair one drawing of the train bar printed at its count
    train = text.replace("\r", "\n")
    pairs = {(float(a), float(b)) for a, b in re.findall(r"\[Train\].*acc=([\d.]+)%, loss=([\d.]+)", train)}
    assert all((a, b) in pairs for a, b in zip(t["acc"], t["loss"], strict=True))
    # a redrawn count is one step, epoch 2's 0/24 is epoch 1's 24/24, and the val bars are evaluations
    assert t["step"].to_list() == list(range(2 * 24 + 1))
    assert run.evals["val_loss"].drop_nulls().len() > 0
    assert run.meta.resumes == 0
