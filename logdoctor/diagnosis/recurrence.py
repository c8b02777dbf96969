"""Do the same batches recur epoch after epoch? Batch signatures or fingerprints against chance.

A signature is the tuple of logged batch statistics (seqs, tokens, len_min, len_max, len_mean;
counts only when they are integers, i.e. per batch, not averaged over a logging interval);
it is coarser than a fingerprint (``batch_fp``, a hash of the sample indices): two different
batches can share a signature by chance, never a fingerprint.

Signatures are judged by how each one occupies the epochs. Under any pipeline that recomposes its
batches from i.i.d. (or exchangeable) draws, whatever the length distribution, the epochs of the
copies of a signature are a random allocation given the signature's count and the epoch sizes (a
permutation null). Static composition puts the copies of a rare signature in *different* epochs
(the same batch once per epoch): same-epoch pairs of copies fall far below the null's expectation.
Only rare signatures (at most 2 copies per epoch on average) carry this signal; common ones are
shared by distinct batches under any strategy and are left out.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import polars as pl

from logdoctor.model import BATCH_FP, LEN_MAX, LEN_MEAN, LEN_MIN, MICRO_FP, SEQS, TOKENS, Run

if TYPE_CHECKING:
    from logdoctor.diagnosis.occupancy import Pairs

SIGNATURE_COLUMNS = (SEQS, TOKENS, LEN_MIN, LEN_MAX, LEN_MEAN)
#: The signature test decides only where a static run's same-epoch pairs would reach this p-value
#: (ten times below the verdict's default ``max_p``), else static can be neither seen nor ruled out.
DECIDABLE_P = 1e-7


@dataclass(frozen=True, slots=True)
class Recurrence:
    """Recurrence of batches across epochs.

    Attributes:
        kind: "fingerprint" or "signature".
        columns: the columns the signature is built from.
        fraction: share of batches (epochs after the first) already seen in an earlier epoch.
        chance: share expected under the permutation null (recomposed from exchangeable draws);
            0 for fingerprints.
        expected_if_static: share expected if every batch recurred (given the logging stride).
        excess: ≈1 static, ≈0 recomposed. Signatures: ``fraction / expected_if_static`` when
            below the verdict's ``min_excess`` (static ruled out), else the smaller of it and
            ``Pairs.excess``; fingerprints: ``fraction / expected_if_static``.
        p_value: signatures: lower-tail p of the same-epoch pairs; fingerprints: normal tail of
            the recurrence count against zero chance.
        n: batches compared.
        by_epoch: ``fraction`` for each epoch (the first is 0 by definition).
        pairs: the signature occupancy test (None for fingerprints).
        decidable: enough logged batches would recur under static composition to tell it apart
            (see ``_decidable``).
    """

    kind: str
    columns: tuple[str, ...]
    fraction: float
    chance: float
    expected_if_static: float
    excess: float
    p_value: float
    n: int
    by_epoch: tuple[float, ...]
    pairs: Pairs | None = None
    decidable: bool = False


def _decidable(n: int, share: float, expected: float, pairs: Pairs | None, min_excess: float) -> bool:
    """Enough logged batches would recur under static composition to tell it apart. Too few
    recurrences (``share`` of the static expectation below ``min_excess``) rule static out
    directly (chance only adds recurrences); more need the signature occupancy test to be
    decisive: the same-epoch pairs a static run would show have p < ``DECIDABLE_P`` under the
    permutation null."""
    base = n * expected >= 10 and expected >= 0.1
    if pairs is None or share < min_excess:
        return base
    return base and pairs.p_if_static < DECIDABLE_P


def signature_ids(run: Run, use_fingerprint: bool = True) -> tuple[np.ndarray, tuple[str, ...], str] | None:
    """Integer id per row of its batch fingerprint (preferred) or signature; None without either."""
    t = run.table
    if use_fingerprint and run.has(BATCH_FP):
        return fingerprint_ids(t[BATCH_FP].cast(pl.String)), (BATCH_FP,), "fingerprint"
    cols = tuple(c for c in SIGNATURE_COLUMNS if run.has(c) and (c == LEN_MEAN or _integral(t[c])))
    if len(cols) < 2 or not ({TOKENS, LEN_MIN, LEN_MAX} & set(cols)):
        return None
    frame = t.select([pl.col(c).cast(float).round(1).fill_null(-1.0) for c in cols])
    ids = frame.select(pl.struct(cols).rank("dense")).to_series().to_numpy().astype(np.int64)
    return ids, cols, "signature"


def micro_ids(run: Run) -> tuple[np.ndarray, np.ndarray] | None:
    """(integer id per micro-batch fingerprint, the row it was logged on), or None without
    ``micro_fp`` on most rows. Under gradient accumulation (or ranks merged into one record) the
    parts are what a pipeline composes; their union (``batch_fp``) pairs them anew each epoch even
    when every part is static. A row without ``micro_fp`` is one part: its ``batch_fp``."""
    t = run.table
    if not run.has(MICRO_FP) or t[MICRO_FP].null_count() > t.height // 2:
        return None
    fp = pl.col(MICRO_FP).cast(pl.String)
    if run.has(BATCH_FP):
        fp = pl.coalesce(fp, pl.col(BATCH_FP).cast(pl.String))
    parts = (
        t.select(fp.str.split("+").alias("fp"), pl.int_range(pl.len(), dtype=pl.Int64).alias("row"))
        .explode("fp")
        .filter(pl.col("fp").is_not_null() & (pl.col("fp") != ""))
    )
    return fingerprint_ids(parts["fp"]), parts["row"].to_numpy()


def fingerprint_ids(fp: pl.Series) -> np.ndarray:
    """Integer id per fingerprint, equal exactly where the fingerprints are (null counts as "").

    Ranking the categorical codes is ~4x faster than ranking the strings (1M rows) and gives the
    same classes; hex fingerprints of one width as integers are faster still (and one-to-one).
    """
    codes = _hex_codes(fp)
    if codes is None:
        codes = fp.fill_null("").cast(pl.Categorical).to_physical()
    return codes.rank("dense").to_numpy().astype(np.int64)


def _hex_codes(fp: pl.Series) -> pl.Series | None:
    """Lower-case hex fingerprints of one width (at most 16 digits) as distinct integers; None
    when any is otherwise (null, upper case, another width or alphabet)."""
    width = fp.str.len_bytes()
    n = width.min()
    if fp.null_count() or not isinstance(n, int) or not 0 < n <= 16 or width.max() != n:
        return None
    if fp.str.contains("[^0-9a-f]").any():
        return None
    cut = max(0, n - 8)  # two halves of at most 32 bits each: no overflow, one-to-one
    hi = fp.str.slice(0, cut).str.to_integer(base=16, strict=False) if cut else None
    lo = fp.str.slice(cut).str.to_integer(base=16, strict=True).cast(pl.UInt64)
    return lo if hi is None else hi.cast(pl.UInt64) * (1 << 32) + lo


def _integral(col: pl.Series) -> bool:
    """Per-batch counts are integers; interval averages (``bsz=198.7``) cannot identify a batch."""
    v = col.cast(float).drop_nulls().to_numpy()
    v = v[np.isfinite(v)]
    return bool(v.size) and float(np.mean(v != np.round(v))) < 0.01


def recurrence(
    ids: np.ndarray,
    epoch: np.ndarray,
    stride: float,
    kind: str,
    columns: tuple[str, ...],
    exclude: np.ndarray | None = None,
    *,
    min_excess: float,
) -> Recurrence | None:
    """Measure recurrence; ``stride`` is steps per logged row, ``exclude`` marks rows to ignore
    (single-sequence batches, whose composition is fixed under any strategy), ``min_excess`` the
    verdict's threshold (a share of the static expectation below it rules static out). None with
    one epoch.
    """
    keep = np.ones(ids.size, bool) if exclude is None else ~exclude
    ids, epoch = ids[keep], epoch[keep]
    if ids.size == 0 or epoch.max() < 1:
        return None
    first = np.full(int(ids.max()) + 1, np.iinfo(np.int64).max)
    np.minimum.at(first, ids, epoch)
    seen = first[ids] < epoch
    later = epoch >= 1
    n = int(later.sum())
    frac = float(seen[later].mean())
    f = min(1.0, 1.0 / max(stride, 1.0))
    expected = float(np.mean(1 - (1 - f) ** epoch[later]))
    by_epoch = _share_by_epoch(seen, epoch)
    if kind == "signature":
        # imported here: only a run with batch signatures takes the occupancy test (issue 33: the
        # import costs every other small log's process ~0.5 ms)
        from logdoctor.diagnosis.occupancy import chance, same_epoch_pairs

        chance_share = chance(ids, epoch)
        pairs = same_epoch_pairs(ids, epoch, f)
        share = frac / expected if expected > 0 else 0.0
        excess = share if share < min_excess else min(share, pairs.excess)
        decidable = _decidable(n, share, expected, pairs, min_excess)
        return Recurrence(
            kind, columns, frac, chance_share, expected, excess, pairs.p_value, n, by_epoch, pairs, decidable
        )
    k = float(seen[later].sum())  # fingerprints: distinct batches never share one (chance 0)
    p = 0.5 * math.erfc(k / math.sqrt(2.0))  # normal upper tail
    share = frac / expected if expected else 0.0
    return Recurrence(
        kind,
        columns,
        frac,
        0.0,
        expected,
        share,
        p,
        n,
        by_epoch,
        decidable=_decidable(n, share, expected, None, min_excess),
    )


def _share_by_epoch(seen: np.ndarray, epoch: np.ndarray) -> tuple[float, ...]:
    """Per epoch 0..max, the share of its rows in ``seen`` (0.0 for an epoch without rows): one
    pass (bincount), not one scan of every row per epoch."""
    k = int(epoch.max()) + 1
    if epoch.min() < 0 or not np.issubdtype(epoch.dtype, np.integer):
        return tuple(float(seen[epoch == e].mean()) if np.any(epoch == e) else 0.0 for e in range(k))
    rows = np.bincount(epoch, minlength=k)
    hits = np.bincount(epoch, weights=seen.astype(np.float64), minlength=k)
    return tuple(float(h / r) if r else 0.0 for h, r in zip(hits.tolist(), rows.tolist(), strict=True))


def within_epoch_repeats(ids: np.ndarray, epoch: np.ndarray) -> float:
    """Share of rows whose id occurs more than once within its own epoch."""
    if not ids.size:
        return 0.0
    key = _pair_key(ids, epoch)
    if key is None:
        count = pl.DataFrame({"e": epoch, "s": ids}).select(pl.len().over("e", "s")).to_series().to_numpy()
        return float(np.mean(count > 1))
    # one (epoch, id) integer per row, sorted: a row repeats when a neighbour has its key
    # (6x less CPU than a grouped count at 1M rows; the share does not depend on the order)
    key.sort()
    same = key[1:] == key[:-1]
    repeated = np.zeros(key.size, dtype=bool)
    repeated[1:] |= same
    repeated[:-1] |= same
    return float(np.mean(repeated))


def _pair_key(ids: np.ndarray, epoch: np.ndarray) -> np.ndarray | None:
    """``epoch * (max id + 1) + id`` as int64 for non-negative integers that cannot overflow."""
    if not (np.issubdtype(ids.dtype, np.integer) and np.issubdtype(epoch.dtype, np.integer)):
        return None
    if ids.min() < 0 or epoch.min() < 0:
        return None
    width = int(ids.max()) + 1
    if (int(epoch.max()) + 1) * width >= 2**62:
        return None
    return epoch.astype(np.int64) * width + ids.astype(np.int64)


def infer_period(ids: np.ndarray, steps: np.ndarray) -> int | None:
    """Epoch length from the median gap between consecutive occurrences of recurring signatures
    (static order shuffles each epoch: gaps spread evenly around one epoch)."""
    order = np.lexsort((steps, ids))
    same = ids[order][1:] == ids[order][:-1]
    gaps = np.diff(steps[order])[same]
    if gaps.size < 20:
        return None
    return round(float(np.median(gaps)))
