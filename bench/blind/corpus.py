"""Health, verdict and ending accuracy on the blind corpus (``bench/blind/manifest_*.tsv``).

Usage::

    python bench/blind/corpus.py fetch [--mirrors DIR]     # each log at its commit: DIR/<owner>+<name>, else GitHub
    python bench/blind/corpus.py [--split dev|holdout|all]  # evaluate what the cache holds

Every row's truth was committed before logdoctor was run on its log. The logs are not committed:
the cache (``$LOGDOCTOR_BLIND_LOGS``, else ``~/.cache/logdoctor/blind_logs``) holds each under its
manifest ``name``. A row may name ``sidecars`` (comma-separated repository paths in the log's own folder: the
``args.yaml``/``opt.yaml`` a trainer writes beside ``results.csv``): they are fetched from the same commit into
the folder ``<name>.run/`` beside a copy of the log under its own file name, and that copy is the one analysed,
as a user analyses the file in its run folder.
A row is read when logdoctor does not refuse it; its verdict is right when the
batching label is one of ``expected_verdict`` (``none``: logdoctor must refuse the file); its health is
right when the file's status (``ok``, or ``problem`` for a warning or error) is ``expected_health``. A
failure class counts as found when a finding whose code ``CLASS_CODES`` maps it to is present; a class
mapped to no code is reported as not detectable yet.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import urllib.parse
import urllib.request
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from bench.realruns.public import RAW
from bench.realruns.public import fetch as fetch_row
from bench.realruns.public import rows as read_rows
from logdoctor import pipeline
from logdoctor.errors import LogdoctorError

#: fault class (manifest ``failures``) -> the logdoctor codes (logdoctor/codes.py) that report it.
CLASS_CODES: dict[str, tuple[str, ...]] = {
    "nan_loss": ("LD001",),
    "nan_eval": ("LD009",),
    "divergence": ("LD002", "LD403"),
    "loss_spike": ("LD101", "LD103"),
    "oom_recovered": ("LD012",),
    "nonfinite_skipped": ("LD011", "LD013", "LD020", "LD024"),
    "skipped_updates": ("LD020", "LD022", "LD024"),
    "crash": ("LD010", "LD014"),  # LD014: a launch crashed and the run was launched again
    "os_kill": ("LD010",),
    "nccl_timeout": ("LD010",),
    "restore_failed": ("LD015",),  # LD015: a checkpoint could not be restored
    "restart": ("LD003", "LD004", "LD018"),  # LD018: fresh launches appended in one log
    "overfitting": ("LD410", "LD411"),
    "eval_rise": ("LD412", "LD410"),
    "metric_collapse": ("LD401", "LD413"),
    "stuck_loss": ("LD402", "LD421"),
    "zero_loss": ("LD025", "LD420"),
    "loss_at_chance": ("LD421",),
    # LD413 when the eval score sat at its worst at every evaluation: it never learned what is measured
    "no_learning": ("LD402", "LD421", "LD605", "LD413"),
    "lr_problem": ("LD601", "LD602", "LD603", "LD605"),
    "degenerate_metric": ("LD007",),  # an eval metric constant at every evaluation (never computed, or perfect)
    "eval_failed": (),  # an evaluation step errored (traceback) and training went on
}

#: logdoctor's RunStructure.ending -> the manifest's ``ending`` vocabulary (``unknown``/``running``: none reported).
ENDING_KINDS: dict[str, str] = {
    "finished": "finished",
    "early_stopped": "early_stopped",
    "interrupted": "stopped_by_user",
    "cancelled": "stopped_by_user",  # a job cancelled with no reason named (scancel)
    "terminated": "crashed",  # the system's stop (time limit, preemption, SIGTERM): the manifest's os_kill
    "crashed": "crashed",
    "stopped": "stopped_silently",
}


HERE = Path(__file__).resolve().parent


def manifests() -> list[Path]:
    """Every blind manifest, in name order."""
    return sorted(HERE.glob("manifest_*.tsv"))


def rows() -> list[dict[str, str]]:
    """The rows of every manifest (duplicate names keep the first)."""
    seen: dict[str, dict[str, str]] = {}
    for m in manifests():
        for r in read_rows(m):
            r["manifest"] = m.name
            seen.setdefault(r["name"], r)
    return list(seen.values())


def cache_dir() -> Path:
    """Where the logs are kept: ``$LOGDOCTOR_BLIND_LOGS`` or the user cache."""
    return Path(os.environ.get("LOGDOCTOR_BLIND_LOGS") or Path.home() / ".cache/logdoctor/blind_logs")


def sidecars(row: dict[str, str]) -> list[str]:
    """The row's sidecar paths (the optional ``sidecars`` column), each in the log's own folder."""
    paths = [p.strip() for p in (row.get("sidecars") or "").split(",") if p.strip()]
    folder = Path(row["path"]).parent
    for p in paths:
        if Path(p).parent != folder:
            raise ValueError(f"{row['name']}: sidecar {p} is not beside {row['path']}")
    return paths


def run_dir(cache: Path, row: dict[str, str]) -> Path:
    """The folder that holds the row's log under its own file name beside its sidecars."""
    return cache / f"{row['name']}.run"


