"""Every fixture's and real log's answer against its reviewed line in tests/answers.tsv.

A test of presence ("LD410 is found on this log") cannot see a false warning added beside it; the
snapshot sees any change to any answer: the exit code of ``check``, the status, the verdict, every
finding's code and severity, the steps and the appended runs (tests/answers.py says how to update it).
"""

from __future__ import annotations

import csv
import dataclasses
import hashlib
import subprocess
from pathlib import Path

import pytest

from bench.blind import corpus
from bench.realruns import public
from logdoctor import codes, pipeline
from logdoctor.detectors import base
from logdoctor.errors import LogdoctorError
from logdoctor.model import Report, Run, Severity
from scripts import fetch_reallogs
from tests import answers
from tests.reports import report_of

RECORDED = answers.recorded()
FIXTURES = answers.fixture_inputs()
REAL_KEYS = sorted(k for k in RECORDED if k.startswith("reallogs/"))
PUBLIC_KEYS = sorted(k for k in RECORDED if k.startswith("public/"))
BLIND_KEYS = sorted(k for k in RECORDED if k.startswith("blind/"))

_HOW = (
    "\nIf the change is right: `python -m tests.answers --update`, and say in the commit message why this "
    "line changed (`python -m tests.answers` lists every line that differs)."
)


def _check(key: str, path: Path) -> None:
    got = answers.line_for(key, path, report_of)
    want = RECORDED.get(key, f"({key}: no line in tests/answers.tsv)")
    assert got == want, f"the answer on {key} changed:\n- {want}\n+ {got}{_HOW}"


@pytest.mark.parametrize(("key", "path"), FIXTURES, ids=[k for k, _ in FIXTURES])
def test_fixture_answer(key: str, path: Path) -> None:
    _check(key, path)


@pytest.mark.reallogs
@pytest.mark.parametrize("key", REAL_KEYS)
def test_reallog_answer(reallogs_dir: Path, key: str) -> None:
    _check(key, reallogs_dir / key.removeprefix("reallogs/"))


@pytest.mark.publiclogs
@pytest.mark.parametrize("key", PUBLIC_KEYS)
def test_public_log_answer(key: str) -> None:
    path = public.cache_dir() / key.removeprefix("public/")
    if not path.is_file():
        pytest.skip(f"{path} is not here (python bench/realruns/public.py fetch)")
    _check(key, path)


@pytest.mark.publiclogs
@pytest.mark.parametrize("key", BLIND_KEYS)
def test_blind_dev_log_answer(key: str) -> None:
    name = key.removeprefix("blind/")
    if not (corpus.cache_dir() / name).is_file():
        pytest.skip(f"{name} is not in {corpus.cache_dir()} (python bench/blind/corpus.py fetch)")
    row = next(r for r in corpus.rows() if r["name"] == name)
    _check(key, corpus.log_path(corpus.cache_dir(), row))  # in its run folder where it has sidecars


def test_every_blind_dev_log_has_a_line_and_no_holdout_log_has_one() -> None:
    dev = {f"blind/{r['name']}" for r in corpus.rows() if r["split"] == "dev"}
    assert dev == set(BLIND_KEYS), _HOW


def test_every_public_log_has_a_line() -> None:
    assert {f"public/{r['name']}" for r in public.rows()} == set(PUBLIC_KEYS), _HOW


def test_every_fixture_has_a_line() -> None:
    keys = {k for k, _ in FIXTURES}
    recorded = {k for k in RECORDED if k.startswith("fixtures/")}
    assert keys - recorded == set(), f"fixtures without an answer in tests/answers.tsv{_HOW}"
    assert recorded - keys == set(), f"lines for fixtures that are gone{_HOW}"


@pytest.mark.reallogs
def test_every_reallog_has_a_line(reallogs_dir: Path) -> None:
    assert {k for k, _ in answers.reallog_inputs(reallogs_dir)} == set(REAL_KEYS), _HOW


# The snapshot's own tests: a wrong rule on any one log must change that log's line.


class _FalseDivergence(base.Analyzer):
    """A deliberately wrong rule: calls every run divergent."""

    name = "false_divergence"

    def analyze(self, run: Run) -> base.Detection:
        return base.Detection(findings=(codes.finding("LD002", "planted"),))


