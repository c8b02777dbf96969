"""The vocabulary of keys: what each spelling is, for every reader and detector (issue 46.1)."""

from __future__ import annotations

import pytest

from logdoctor import vocab
from logdoctor.vocab import Direction, Role


@pytest.mark.parametrize(
    ("key", "split", "metric"),
    [
        ("eval_loss", "eval", "loss"), ("dev_loss", "dev", "loss"), ("val/loss", "val", "loss"),
        ("valid_loss", "valid", "loss"), ("validation_loss", "validation", "loss"), ("test_loss", "test", "loss"),
        ("evaluation_loss", "evaluation", "loss"), ("val_loss_epoch", "val", "loss"),
        ("val/box_loss", "val", "box_loss"), ("metrics/mAP50-95(B)", "val", "map50_95_b"),
        ("metrics/precision(B)", "val", "precision_b"), ("dev_other_wer", "dev", "other_wer"),
        ("val", "val", ""), ("hellaswag", "val", "hellaswag"), ("bbox/APs", "val", "bbox_aps"),
        ("segm/AP50", "val", "segm_ap50"), ("bbox_mAP_50", "val", "bbox_map_50"),
    ],
)  # fmt: skip
def test_evaluation_keys_name_their_split_and_metric(key: str, split: str, metric: str) -> None:
    assert vocab.eval_split(key) == (split, metric)
    assert vocab.classify(key).role is Role.EVAL and vocab.is_eval(key)


@pytest.mark.parametrize(
    "key",
    ["loss", "train_loss", "train/loss", "train_loss_step", "train_loss_epoch", "loss_epoch", "lr", "epoch",
     "train/epoch", "train/box_loss", "loss_0", "device_count", "testing_time", "validator", "evaluator_lr",
     "metrics_count", "bbox_loss", "bbox/num_fg"],
)  # fmt: skip
def test_training_keys_are_no_evaluation(key: str) -> None:
    assert not vocab.is_eval(key)


@pytest.mark.parametrize(
    ("key", "role"),
    [
        ("loss", Role.LOSS), ("train/loss", Role.LOSS), ("train_loss_step", Role.LOSS), ("total_loss", Role.LOSS),
        ("train/box_loss", Role.LOSS_PART), ("loss_cls", Role.LOSS_PART), ("loss_0", Role.LOSS_PART),
        ("g_loss", Role.LOSS_PART), ("loss_physics", Role.LOSS_PART),
        ("train_loss_epoch", Role.AGGREGATE), ("loss_epoch", Role.AGGREGATE),
        ("lr", Role.LR), ("learning_rate", Role.LR), ("lr_0", Role.LR), ("train/lr", Role.LR),
        ("step", Role.COUNTER), ("epoch", Role.COUNTER), ("train/epoch", Role.COUNTER), ("iter", Role.COUNTER),
        ("throughput", Role.RATE), ("tok/s", Role.RATE), ("train_samples_per_second", Role.RATE),
        ("grad_norm", Role.OTHER), ("initial_loss_scale", Role.OTHER), ("loss_scale", Role.OTHER),
    ],
)  # fmt: skip
def test_each_key_has_one_role(key: str, role: Role) -> None:
    assert vocab.classify(key).role is role


@pytest.mark.parametrize(
    ("name", "way"),
    [
        ("val_loss", Direction.DOWN), ("dev_wer", Direction.DOWN), ("test_cer", Direction.DOWN),
        ("eval_perplexity", Direction.DOWN), ("val_ppl", Direction.DOWN),
        ("eval_accuracy", Direction.UP), ("val_acc1", Direction.UP), ("valid_f1", Direction.UP),
        ("test/bleu", Direction.UP), ("metrics/mAP50(B)", Direction.UP), ("metrics/mAP50-95(M)", Direction.UP),
        ("bbox/AP", Direction.UP), ("bbox/APs", Direction.UP), ("segm/AP50", Direction.UP),
        ("metrics/recall(B)", Direction.UP), ("metrics/precision(B)", Direction.UP), ("eval_rouge1", Direction.UP),
        ("lr", None), ("epoch", None), ("grad_norm", None), ("apple", None),
    ],
)  # fmt: skip
def test_direction_comes_from_the_name(name: str, way: Direction | None) -> None:
    assert vocab.direction(name) is way


def test_the_main_eval_loss_is_a_held_out_total_before_a_test_split_and_never_a_part() -> None:
    cols = ["test_loss", "val_ppl", "dev_other_loss", "val/box_loss", "train_loss_epoch", "dev_loss", "eval_loss"]
    ranked = sorted((r, c) for c in cols if (r := vocab.eval_loss_rank(c)) is not None)
    assert [c for _, c in ranked] == ["eval_loss", "dev_loss", "dev_other_loss", "val_ppl", "test_loss"]
    for never in ("val/box_loss", "train_loss_epoch", "best_val_loss", "val_acc", "ppl", "predict_loss"):
        assert vocab.eval_loss_rank(never) is None, never
    assert vocab.eval_loss_rank("val_loss_epoch") == vocab.eval_loss_rank("val_loss")
    assert vocab.classify("val_ppl").is_perplexity and not vocab.classify("val_loss").is_perplexity


def test_the_readers_and_detectors_ask_the_vocabulary() -> None:
    from logdoctor.ingest.parsers import records, textrules

    for key in ("dev_loss", "test_loss", "val/loss", "evaluation_loss", "metrics/mAP50(B)", "val_loss_epoch"):
        assert records.is_eval_key(key) and textrules.is_eval_key(vocab.normalize_key(key)), key
    assert records.is_eval_key("train_loss_epoch")  # set aside from the training steps
    assert not textrules.is_eval_key("train_loss_epoch")  # but no evaluation
