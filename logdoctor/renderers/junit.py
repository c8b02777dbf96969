"""JUnit XML for CI servers (GitLab, Jenkins): one test case per rule, failed where it fired."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from collections.abc import Sequence

from logdoctor import sanitize
from logdoctor.codes import RULES
from logdoctor.model import Outcome, Report
from logdoctor.renderers.base import Renderer
from logdoctor.renderers.evidence import evidence_sentences
from logdoctor.renderers.rows import batching_line, headline, where
from logdoctor.renderers.runlines import earlier_lines, earlier_title


def _suite(report: Report) -> ET.Element:
    name = report.meta.path
    fired: dict[str, list] = {}
    for f in report.findings:
        fired.setdefault(f.code, []).append(f)
    # an info finding is a remark, not a failure: CI jobs must not go red over it
    # ... nor over a symptom the verdict explains: the failures are the report's problems (its status)
    failing = {f.code for f in report.problems}
    suite = ET.Element(
        "testsuite",
        name=name,
        tests=str(len(RULES)),
        failures=str(len(failing)),
        errors="0",
        skipped="0",
        time="0",
    )
    for code, rule in RULES.items():
        case = ET.SubElement(suite, "testcase", classname=f"logdoctor.{name}", name=f"{code} {rule.name}", time="0")
        found = fired.get(code)
        if not found:
            continue
        worst = max(f.severity for f in found)
        first = found[0]
        if code in failing:
            fail = ET.SubElement(case, "failure", type=worst.label, message=f"{first.message} ({where(first)})")
        else:
            fail = ET.SubElement(case, "system-out")
        details = []
        for f in found:
            loc = where(f) + (f", log line {f.line}" if f.line else "")
            details.append(f"[{f.severity.label}] {loc}: {f.message}")
            details += [f"  - {e}" for e in evidence_sentences(f.evidence)]
        details.append(f"What to do: {rule.action}")
        fail.text = "\n".join(details)
    out = ET.SubElement(suite, "system-out")
    health = [f"{level.upper()} {text}".strip() for level, text in headline(report)]
    earlier = (earlier_title(report), *(f"- {x}" for x in earlier_lines(report))) if report.earlier_runs else ()
    out.text = "\n".join([f"status: {report.status}", *health, batching_line(report), *earlier])
    return suite


def _error_suite(o: Outcome) -> ET.Element:
    suite = ET.Element("testsuite", name=o.path, tests="1", failures="0", errors="1", skipped="0", time="0")
    case = ET.SubElement(suite, "testcase", classname=f"logdoctor.{o.path}", name="load", time="0")
    ET.SubElement(case, "error", type="input", message=o.error or "cannot analyse")
    return suite


def _document(suites: list[ET.Element]) -> str:
    root = ET.Element("testsuites", name="logdoctor")
    for key in ("tests", "failures", "errors"):
        root.set(key, str(sum(int(s.get(key, "0")) for s in suites)))
    root.extend(suites)
    for el in root.iter():  # one place: every text and attribute of the document, the log's and ours
        el.text, el.tail = (None if t is None else sanitize.xml(t) for t in (el.text, el.tail))
        for key, value in el.attrib.items():
            el.set(key, sanitize.xml(value))
    ET.indent(root)
    return ET.tostring(root, encoding="unicode", xml_declaration=True) + "\n"


class JunitRenderer(Renderer):
    """``--format junit``: a ``<testsuites>`` document with one suite per run."""

    name = "junit"
    documents_errors = True
    extension = ".xml"

    def render(self, report: Report) -> str:
        return _document([_suite(report)])

    def render_many(self, reports: Sequence[Report]) -> str:
        return _document([_suite(r) for r in reports])

    def render_outcomes(self, outcomes: Sequence[Outcome]) -> str:
        return _document([_suite(o.report) if o.report else _error_suite(o) for o in outcomes])
