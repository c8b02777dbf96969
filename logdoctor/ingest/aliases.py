"""The documented alias table that maps the field names pipelines print to canonical columns."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from logdoctor.errors import ConfigError
from logdoctor.model import CANONICAL_COLUMNS, LINE_NO
from logdoctor.vocab import normalize_key

#: canonical column -> accepted spellings, compared after ``normalize_key``.
ALIASES: Mapping[str, tuple[str, ...]] = {
    "step": (
        "step",
        "steps",
        "iter",
        "iteration",
        "iterations",
        "global_step",
        "num_updates",
        "updates",
        "update",
        "up",
        "current_steps",
        "trainer_global_step",
        "s",
        "it",
        "global_step/max_steps",
    ),
    "loss": (
        "loss",
        "train_loss",
        "lm_loss",
        "trl",
        "train_loss_step",
        "batch_loss",
        "cost",
        "training_loss",
        "loss_step",
        "train_lm_loss",
        "xent",
        "train_xent",
        "crossentropyloss",
        "train/CrossEntropyLoss",
        "cross_entropy",
        "act_loss",
        "actor_loss",
        "trainloss",
        "reduced_train_loss",
    ),
    "acc": (
        "acc",
        "accuracy",
        "train_acc",
        "train_accuracy",
        "token_acc",
        "mean_token_accuracy",
        "top1",
        "acc1",
        "train_acc_step",
        "sparse_categorical_accuracy",
        "categorical_accuracy",
        "binary_accuracy",
        "trainacc",
    ),
    # optim0_lr0: ESPnet2's first optimizer's first parameter group (espnet2/train/trainer.py)
    "lr": ("lr", "learning_rate", "l_r", "learningrate", "lr_0", "optim0_lr0"),
    "grad_norm": (
        "grad_norm",
        "gnorm",
        "norm",
        "gradient_norm",
        "grad_norm_total",
        "grad_l2_norm",
        "total_norm",
        "total_grad_norm",
        "optim/total_grad_norm",
    ),
    "throughput": (
        "throughput",
        "tok_s",
        "toks_s",
        "tokens_s",
        "tokens_per_sec",
        "tokens_per_second",
        "tok_sec",
        "tok_per_sec",
        "tokens_sec",
        "wps",
        "words_s",
        "train_tokens_per_second",
        "tgt_tok_s",
    ),
    "epoch": ("epoch", "ep", "epochs"),
    "seqs": (
        "seqs",
        "n_seq",
        "n_seqs",
        "nseq",
        "nseqs",
        "num_seqs",
        "batch_size",
        "bsz",
        "sequences",
        "num_sequences",
        "n_sequences",
    ),
    "tokens": (
        "tokens",
        "ntokens",
        "n_tokens",
        "num_tokens",
        "batch_tokens",
        "wpb",
        "tokens_this_step",
        "tokens_in_batch",
        "n_tok",
        "ntok",
    ),
    "len_mean": (
        "len_mean",
        "mean_len",
        "seq_len_mean",
        "avg_seq_len",
        "mean_seq_len",
        "avg_len",
        "mean_length",
        "avg_length",
        "seq_len_avg",
        "length_mean",
        "len_avg",
    ),
    "len_min": ("len_min", "min_len", "seq_len_min", "min_seq_len", "min_length", "length_min"),
    "len_max": ("len_max", "max_len", "seq_len_max", "max_seq_len", "max_length", "length_max"),
    "pad_frac": ("pad_frac", "padding", "pad_ratio", "padding_frac", "pad_fraction", "padding_ratio", "pad_pct"),
    "batch_fp": ("batch_fp", "batch_id", "batch_fingerprint", "batch_hash", "batch_sig", "fp"),
    "micro_fp": ("micro_fp", "micro_fps", "micro_batch_fp"),
}


@dataclass(frozen=True, slots=True)
class FieldMap:
    """Resolves source field names to canonical columns, with user overrides first.

    Attributes:
        overrides: canonical column -> the source field name the user says holds it
            (``--map len_mean=avg_tokens_per_seq``).
    """

    overrides: Mapping[str, str] = field(default_factory=dict)
    #: True when the map came from a configuration file shared by many logs: a source field that
    #: one log lacks is then not an error (a ``--map`` on the command line names this log's fields).
    shared: bool = False
    _lookup: dict[str, str] = field(default_factory=dict, init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        lookup: dict[str, str] = {}
        for canon, names in ALIASES.items():
            for name in names:
                lookup.setdefault(normalize_key(name), canon)
        for canon, src in self.overrides.items():
            # an override wins over the default meaning of that source name, and the canonical
            # name's default aliases no longer apply (the user said where it is).
            for k in [k for k, v in lookup.items() if v == canon]:
                del lookup[k]
            lookup[normalize_key(src)] = canon
        object.__setattr__(self, "_lookup", lookup)

    @classmethod
    def parse(cls, specs: Iterable[str]) -> FieldMap:
        """Build from ``canonical=source`` strings; raises ConfigError on unknown targets."""
        overrides: dict[str, str] = {}
        for spec in specs:
            target, sep, source = spec.partition("=")
            target, source = target.strip(), source.strip()
            if not sep or not target or not source:
                raise ConfigError(f"--map expects canonical=source, got {spec!r}")
            if target not in CANONICAL_COLUMNS or target == LINE_NO:
                known = ", ".join(c for c in CANONICAL_COLUMNS if c != LINE_NO)
                raise ConfigError(f"--map target {target!r} is not a known column (known: {known})")
            overrides[target] = source
        return cls(overrides)

    def canonical(self, key: str) -> str | None:
        """The canonical column for a source key, or None when it is not one of ours."""
        return self._lookup.get(normalize_key(key))

    def resolve(self, key: str) -> str:
        """The column name to store a source key under: canonical when known, else normalised."""
        return self.canonical(key) or normalize_key(key)
