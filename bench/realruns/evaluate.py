"""The batching verdict on the real training runs kept in fixtures/realruns, against their truth.

Usage::

    python bench/realruns/evaluate.py            # a table by strategy, then every run
"""

from __future__ import annotations

import json
import sys
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from logdoctor import pipeline

FIX = Path(__file__).resolve().parents[2] / "fixtures" / "realruns"


def verdicts(root: Path = FIX) -> list[tuple[dict[str, object], str, str]]:
    """(truth, verdict, summary) for every batching run under ``root`` (the ``pathology_*`` runs of
    pathologies.py have their own truths and test)."""
    out = []
    for truth_path in sorted(p for p in root.glob("*.truth.json") if not p.name.startswith("pathology_")):
        truth = json.loads(truth_path.read_text(encoding="utf-8"))
        log = truth_path.with_name(truth_path.name.replace(".truth.json", ".log"))
        v = pipeline.analyze(pipeline.load(str(log))).verdict
        assert v is not None
        out.append((truth, v.batching, v.summary))
    return out


def main() -> int:
    """Print the accuracy by strategy and the must-not count."""
    rows = verdicts()
    by: dict[str, list[bool]] = defaultdict(list)
    must_not = 0
    for truth, got, _ in rows:
        key = f"{truth['kind']} {truth['strategy']}"
        by[key].append(got == truth["expected_verdict"])
        must_not += int(got in truth["must_not"])  # type: ignore[operator]
    print("| pipeline (framework, sampler) | runs | right |\n|---|---|---|")
    for key in sorted(by):
        print(f"| {key} | {len(by[key])} | {sum(by[key])} |")
    right = sum(sum(v) for v in by.values())
    print(
        f"\naccuracy {right}/{len(rows)}; shuffled/bucketed/random runs called sorted, static or grouped: {must_not}\n"
    )
    for truth, got, summary in rows:
        mark = "ok " if got == truth["expected_verdict"] else "XX "
        print(f"{mark}{truth['name']}: expected {truth['expected_verdict']}, got {got}: {summary[:160]}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
