"""The batching diagnosis: combine findings and per-batch statistics into one Verdict."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from logdoctor.model import Finding, Run, Verdict


@dataclass(frozen=True, slots=True)
class Diagnosis:
    """The verdict, plus any findings and artifacts the diagnosis itself adds (LD5xx)."""

    verdict: Verdict
    findings: tuple[Finding, ...] = ()
    artifacts: dict[str, object] = field(default_factory=dict)


class BatchingDiagnosis:
    """Decide sorted / static / healthy / not_batching / inconclusive (interim: see issue 3)."""

    name = "batching"

    def diagnose(self, run: Run, findings: Sequence[Finding]) -> Diagnosis:
        """Return the verdict for a run given the detectors' findings."""
        if findings:
            return Diagnosis(Verdict("inconclusive", 0.0, "undetermined", "Findings present; batching not assessed yet."))
        return Diagnosis(Verdict("inconclusive", 0.0, "undetermined", "Batching not assessed yet."))
