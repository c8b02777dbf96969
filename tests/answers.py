"""Every real log's answer as one reviewed line: the snapshot that tests/integration/test_answers.py holds.

One line per input (every fixture log and run folder, every log of ../shared/reallogs, of
bench/realruns/public_manifest.tsv and of the blind corpus's dev split), tab-separated:

    KEY  exit=N  STATUS  VERDICT  FINDINGS  STEPS  RUNS

- KEY: ``fixtures/<path>``, ``reallogs/<file>``, ``public/<name>`` or ``blind/<name>``;
- exit: what ``logdoctor check`` (defaults: ``--fail-on warning``, ``--runs all``) exits with, 2 for a refusal;
- STATUS: the file's status (``ok``, ``warning``, ``error``), or ``refused: <message>`` (its path left out);
- VERDICT: the batching label, with the cause of a ``not_batching`` verdict;
- FINDINGS: each finding's code and severity (``e``/``w``/``i``), ``~`` when the verdict explains it as a
  symptom, ``×N`` for N alike, sorted by code;
- STEPS: rows, the step range, the planned total and whether it was reached, when the log states one;
- RUNS: the runs appended in the file, with each earlier run's status and its problems' codes.

A change to any answer fails the suite until the snapshot is written again, in the same commit, whose
message says why each line changed::

    python -m tests.answers --update     # write tests/answers.tsv from what the code answers now
    python -m tests.answers              # print the lines that differ, exit 1 if any

Where ../shared/reallogs is absent (a checkout without the shared data), its lines are left as recorded
and their tests skip; ``python scripts/fetch_reallogs.py`` fetches the logs. Likewise the public logs,
kept in ``$LOGDOCTOR_PUBLIC_LOGS`` (``python bench/realruns/public.py fetch`` fetches them), and the
blind corpus's dev logs (``python bench/blind/corpus.py fetch``); its holdout logs have no line here: they
are measured only as a whole, by ``bench/blind/corpus.py --split holdout``, so that no rule is tuned to them.
"""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path

from logdoctor.errors import LogdoctorError
from logdoctor.exitcodes import ExitCode, gated_findings, should_fail
from logdoctor.model import Finding, Report, Severity
from tests.conftest import FIXTURES, REALLOGS, REPO

SNAPSHOT = Path(__file__).resolve().with_name("answers.tsv")

#: files under fixtures/ that are no training log: generators, truths (``x.truth.json``, and a real
#: writer's run folder's ``truth.json``), the config of a run folder, a folder's README
_NOT_INPUTS = (".py", "truth.json", ".yaml", ".pyc", ".md")
#: run folders under fixtures/ (read whole, as one input)
_RUN_DIRS = ("formats/mlflow_run", "formats/tb_run")

Analyse = Callable[[Path], Report]


def fixture_inputs() -> list[tuple[str, Path]]:
    """Every fixture log and run folder, keyed ``fixtures/<path>``, in path order."""
    dirs = [FIXTURES / d for d in _RUN_DIRS]
    out = [(f"fixtures/{d.relative_to(FIXTURES)}", d) for d in dirs if d.is_dir()]
    for p in sorted(FIXTURES.rglob("*")):
        if not p.is_file() or p.name.endswith(_NOT_INPUTS) or "__pycache__" in p.parts:
            continue
        if any(d in p.parents for d in dirs):
            continue
        out.append((f"fixtures/{p.relative_to(FIXTURES)}", p))
    return sorted(out)


def reallog_inputs(folder: Path = REALLOGS) -> list[tuple[str, Path]]:
    """Every log named in ../shared/reallogs/MANIFEST.tsv, keyed ``reallogs/<file>``; empty when absent."""
    manifest = folder / "MANIFEST.tsv"
    if not manifest.is_file():
        return []
    names = [line.split("\t", 1)[0] for line in manifest.read_text(encoding="utf-8").splitlines()[1:] if line]
    return sorted((f"reallogs/{n}", folder / n) for n in names)


def public_inputs() -> list[tuple[str, Path]]:
    """Every log of bench/realruns/public_manifest.tsv that the cache holds, keyed ``public/<name>``."""
    from bench.realruns import public

    cache = public.cache_dir()
    return sorted((f"public/{r['name']}", cache / r["name"]) for r in public.rows() if (cache / r["name"]).is_file())


def blind_inputs() -> list[tuple[str, Path]]:
    """Every dev-split log of the blind corpus (bench/blind) that its cache holds, keyed ``blind/<name>``."""
    from bench.blind import corpus

    cache = corpus.cache_dir()
    return sorted(
        (f"blind/{r['name']}", corpus.log_path(cache, r))  # in its run folder where it has sidecars
        for r in corpus.rows()
        if r["split"] == "dev" and (cache / r["name"]).is_file()
    )