def test_a_wrong_rule_on_a_real_log_fails_its_line(
    reallogs_or_fixture: tuple[str, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    key, path = reallogs_or_fixture
    import logdoctor.detectors as detectors

    monkeypatch.setattr(detectors, "ANALYZERS", (*detectors.ANALYZERS, _FalseDivergence))
    planted = answers.line_for(key, path, lambda p: pipeline.analyze(pipeline.load(str(p))))
    assert planted != RECORDED[key]
    assert "LD002e" in planted.split("\t")[4]


@pytest.fixture
def reallogs_or_fixture() -> tuple[str, Path]:
    """A healthy real log when ../shared/reallogs is here, else a healthy fixture."""
    real = dict(answers.reallog_inputs())
    key = "reallogs/fairseq_iwslt14_baseline_train.log"
    if key in real:
        return key, real[key]
    return "fixtures/sim/shuffled.log", answers.FIXTURES / "sim" / "shuffled.log"


def _every_answered_report() -> list[tuple[str, Report]]:
    out = []
    for key, path in FIXTURES + answers.reallog_inputs():
        try:
            out.append((key, report_of(path)))
        except LogdoctorError:  # a refusal has no findings to plant beside
            continue
    return out


@pytest.mark.parametrize("code", ["LD201", "LD415"])
def test_a_planted_finding_changes_every_line(code: str) -> None:
    """On every input, one more finding, a warning or only an info one, is seen."""
    for key, report in _every_answered_report():
        planted = dataclasses.replace(report, findings=(codes.finding(code, "planted"), *report.findings))
        assert answers.line_for_report(key, planted) != RECORDED[key], key


def test_a_changed_severity_changes_the_line() -> None:
    """On every input with a finding, its first finding one severity up (or down from an error) is seen."""
    order = list(Severity)
    for key, report in _every_answered_report():
        if not report.findings:
            continue
        first = report.findings[0]
        i = order.index(first.severity)
        other = order[i + 1] if i + 1 < len(order) else order[i - 1]
        changed = dataclasses.replace(
            report, findings=(dataclasses.replace(first, severity=other), *report.findings[1:])
        )
        assert answers.line_for_report(key, changed) != RECORDED[key], key


@pytest.mark.reallogs
def test_fetch_list_names_every_reallog_at_its_commit(reallogs_dir: Path) -> None:
    """scripts/reallogs_sources.tsv (what a checkout without the shared logs fetches) is the manifest's list."""
    with (reallogs_dir / "MANIFEST.tsv").open(encoding="utf-8", newline="") as fh:
        manifest = {r["file"]: (r["repo"], r["path"], r["commit"]) for r in csv.DictReader(fh, delimiter="\t")}
    listed = {r["file"]: r for r in fetch_reallogs.sources()}
    assert {f: (r["repo"], r["path"], r["commit"]) for f, r in listed.items()} == manifest
    for name, row in listed.items():
        assert hashlib.sha256((reallogs_dir / name).read_bytes()).hexdigest() == row["sha256"], name


def test_fetch_reallogs_from_a_mirror(tmp_path: Path) -> None:
    """The fetch script writes each log as committed and the manifest the tests look for; a copy that
    differs from the snapshot's is said, and exits 1."""
    repo = tmp_path / "mirrors" / "someone+project"
    (repo / "logs").mkdir(parents=True)
    (repo / "logs" / "train.log").write_text("step 1 loss 2.0\n", encoding="utf-8")
    git = ["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@t"]
    subprocess.run([*git[:3], "init", "-q"], check=True)
    subprocess.run([*git, "add", "."], check=True)
    subprocess.run([*git, "commit", "-qm", "log"], check=True)
    commit = subprocess.run([*git[:3], "rev-parse", "HEAD"], check=True, capture_output=True, text=True).stdout.strip()
    good = hashlib.sha256(b"step 1 loss 2.0\n").hexdigest()
    listing = tmp_path / "sources.tsv"
    listing.write_text(
        "file\trepo\tpath\tcommit\tsha256\n"
        f"a.log\tsomeone/project\tlogs/train.log\t{commit}\t{good}\n"
        f"b.log\tsomeone/project\tlogs/train.log\t{commit}\t{'0' * 64}\n",
        encoding="utf-8",
    )
    into = tmp_path / "reallogs"
    code = fetch_reallogs.main(["--into", str(into), "--mirrors", str(tmp_path / "mirrors"), "--sources", str(listing)])
    assert code == 1  # b.log differs from its recorded copy
    assert (into / "a.log").read_bytes() == b"step 1 loss 2.0\n"
    assert (into / "MANIFEST.tsv").read_text(encoding="utf-8").splitlines()[1:] == [
        f"a.log\tsomeone/project\tlogs/train.log\t{commit}",
        f"b.log\tsomeone/project\tlogs/train.log\t{commit}",
    ]
