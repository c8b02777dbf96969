"""logdoctor: diagnose machine-learning training logs, with evidence.

The public Python API is the names in ``__all__`` (docs/api.md); every module and every other name
is private and may change. Importing the package loads none of polars, numpy or matplotlib: each
name below is imported on first use (PEP 562), the errors alone at once.
"""

from __future__ import annotations

from importlib import import_module

from logdoctor.errors import ConfigError, InputError, LogdoctorError, OutputError, ParseError

__version__ = "0.1.0"

#: public name -> the module that defines it. A new entry point (one that returns a Report) adds
#: its name here and to ``__all__``, beside a TYPE_CHECKING import; a public name is never also the
#: name of a module or package of logdoctor (importing that would rebind the name to the module).
_LAZY: dict[str, str] = {
    "analyze": "logdoctor.api",
    "compare": "logdoctor.api",
    "probe": "logdoctor.api",
    "assert_sampler_ok": "logdoctor.api",
    "Report": "logdoctor.results",
    "Reports": "logdoctor.results",
    "Comparison": "logdoctor.compareresult",
    "Finding": "logdoctor.model",
    "Verdict": "logdoctor.model",
    "Severity": "logdoctor.model",
    "RunStructure": "logdoctor.model",
    "RunPart": "logdoctor.model",
}

__all__ = [
    "Comparison",
    "ConfigError",
    "Finding",
    "InputError",
    "LogdoctorError",
    "OutputError",
    "ParseError",
    "Report",
    "Reports",
    "RunPart",
    "RunStructure",
    "Severity",
    "Verdict",
    "__version__",
    "analyze",
    "assert_sampler_ok",
    "compare",
    "probe",
]

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (~7 ms); type checkers read it as True
if TYPE_CHECKING:
    from typing import Any

    from logdoctor.api import analyze, assert_sampler_ok, compare, probe
    from logdoctor.compareresult import Comparison
    from logdoctor.model import Finding, RunPart, RunStructure, Severity, Verdict
    from logdoctor.results import Report, Reports


if not TYPE_CHECKING:  # a checker sees the imports above, and no name outside them

    def __getattr__(name: str) -> Any:
        """A public name's value, its module imported on first use."""
        module = _LAZY.get(name)
        if module is None:
            raise AttributeError(f"module 'logdoctor' has no attribute {name!r}")
        value = getattr(import_module(module), name)
        globals()[name] = value  # later look-ups are plain attribute reads
        return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_LAZY})
