"""The public surface is the names in ``logdoctor.__all__``: each resolves, is documented, is typed,
and importing the package loads none of polars, numpy or matplotlib until a name needs them."""

from __future__ import annotations

import pkgutil
import re
import subprocess
import sys
from pathlib import Path

import pytest

import logdoctor

REPO = Path(__file__).resolve().parents[2]
HEAVY = ("polars", "numpy", "matplotlib", "pandas", "scipy", "rich", "typer")


def _loaded_after(code: str) -> list[str]:
    probe = f"import sys; {code}; print(sorted(m for m in {HEAVY!r} if m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", probe], cwd=REPO, capture_output=True, text=True, check=True)
    return eval(out.stdout)  # a list literal printed by the probe above


def test_importing_logdoctor_loads_no_heavy_module() -> None:
    assert _loaded_after("import logdoctor") == []
    assert _loaded_after("import logdoctor; logdoctor.LogdoctorError; dir(logdoctor)") == []


def test_a_call_loads_what_it_needs_and_a_name_nothing_heavy() -> None:
    assert _loaded_after(f"from logdoctor import {', '.join(n for n in logdoctor.__all__)}") == []
    loaded = _loaded_after("import logdoctor; logdoctor.analyze('fixtures/example.log')")
    assert {"polars", "numpy"} <= set(loaded) and "matplotlib" not in loaded and "typer" not in loaded


def test_every_public_name_resolves() -> None:
    for name in logdoctor.__all__:
        assert getattr(logdoctor, name) is not None
    assert set(logdoctor.__all__) <= set(dir(logdoctor))
    with pytest.raises(AttributeError, match="no attribute 'nothing_here'"):
        _ = logdoctor.nothing_here  # type: ignore[attr-defined]


def test_the_errors_share_the_root_the_cli_catches() -> None:
    from logdoctor import errors

    for name in ("InputError", "ParseError", "ConfigError", "OutputError"):
        cls = getattr(logdoctor, name)
        assert issubclass(cls, logdoctor.LogdoctorError) and cls is getattr(errors, name)


def test_no_public_name_is_a_module_of_the_package() -> None:
    """Importing a submodule binds it on the package: a public function named like one would be
    replaced by the module the first time anything imported it (hence comparison/, not compare/)."""
    modules = {m.name for m in pkgutil.iter_modules(logdoctor.__path__)}
    assert not set(logdoctor.__all__) & modules


def test_analyze_survives_every_module_being_imported() -> None:
    import logdoctor.api
    import logdoctor.comparison.build

    assert callable(logdoctor.compare) and callable(logdoctor.analyze)


def test_the_package_says_it_is_typed() -> None:
    assert (REPO / "logdoctor" / "py.typed").is_file()


def test_every_public_name_is_documented() -> None:
    doc = (REPO / "docs" / "api.md").read_text(encoding="utf-8")
    missing = [n for n in logdoctor.__all__ if n != "__version__" and not re.search(rf"`(logdoctor\.)?{n}\b", doc)]
    assert missing == []


def test_the_readme_points_at_the_api() -> None:
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    assert "## Python API" in readme and "docs/api.md" in readme
