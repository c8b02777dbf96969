"""Which file names hold a log: what a folder or a remote prefix stands for."""

from __future__ import annotations

#: File names a directory input expands to (compression suffixes are looked through).
LOG_SUFFIXES = (".log", ".txt", ".out", ".jsonl", ".json", ".csv", ".tsv")
COMPRESSED = (".gz", ".bz2", ".xz", ".zst")
#: Files in a directory that describe the logs rather than hold one (name prefixes, any case).
NOT_LOGS = ("manifest", "readme", "license", "licence", "changelog")


def looks_like_log(path: str) -> bool:
    """True for a file name (the last part of ``path``) that a folder of logs is expected to hold."""
    name = path.rstrip("/").rsplit("/", 1)[-1].lower()
    for comp in COMPRESSED:
        name = name.removesuffix(comp)
    if name.startswith((".", *NOT_LOGS)):
        return False
    return name.endswith(LOG_SUFFIXES)
