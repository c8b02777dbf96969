"""The keys of a batch record, shared by the statistics and the line writer (no numpy here)."""

from __future__ import annotations

#: Keys of a batch record, in the order the canonical line writes them.
BATCH_KEYS = ("n_seq", "tokens", "len_mean", "len_min", "len_max", "pad_frac", "batch_fp")
