"""Fetch the public training logs that the tests read from ../shared/reallogs, where that folder is absent.

Usage::

    python scripts/fetch_reallogs.py                  # into ../shared/reallogs, from GitHub (network)
    python scripts/fetch_reallogs.py --into DIR       # anywhere else (then point the tests at it: see below)
    python scripts/fetch_reallogs.py --mirrors DIR    # from local git mirrors DIR/<owner>+<name>/

Each log is written exactly as committed at the commit that ``reallogs_sources.tsv`` (beside this script)
names, and checked against the SHA-256 of the copy the snapshot (tests/answers.tsv) was taken on; a
``MANIFEST.tsv`` listing them is written beside them, which is what the tests look for. The logs are
never committed here (their licences vary and most state none). Nothing existing is overwritten unless
``--force``.
"""

from __future__ import annotations

import argparse
import csv
import hashlib
import subprocess
import sys
import urllib.parse
import urllib.request
from pathlib import Path

HERE = Path(__file__).resolve().parent
SOURCES = HERE / "reallogs_sources.tsv"
DEFAULT_INTO = HERE.parent.parent / "shared" / "reallogs"
RAW = "https://raw.githubusercontent.com/{repo}/{commit}/{path}"


def sources(path: Path = SOURCES) -> list[dict[str, str]]:
    """The rows of ``reallogs_sources.tsv``: file, repo, path, commit, sha256."""
    with path.open(encoding="utf-8", newline="") as fh:
        return list(csv.DictReader(fh, delimiter="\t"))


def _git_dir(mirrors: Path, repo: str) -> Path:
    base = mirrors / repo.replace("/", "+")
    for candidate in (base / "repo" / ".git", base / "repo", base / ".git", base):
        if (candidate / "objects").is_dir():
            return candidate
    raise FileNotFoundError(f"no git mirror of {repo} under {mirrors}")


def blob(row: dict[str, str], mirrors: Path | None) -> bytes:
    """The log's bytes at its commit."""
    if mirrors is not None:
        git_dir = _git_dir(mirrors, row["repo"])
        return subprocess.run(
            ["git", f"--git-dir={git_dir}", "show", f"{row['commit']}:{row['path']}"], check=True, capture_output=True
        ).stdout
    url = RAW.format(repo=row["repo"], commit=row["commit"], path=urllib.parse.quote(row["path"]))
    with urllib.request.urlopen(url, timeout=60) as resp:
        data: bytes = resp.read()
    return data


def main(argv: list[str] | None = None) -> int:
    """Fetch every row; exit 1 when one could not be fetched or differs from the snapshot's copy."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--into", type=Path, default=DEFAULT_INTO, help="folder to write (default ../shared/reallogs)")
    ap.add_argument("--mirrors", type=Path, help="read from local git mirrors <dir>/<owner>+<name>/")
    ap.add_argument("--force", action="store_true", help="overwrite logs already there")
    ap.add_argument("--sources", type=Path, default=SOURCES, help="the list of logs (default: beside this script)")
    args = ap.parse_args(argv)
    rows = sources(args.sources)
    args.into.mkdir(parents=True, exist_ok=True)
    bad = 0
    for row in rows:
        target = args.into / row["file"]
        if target.exists() and not args.force:
            print(f"kept {target} (already there; --force fetches it again)")
            continue
        try:
            data = blob(row, args.mirrors)
        except (OSError, subprocess.CalledProcessError) as err:
            print(f"error: {row['file']}: {err}", file=sys.stderr)
            bad += 1
            continue
        target.write_bytes(data)
        if hashlib.sha256(data).hexdigest() != row["sha256"]:
            print(f"warning: {row['file']} differs from the copy tests/answers.tsv was taken on", file=sys.stderr)
            bad += 1
    manifest = args.into / "MANIFEST.tsv"
    if not manifest.exists():
        with manifest.open("w", encoding="utf-8", newline="") as fh:
            w = csv.writer(fh, delimiter="\t", lineterminator="\n")
            w.writerow(["file", "repo", "path", "commit"])
            w.writerows([r["file"], r["repo"], r["path"], r["commit"]] for r in rows)
    print(f"{len(rows) - bad} of {len(rows)} logs in {args.into}")
    return 1 if bad else 0


if __name__ == "__main__":
    raise SystemExit(main())
