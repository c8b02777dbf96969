"""Logs whose loss has another name: read the total loss the log names, or say which ``--map`` picks one."""

from __future__ import annotations

from collections.abc import Iterable

from logdoctor import vocab
from logdoctor.ingest.aliases import normalize_key
from logdoctor.ingest.parsers.objective import objective_of
from logdoctor.ingest.parsers.textrules import is_eval_key
from logdoctor.model import LOSS

#: At most this many ``--map`` choices are spelled out in a refusal.
MAX_CHOICES = 6


def total_note(picked: Iterable[str]) -> str | None:
    """The note when a total-loss field stood in for ``loss`` on training lines (``avg_loss``)."""
    keys = sorted(picked)
    if not keys:
        return None
    return (
        f"the log names no field 'loss': its total loss `{keys[0]}` is read as the training loss "
        f"(--map loss=<field> picks another)"
    )


def main_part(keys_seen: Iterable[str]) -> str | None:
    """The main part of an objective logged only in parts that no trainer sums (a GAN's ``loss_g``), or
    None (no parts; parts that a trainer sums, which a text log's rows cannot be summed from)."""
    obj = objective_of(k for k in keys_seen if not vocab.is_eval(k))
    return obj.fields[0] if obj is not None and not obj.summed and vocab.is_loss_part(obj.fields[0]) else None


def main_part_note(main: str, keys_seen: Iterable[str]) -> str | None:
    """The note when the main part of an objective logged in parts (:func:`main_part`) stood in for
    ``loss``, naming the other parts."""
    own = vocab.normalize_key(main)
    others = sorted(
        k for k in keys_seen if vocab.is_loss_part(k) and not vocab.is_eval(k) and vocab.normalize_key(k) != own
    )
    obj = objective_of([main, *others])
    return obj.note if obj is not None and not obj.summed else None


def loss_candidates(keys: Iterable[str]) -> list[str]:
    """Training fields whose name says they are a part of the loss (``loss_mel``, ``loss_1``), sorted: the
    vocabulary's loss parts, never a name that only holds the word (the fp16 ``loss_scale``,
    ``loss_scale_window`` and ``reducing_dynamic_loss_scale_from`` of a DeepSpeed config dump)."""
    out = {k for k in keys if vocab.is_loss_part(k) and not is_eval_key(normalize_key(k))}
    # ``avg_loss_mel`` beside ``loss_mel`` is its epoch average, not another choice
    return sorted(k for k in out - {LOSS} if not (k.startswith("avg_") and k[4:] in out))


def refusal_hint(keys: Iterable[str]) -> str:
    """What to do when no field is the training loss but loss-like fields exist ('' when none)."""
    cands = loss_candidates(keys)
    if not cands:
        return ""
    shown = " or ".join(f"--map loss={c}" for c in cands[:MAX_CHOICES])
    more = f" ({len(cands) - MAX_CHOICES} more loss fields)" if len(cands) > MAX_CHOICES else ""
    return f"no field is the total training loss, only parts of it{more}: name the objective with {shown}"