def log_path(cache: Path, row: dict[str, str]) -> Path:
    """The file analysed for ``row``: the copy in its run folder when the row has sidecars and they
    were fetched, else the cached log itself."""
    if sidecars(row):
        inside = run_dir(cache, row) / Path(row["path"]).name
        if inside.is_file():
            return inside
    return cache / row["name"]


def _blob(row: dict[str, str], path: str, mirrors: Path | None) -> bytes:
    """The bytes of ``path`` at the row's commit (a local mirror, else GitHub's raw host)."""
    if mirrors is not None:
        repo = mirrors / row["repo"].replace("/", "+") / "repo"
        git_dir = repo / ".git" if (repo / ".git").is_dir() else repo
        cmd = ["git", f"--git-dir={git_dir}", "show", f"{row['commit']}:{path}"]
        return subprocess.run(cmd, check=True, capture_output=True).stdout
    url = RAW.format(repo=row["repo"], commit=row["commit"], path=urllib.parse.quote(path))
    with urllib.request.urlopen(url, timeout=60) as resp:
        return bytes(resp.read())


def fetch_sidecars(row: dict[str, str], cache: Path, mirrors: Path | None) -> None:
    """Write the row's run folder: its log under its own file name and each sidecar beside it."""
    paths = sidecars(row)
    if not paths:
        return
    folder = run_dir(cache, row)
    folder.mkdir(exist_ok=True)
    (folder / Path(row["path"]).name).write_bytes((cache / row["name"]).read_bytes())
    for p in paths:
        (folder / Path(p).name).write_bytes(_blob(row, p, mirrors))


@dataclass
class Judged:
    """What logdoctor said on one log, against its row."""

    row: dict[str, str]
    read: bool
    verdict: str
    health: str
    codes: set[str] = field(default_factory=set)
    ending: str | None = None
    summary: str = ""

    @property
    def verdict_right(self) -> bool:
        return self.verdict in self.row["expected_verdict"].split("|")

    @property
    def blamed(self) -> bool:
        return self.verdict in [m for m in self.row["must_not"].split("|") if m]

    @property
    def health_right(self) -> bool:
        return self.health == self.row["expected_health"]

    @property
    def failures(self) -> list[str]:
        return self.row["failures"].split()

    def found(self, cls: str) -> bool:
        return bool(self.codes & set(CLASS_CODES.get(cls, ())))


def ending_of(report) -> str | None:
    """The ending logdoctor reports, in the manifest's words; None when it reports none."""
    st = getattr(report.run.meta, "structure", None)
    if st is None:
        return None
    return ENDING_KINDS.get(st.ending)


def judge(row: dict[str, str], log: Path) -> Judged:
    """Analyse ``log`` as a user would and score it against ``row``."""
    try:
        report = pipeline.analyze(pipeline.load(str(log)))
    except LogdoctorError as err:
        return Judged(row, False, "none", "none", summary=f"refused: {str(err)[:120]}")
    v = report.verdict
    codes = {f.code for f in report.findings}
    for part in report.earlier_runs:
        codes |= {f.code for f in getattr(part, "findings", ())}
    worst = [f.code for f in report.findings if f.severity.label in ("warning", "error")]
    return Judged(
        row,
        True,
        v.batching if v is not None else "none",
        "ok" if report.status == "ok" else "problem",
        codes,
        ending_of(report),
        f"{report.status} {','.join(dict.fromkeys(worst))}",
    )


def chosen_rows(split: str, manifest: str | None = None) -> list[dict[str, str]]:
    """The rows of ``split`` (``dev``, ``holdout`` or ``all``), only those of ``manifest_<manifest>.tsv`` when
    ``manifest`` is given (to report one round's additions apart)."""
    picked = [r for r in rows() if split == "all" or r["split"] == split]
    return [r for r in picked if manifest is None or r["manifest"] == f"manifest_{manifest}.tsv"]


def judged(split: str, cache: Path | None = None, manifest: str | None = None) -> list[Judged]:
    """Every row of ``split`` (``dev``, ``holdout`` or ``all``; of one manifest when ``manifest`` is given) whose
    log the cache holds, judged on the file evaluate analyses (the log, or its copy in the run folder beside its
    sidecars)."""
    cache = cache or cache_dir()
    chosen = chosen_rows(split, manifest)
    return [judge(r, log_path(cache, r)) for r in chosen if (cache / r["name"]).is_file()]


def pct(a: int, b: int) -> str:
    return f"{a}/{b}" if b else "-"


def failures_found(js: list[Judged]) -> str:
    """Recall on the (log, failure class) pairs of ``js`` whose class has a code: ``found/pairs``."""
    pairs = [(j, c) for j in js for c in set(j.failures) if CLASS_CODES.get(c)]
    return pct(sum(j.found(c) for j, c in pairs), len(pairs))


