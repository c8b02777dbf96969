"""Unit tests for the alias table and --map overrides."""

from __future__ import annotations

import pytest

from logdoctor.errors import ConfigError
from logdoctor.ingest.aliases import ALIASES, FieldMap, normalize_key


@pytest.mark.parametrize(
    ("raw", "norm"),
    [("Grad Norm", "grad_norm"), ("tok/s", "tok_s"), ("train/loss", "train_loss"), (" lm loss ", "lm_loss")],
)
def test_normalize_key(raw: str, norm: str) -> None:
    assert normalize_key(raw) == norm


@pytest.mark.parametrize(
    ("key", "canon"),
    [
        ("iter", "step"),
        ("num_updates", "step"),
        ("lm loss", "loss"),
        ("gnorm", "grad_norm"),
        ("wpb", "tokens"),
        ("bsz", "seqs"),
        ("avg_seq_len", "len_mean"),
        ("tok/s", "throughput"),
        ("learning_rate", "lr"),
        ("pad_ratio", "pad_frac"),
        ("batch_id", "batch_fp"),
    ],
)
def test_default_aliases(key: str, canon: str) -> None:
    assert FieldMap().canonical(key) == canon


def test_no_alias_is_claimed_twice() -> None:
    seen: dict[str, str] = {}
    for canon, names in ALIASES.items():
        for n in names:
            k = normalize_key(n)
            assert seen.setdefault(k, canon) == canon, f"{n} maps to {seen[k]} and {canon}"


def test_override_wins_and_unknown_keys_keep_their_name() -> None:
    fm = FieldMap.parse(["len_mean=avg_tokens_per_seq"])
    assert fm.canonical("avg_tokens_per_seq") == "len_mean"
    assert fm.canonical("len_mean") is None  # the user said where len_mean is
    assert fm.resolve("Loss Scale") == "loss_scale"


@pytest.mark.parametrize("spec", ["nonsense=x", "len_mean", "=x", "len_mean=", "line_no=x"])
def test_bad_map_specs_are_config_errors(spec: str) -> None:
    with pytest.raises(ConfigError):
        FieldMap.parse([spec])
