"""The memory budget of ingest: how much a log may take in memory before it is streamed and reduced.

The budget is ``FRACTION`` of the memory available now (``MemAvailable`` in /proc/meminfo, else
``os.sysconf`` free pages), unless ``--max-memory`` or the ``LOGDOCTOR_MAX_MEMORY`` environment
variable sets it (``512M``, ``4G``, ``2000000``). From it follow:

* the **in-memory limit**: a log whose decompressed size is at most ``budget / INGEST_FACTOR`` is
  read whole (parsing holds the bytes, a line table and the extracted columns: ~``INGEST_FACTOR``
  times the file size); a larger one is streamed in line-aligned chunks;
* the **chunk size**: ``budget / (2 * INGEST_FACTOR)``, between 256 KiB and 128 MiB;
* the **row budget**: ``budget / ROW_BYTES`` step rows (table plus the detectors' working
  copies); a streamed log with more steps is reduced to per-block aggregates (see streaming).
"""

from __future__ import annotations

import os
import re

from logdoctor.errors import ConfigError

ENV_VAR = "LOGDOCTOR_MAX_MEMORY"
#: Share of the available memory that one analysis may use.
FRACTION = 0.5
#: Peak bytes of memory per byte of log when a log is parsed and analysed whole (measured: ~13,
#: bench/bench_memory.py).
INGEST_FACTOR = 16
#: Bytes of memory per kept step row during analysis (columns, copies, periodogram, changepoints).
ROW_BYTES = 1024
#: The automatic budget never goes below this, so that results do not change with a busy machine's
#: momentary free memory (an explicit --max-memory may go lower).
MIN_AUTO_BUDGET = 256 * 1024**2
MIN_ROWS = 2_000
MIN_CHUNK = 256 * 1024
MAX_CHUNK = 128 * 1024 * 1024
_FALLBACK = 4 * 1024**3
_UNITS = {"": 1, "k": 1024, "m": 1024**2, "g": 1024**3, "t": 1024**4}


def parse_size(text: str) -> int:
    """Bytes from ``"512M"``, ``"4G"``, ``"1.5g"``, ``"2000000"`` (binary units, optional ``B``).

    Raises:
        ConfigError: not a positive size.
    """
    m = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([kmgt]?)i?b?\s*", text.lower())
    if not m or float(m.group(1)) <= 0:
        raise ConfigError(f"memory size {text!r} is not a positive size such as 512M or 4G")
    return int(float(m.group(1)) * _UNITS[m.group(2)])


def available_memory() -> int:
    """Bytes of memory available now (MemAvailable, else free pages, else 4 GiB)."""
    try:
        with open("/proc/meminfo", encoding="ascii") as fh:
            for line in fh:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    try:
        return os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, AttributeError):
        return _FALLBACK


def budget(override: str | int | None = None) -> int:
    """The memory budget in bytes: ``override``, else $LOGDOCTOR_MAX_MEMORY, else FRACTION of
    the available memory (at least MIN_AUTO_BUDGET).

    Raises:
        ConfigError: the override or the environment variable is not a size.
    """
    if isinstance(override, int):
        return max(1, override)
    text = override or os.environ.get(ENV_VAR)
    if text:
        return parse_size(text)
    return max(MIN_AUTO_BUDGET, int(available_memory() * FRACTION))


def in_memory_limit(total: int) -> int:
    """Largest decompressed log (bytes) that is read whole under a budget of ``total`` bytes."""
    return total // INGEST_FACTOR


def chunk_bytes(total: int) -> int:
    """Size of one streamed chunk under a budget of ``total`` bytes."""
    return min(MAX_CHUNK, max(MIN_CHUNK, total // (2 * INGEST_FACTOR)))


def row_budget(total: int) -> int:
    """Most step rows kept for analysis under a budget of ``total`` bytes."""
    return max(MIN_ROWS, total // ROW_BYTES)


def human(n: int) -> str:
    """``n`` bytes in binary units: ``512 KiB``, ``1.5 GiB``."""
    size = float(n)
    for unit in ("B", "KiB", "MiB", "GiB"):
        if size < 1024:
            return f"{size:.0f} {unit}" if unit == "B" or size >= 100 else f"{size:.3g} {unit}"
        size /= 1024
    return f"{size:.3g} TiB"