def cells(js: list[Judged]) -> list[str]:
    """The numbers of ``js`` in the table's order: logs, read, verdict right, must_not violated, health
    right, false problems on healthy logs, ending right where reported, failures found."""
    healthy = [j for j in js if j.row["expected_health"] == "ok"]
    reported = [j for j in js if j.ending is not None]
    return [
        str(len(js)),
        pct(sum(j.read for j in js), len(js)),
        pct(sum(j.verdict_right for j in js), len(js)),
        str(sum(j.blamed for j in js)),
        pct(sum(j.health_right for j in js), len(js)),
        pct(sum(j.health == "problem" for j in healthy), len(healthy)),
        pct(sum(j.ending == j.row["ending"] for j in reported), len(reported)),
        failures_found(js),
    ]


def table(out: list[Judged], title: str) -> list[str]:
    """The accuracy table of ``out``, one line per writer and one overall."""
    lines = [
        f"### {title}",
        "",
        "| writer | logs | read | verdict right | must_not violated | health right "
        "| false problems on healthy | ending right (reported) | failures found |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    groups: dict[str, list[Judged]] = defaultdict(list)
    for j in out:
        groups[j.row["writer"]].append(j)
    for name, js in [*sorted(groups.items()), ("**all**", out)]:
        row = cells(js)
        if not any(j.ending is not None for j in js):
            row[6] += " (not reported)"
        lines.append(f"| {name} | {' | '.join(row)} |")
    lines += ["", "| failure class | logs with it | found | codes |", "|---|---|---|---|"]
    have: Counter[str] = Counter()
    hit: Counter[str] = Counter()
    for j in out:
        for cls in set(j.failures):
            have[cls] += 1
            hit[cls] += j.found(cls)
    for cls in sorted(have):
        codes = CLASS_CODES.get(cls)
        shown = ",".join(codes) if codes else "none: not detectable"
        lines.append(f"| {cls} | {have[cls]} | {pct(hit[cls], have[cls]) if codes else '-'} | {shown} |")
    ends = Counter((j.row["ending"], j.ending or "not reported") for j in out)
    lines += ["", "| ending (truth) | logdoctor says | logs |", "|---|---|---|"]
    lines += [f"| {t} | {s} | {n} |" for (t, s), n in sorted(ends.items())]
    pairs = [(j, c) for j in out for c in set(j.failures)]
    detectable = sum(1 for _, c in pairs if CLASS_CODES.get(c))
    lines += [
        "",
        f"failures found: {failures_found(out)} of the (log, class) pairs whose class has a code; "
        f"{len(pairs) - detectable} more pairs of classes with no code yet",
    ]
    return lines


def main(argv: list[str] | None = None) -> int:
    """``fetch`` fills the cache; otherwise print the tables (per writer and per class for dev and all, only
    the overall row for holdout) and, for dev only, one line per log."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("command", nargs="?", choices=("fetch", "evaluate"), default="evaluate")
    ap.add_argument("--mirrors", type=Path, help="fetch from local git mirrors <dir>/<owner>+<name>/repo")
    ap.add_argument("--split", choices=("dev", "holdout", "all"), default="dev")
    ap.add_argument("--manifest", help="evaluate only the rows of bench/blind/manifest_<MANIFEST>.tsv (e.g. r13)")
    args = ap.parse_args(argv)
    cache = cache_dir()
    if args.command == "fetch":
        cache.mkdir(parents=True, exist_ok=True)
        failed = 0
        wanted = chosen_rows("all", args.manifest)
        for row in wanted:
            mirrors = args.mirrors if args.mirrors and (args.mirrors / row["repo"].replace("/", "+")).is_dir() else None
            try:
                fetch_row(row, cache, mirrors)
                fetch_sidecars(row, cache, mirrors)
            except Exception as err:
                failed += 1
                print(f"not fetched: {row['name']} ({row['repo']}): {err}", file=sys.stderr)
        print(f"{len(wanted) - failed} logs in {cache}")
        return 1 if failed else 0
    chosen = chosen_rows(args.split, args.manifest)
    out = judged(args.split, cache, args.manifest)
    missing = len(chosen) - len(out)
    which = f"manifest_{args.manifest}.tsv" if args.manifest else "blind corpus"
    lines = table(out, f"{which}, split {args.split}: {len(out)} logs")
    if args.split == "holdout":  # aggregate numbers only: no line that could name one held-out log
        lines = [*lines[:4], lines[4 + len({j.row["writer"] for j in out})]]
        lines.append(table(out, "")[-1])
    print("\n".join(lines))
    if missing:
        print(f"\n{missing} row(s) not in {cache}: run `fetch` first")
    if args.split == "dev":
        print()
        for j in out:
            mark = ("v" if j.verdict_right else "X") + ("h" if j.health_right else "X")
            missed = [c for c in j.failures if not j.found(c)]
            print(
                f"{mark} {j.row['name']}: verdict {j.verdict}, health {j.health}, ending {j.ending or '-'} "
                f"(truth {j.row['ending']}); missed {' '.join(missed) or '-'}; {j.summary}"
            )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
