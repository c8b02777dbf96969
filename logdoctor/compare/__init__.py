"""`logdoctor compare`: did the fix work, and what did it cost? (a baseline run against candidates)."""

from __future__ import annotations

from logdoctor.compare.build import compare_paths, compare_reports
from logdoctor.compare.result import Comparison, FindingRef, Matched, Symptom, Versus

__all__ = ["Comparison", "FindingRef", "Matched", "Symptom", "Versus", "compare_paths", "compare_reports"]
