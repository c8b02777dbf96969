"""Verdict and health accuracy on public logs nobody here tuned to (``public_manifest.tsv``).

Usage::

    python bench/realruns/public.py fetch              # each log at its commit, from GitHub (network)
    python bench/realruns/public.py fetch --mirrors D  # or from local git mirrors D/<owner>+<name>
    python bench/realruns/public.py                    # evaluate what the cache holds

The logs are not committed (their licences vary and most state none): the cache
(``$LOGDOCTOR_PUBLIC_LOGS``, else ``~/.cache/logdoctor/public_logs``) holds each under its
manifest ``name``. A row is right on the verdict when logdoctor's batching label is one of
``expected_verdict`` (``none``: logdoctor must refuse the file), on health when the file's status
(``ok``, or ``problem`` for a warning or error anywhere in it) is ``expected_health``; ``must_not``
lists the labels that would be unforgivable (blaming batching on a shuffled run, an all-clear on a fixed-order one).
"""

from __future__ import annotations

import argparse
import csv
import os
import subprocess
import sys
import urllib.parse
import urllib.request
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from logdoctor import pipeline
from logdoctor.errors import LogdoctorError

MANIFEST = Path(__file__).resolve().with_name("public_manifest.tsv")
RAW = "https://raw.githubusercontent.com/{repo}/{commit}/{path}"


def rows(manifest: Path = MANIFEST) -> list[dict[str, str]]:
    """The manifest's rows."""
    with manifest.open(encoding="utf-8", newline="") as fh:
        return list(csv.DictReader(fh, delimiter="\t"))


def cache_dir(given: str | None = None) -> Path:
    """Where the logs are kept: ``given``, ``$LOGDOCTOR_PUBLIC_LOGS``, or the user cache."""
    return Path(given or os.environ.get("LOGDOCTOR_PUBLIC_LOGS") or Path.home() / ".cache/logdoctor/public_logs")


def fetch(row: dict[str, str], into: Path, mirrors: Path | None) -> None:
    """Write the row's log, exactly as committed, to ``into / name``."""
    if mirrors is not None:
        repo = mirrors / row["repo"].replace("/", "+") / "repo"
        git_dir = repo / ".git" if (repo / ".git").is_dir() else repo
        data = subprocess.run(
            ["git", f"--git-dir={git_dir}", "show", f"{row['commit']}:{row['path']}"], check=True, capture_output=True
        ).stdout
    else:
        url = RAW.format(repo=row["repo"], commit=row["commit"], path=urllib.parse.quote(row["path"]))
        with urllib.request.urlopen(url, timeout=60) as resp:
            data = resp.read()
    (into / row["name"]).write_bytes(data)


@dataclass(frozen=True)
class Outcome:
    """What logdoctor said on one public log, against the row's truth."""

    name: str
    verdict: str
    health: str
    verdict_right: bool
    health_right: bool
    blamed: bool
    summary: str


def judge(row: dict[str, str], log: Path) -> Outcome:
    """Analyse ``log`` as a user would and score it against ``row``."""
    try:
        report = pipeline.analyze(pipeline.load(str(log)))
    except LogdoctorError as err:
        verdict, health, summary = "none", "none", f"refused: {str(err)[:140]}"
    else:
        v = report.verdict
        verdict = v.batching if v is not None else "none"
        health = "ok" if report.status == "ok" else "problem"
        worst = [f.code for f in report.findings if f.severity.label in ("warning", "error")]
        summary = f"{report.status} {','.join(dict.fromkeys(worst))}; {v.summary[:100] if v else ''}"
    return Outcome(
        row["name"],
        verdict,
        health,
        verdict in row["expected_verdict"].split("|"),
        health == row["expected_health"],
        verdict in row["must_not"].split("|"),
        summary,
    )


def evaluate(cache: Path) -> list[Outcome]:
    """Every manifest row whose log the cache holds, judged."""
    return [judge(r, cache / r["name"]) for r in rows() if (cache / r["name"]).is_file()]


def main(argv: list[str] | None = None) -> int:
    """``fetch`` fills the cache; no command prints the accuracy table and every row."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("command", nargs="?", choices=("fetch", "evaluate"), default="evaluate")
    ap.add_argument("--cache", help="folder of the logs (default: $LOGDOCTOR_PUBLIC_LOGS or ~/.cache/...)")
    ap.add_argument("--mirrors", type=Path, help="fetch from local git mirrors <dir>/<owner>+<name>/repo")
    args = ap.parse_args(argv)
    cache = cache_dir(args.cache)
    if args.command == "fetch":
        cache.mkdir(parents=True, exist_ok=True)
        for row in rows():
            fetch(row, cache, args.mirrors)
        return 0
    out = evaluate(cache)
    missing = len(rows()) - len(out)
    n = len(out)
    print(
        f"| public logs | verdict right | health right | batching falsely blamed |\n|---|---|---|---|\n"
        f"| {n} | {sum(o.verdict_right for o in out)}/{n} | {sum(o.health_right for o in out)}/{n} | "
        f"{sum(o.blamed for o in out)} |"
    )
    if missing:
        print(f"\n{missing} manifest row(s) not in {cache}: run `fetch` first")
    print()
    for o in out:
        mark = ("v" if o.verdict_right else "X") + ("h" if o.health_right else "X")
        print(f"{mark} {o.name}: verdict {o.verdict}, health {o.health}: {o.summary}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
