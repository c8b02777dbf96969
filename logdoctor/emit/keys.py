"""The keys of a batch record, shared by the statistics and the line writer (no numpy here)."""

from __future__ import annotations

#: Keys of a batch record, in the order the canonical line writes them.
BATCH_KEYS = ("n_seq", "tokens", "len_mean", "len_min", "len_max", "pad_frac", "batch_fp", "micro_fp")
#: The keys whose values are strings (fingerprints), never logged as numbers.
FP_KEYS = ("batch_fp", "micro_fp")
#: A merged record lists its parts' fingerprints (``micro_fp``) up to this many parts (16 hex
#: characters each): gradient accumulation times ranks beyond it would make lines of kilobytes.
MAX_MICRO_FP = 16