def _finding_tokens(findings: tuple[Finding, ...]) -> str:
    counts = Counter(f"{f.code}{f.severity.label[0]}{'~' if f.evidence.get('explained_by') else ''}" for f in findings)
    return " ".join(t if n == 1 else f"{t}×{n}" for t, n in sorted(counts.items())) or "-"


def _steps(report: Report) -> str:
    st = report.meta.structure
    rows = report.run.table.height
    if st is None:
        return f"rows={rows}"
    plan = ""
    if st.planned is not None:
        plan = f" of {st.planned} {'reached' if st.finished else 'not reached' if st.finished is False else '?'}"
    return f"rows={rows} steps={st.first_step}-{st.last_step}{plan}"


def _runs(report: Report) -> str:
    if not report.runs:
        return "runs=1"
    parts = []
    for p in report.runs:
        codes = ",".join(dict.fromkeys(f.code for f in p.findings))
        parts.append("current" if p.current else f"{p.status}{':' + codes if codes else ''}")
    return f"runs={len(report.runs)}[{' '.join(parts)}]"


def line_for_report(key: str, report: Report) -> str:
    """The snapshot line of an analysed input."""
    failed = should_fail(gated_findings(report), Severity.WARNING)
    v = report.verdict
    verdict = f"{v.batching}({v.cause})" if v.batching == "not_batching" else v.batching
    exit_code = ExitCode.FINDINGS if failed else ExitCode.OK
    fields = [
        key,
        f"exit={exit_code.value}",
        report.status,
        verdict,
        _finding_tokens(report.findings),
        _steps(report),
        _runs(report),
    ]
    return "\t".join(fields)


def line_for(key: str, path: Path, analyse: Analyse) -> str:
    """The snapshot line of one input, analysed by ``analyse`` (a refusal is an answer too)."""
    try:
        report = analyse(path)
    except LogdoctorError as err:
        message = " ".join(str(err).replace(str(path), path.name).split())
        return "\t".join([key, f"exit={ExitCode.BAD_INPUT.value}", f"refused: {message}"])
    return line_for_report(key, report)


def recorded(snapshot: Path = SNAPSHOT) -> dict[str, str]:
    """The snapshot's lines by key (comment lines start with ``#``)."""
    if not snapshot.is_file():
        return {}
    lines = [ln for ln in snapshot.read_text(encoding="utf-8").splitlines() if ln and not ln.startswith("#")]
    return {ln.split("\t", 1)[0]: ln for ln in lines}


def current(analyse: Analyse, inputs: list[tuple[str, Path]]) -> Iterator[str]:
    """What the code answers now on ``inputs``."""
    for key, path in inputs:
        yield line_for(key, path, analyse)


def _analyse(path: Path) -> Report:
    from tests.reports import report_of

    return report_of(path)


_HEADER = (
    "# The answer on every fixture and real log: KEY exit STATUS VERDICT FINDINGS STEPS RUNS (tests/answers.py).\n"
    "# Written by `python -m tests.answers --update`; a commit that changes a line says why in its message.\n"
)


def main(argv: list[str] | None = None) -> int:
    """Print the lines that differ from the snapshot (exit 1), or write it anew with ``--update``."""
    ap = argparse.ArgumentParser(description="The snapshot of every fixture's and real log's answer.")
    ap.add_argument("--update", action="store_true", help="write tests/answers.tsv from the current answers")
    args = ap.parse_args(argv)
    old = recorded()
    inputs = fixture_inputs() + reallog_inputs() + public_inputs() + blind_inputs()
    new = dict(zip([k for k, _ in inputs], current(_analyse, inputs), strict=True))
    here = {k for k, _ in inputs}
    for prefix, where in (
        ("reallogs/", REALLOGS),
        ("public/", "$LOGDOCTOR_PUBLIC_LOGS"),
        ("blind/", "$LOGDOCTOR_BLIND_LOGS"),
    ):
        kept = [k for k in old if k.startswith(prefix) and k not in here]
        if kept:
            print(
                f"note: {len(kept)} {prefix[:-1]} lines kept as recorded: their logs are not in {where}",
                file=sys.stderr,
            )
    # a log absent here (the shared or public logs not fetched) keeps its recorded line
    new |= {k: v for k, v in old.items() if k not in here and not k.startswith("fixtures/")}
    changed = [k for k in sorted(old.keys() | new.keys()) if old.get(k) != new.get(k)]
    for k in changed:
        print(f"- {old[k]}" if k in old else f"- ({k}: no line)")
        print(f"+ {new[k]}" if k in new else f"+ ({k}: no longer an input)")
    if args.update:
        SNAPSHOT.write_text(_HEADER + "".join(f"{new[k]}\n" for k in sorted(new)), encoding="utf-8")
        print(f"wrote {SNAPSHOT.relative_to(REPO)}: {len(new)} lines, {len(changed)} changed", file=sys.stderr)
        return 0
    print(f"{len(changed)} of {len(new)} lines differ", file=sys.stderr)
    return 1 if changed else 0


if __name__ == "__main__":
    raise SystemExit(main())
