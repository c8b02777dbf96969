"""`logdoctor compare`: did the fix work, and what did it cost? (a baseline run against candidates)."""

from __future__ import annotations

from logdoctor.comparison.build import compare_paths, compare_reports
from logdoctor.comparison.result import Comparison, FindingRef, Matched, Symptom, Versus

__all__ = ["Comparison", "FindingRef", "Matched", "Symptom", "Versus", "compare_paths", "compare_reports"]
