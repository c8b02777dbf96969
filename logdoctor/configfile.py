"""Configuration files: ``[tool.logdoctor]`` in pyproject.toml or a ``logdoctor.toml``."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from logdoctor import codes
from logdoctor.config import AnalysisConfig
from logdoctor.detectors import ANALYZERS, Analyzer
from logdoctor.diagnosis.batching import BatchingDiagnosis
from logdoctor.errors import ConfigError
from logdoctor.ingest.aliases import FieldMap
from logdoctor.model import Severity
from logdoctor.options import Value, check_options

TOP_KEYS = ("select", "ignore", "fail-on", "map", "steps-per-epoch", "stride")


#: Largest ``--stride``: a row that stands for more optimizer steps than this is a typo.
MAX_STRIDE = 10**9


def check_stride(value: object, what: str) -> int:
    """``value`` as a stride (optimizer steps per row): an integer in [1, MAX_STRIDE], or ConfigError."""
    if not isinstance(value, int) or isinstance(value, bool) or not 1 <= value <= MAX_STRIDE:
        raise ConfigError(f"{what}: expected an integer in [1, {MAX_STRIDE}] (optimizer steps per row), got {value!r}")
    return value


def check_steps_per_epoch(value: object, what: str) -> int:
    """``value`` as steps per epoch: a positive integer, or ConfigError."""
    if not isinstance(value, int) or isinstance(value, bool) or value < 1:
        raise ConfigError(f"{what} must be a positive integer, got {value!r}")
    return value


def detectors() -> dict[str, type[Analyzer] | type[BatchingDiagnosis]]:
    """Configurable detectors by name: the ANALYZERS registry plus the batching diagnosis."""
    return {**{cls.name: cls for cls in ANALYZERS}, BatchingDiagnosis.name: BatchingDiagnosis}


def find_config(start: Path | None = None, note: Callable[[str], None] | None = None) -> Path | None:
    """The nearest ``logdoctor.toml`` or ``pyproject.toml`` with ``[tool.logdoctor]``, upwards.

    A pyproject.toml that cannot be read or parsed and does not mention ``tool.logdoctor`` belongs to
    another project: it is passed over, with a ``note``, rather than blocking every command.
    """
    here = (start or Path.cwd()).resolve()
    for folder in (here, *here.parents):
        if (folder / "logdoctor.toml").is_file():
            return folder / "logdoctor.toml"
        pyproject = folder / "pyproject.toml"
        if pyproject.is_file() and _ours(pyproject, note):
            return pyproject
    return None


def _ours(pyproject: Path, note: Callable[[str], None] | None) -> bool:
    """Whether ``pyproject`` holds a logdoctor table; ConfigError only when it is ours and broken."""
    try:
        tool = _read(pyproject).get("tool", {})
        return isinstance(tool, dict) and "logdoctor" in tool
    except ConfigError as err:
        try:
            mentions = b"tool.logdoctor" in pyproject.read_bytes()
        except OSError:
            mentions = False
        if mentions:
            raise
        if note:
            note(f"ignoring {err} (it has no [tool.logdoctor])")
        return False


def _read(path: Path) -> dict[str, Any]:
    import tomllib  # here: without a config file (the usual run) no TOML parser is loaded (~1.4 ms)

    try:
        with path.open("rb") as fh:
            return tomllib.load(fh)
    except OSError as err:
        raise ConfigError(f"{path}: cannot read ({err.strerror or err})") from None
    except UnicodeDecodeError:
        raise ConfigError(f"{path}: invalid TOML (not UTF-8 text)") from None
    except tomllib.TOMLDecodeError as err:
        raise ConfigError(f"{path}: invalid TOML ({err})") from None
    except RecursionError:
        raise ConfigError(f"{path}: TOML nested too deeply to read") from None


def load_table(path: Path) -> tuple[dict[str, Any], str]:
    """The logdoctor table of a config file and how to name it in messages."""
    doc = _read(path)
    if path.name != "pyproject.toml":  # logdoctor.toml, or any file named by --config
        return doc, str(path)
    tool = doc.get("tool", {})
    table = tool.get("logdoctor", {}) if isinstance(tool, dict) else {}
    where = f"[tool.logdoctor] in {path}"
    if not isinstance(table, dict):
        raise ConfigError(f"{where}: must be a table (got {type(table).__name__} {table!r})")
    return table, where


def check_patterns(patterns: Iterable[str], what: str) -> tuple[str, ...]:
    """Validate ``select``/``ignore`` entries: a code, a code prefix (``LD1``) or a rule name."""
    out = []
    for p in patterns:
        p = p.strip()
        if not any(code.startswith(p) for code in codes.RULES) and p not in codes.RULES_BY_NAME:
            raise ConfigError(f"{what}: {p!r} is not a finding code, code prefix or rule name")
        out.append(p)
    return tuple(out)


def _patterns(value: Any, what: str) -> tuple[str, ...]:
    if isinstance(value, str):
        value = value.split(",")
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ConfigError(f"{what} must be a list of codes or rule names")
    return check_patterns([v for v in value if v.strip()], what)


def _options(name: str, table: Any, where: str) -> dict[str, Value]:
    known = detectors()
    if name not in known:
        raise ConfigError(f"{where}: unknown key {name!r} (known: {', '.join([*TOP_KEYS, *known])})")
    if not isinstance(table, dict):
        raise ConfigError(f"{where}: [{name}] must be a table of thresholds")
    return check_options(name, known[name].options, table, where)


def config_from_table(table: Mapping[str, Any], where: str) -> AnalysisConfig:
    """Build an AnalysisConfig from a parsed logdoctor table; ConfigError names any bad key."""
    cfg = AnalysisConfig()
    options: dict[str, dict[str, float | int | str | bool]] = {}
    for key, value in table.items():
        if key == "select":
            cfg = dataclasses.replace(cfg, select=_patterns(value, f"{where}: select"))
        elif key == "ignore":
            cfg = dataclasses.replace(cfg, ignore=_patterns(value, f"{where}: ignore"))
        elif key == "fail-on":
            try:
                cfg = dataclasses.replace(cfg, fail_on=Severity.parse(str(value)))
            except ValueError as err:
                raise ConfigError(f"{where}: fail-on: {err}") from None
        elif key == "map":
            if not isinstance(value, dict):
                raise ConfigError(f'{where}: map must be a table of canonical = "source"')
            if not all(isinstance(v, str) and v for v in value.values()):
                raise ConfigError(f"{where}: map values must be source field names (strings)")
            try:
                fields = FieldMap.parse(f"{k}={v}" for k, v in value.items())
            except ConfigError as err:
                raise ConfigError(f"{where}: map: {str(err).removeprefix('--map ')}") from None
            cfg = dataclasses.replace(cfg, fields=dataclasses.replace(fields, shared=True))
        elif key == "steps-per-epoch":
            cfg = dataclasses.replace(cfg, steps_per_epoch=check_steps_per_epoch(value, f"{where}: steps-per-epoch"))
        elif key == "stride":
            cfg = dataclasses.replace(cfg, stride=check_stride(value, f"{where}: stride"))
        else:
            options[key] = _options(key, value, where)
    return dataclasses.replace(cfg, options=options)


def resolve(
    config: str | None = None,
    *,
    start: Path | None = None,
    note: Callable[[str], None] | None = None,
    **overrides: Any,
) -> AnalysisConfig:
    """The configuration in force: the file (given or nearest), then command-line overrides.

    Args:
        config: an explicit config file (``--config``); None to search from ``start``/cwd.
        start: where the upward search begins.
        note: told of files passed over (an unrelated, broken pyproject.toml).
        **overrides: AnalysisConfig fields given on the command line; None means "not given".
    """
    path = Path(config) if config else find_config(start, note)
    if config and path is not None and not path.is_file():
        raise ConfigError(f"--config {config}: {'is a directory' if path.is_dir() else 'no such file'}")
    cfg = config_from_table(*load_table(path)) if path else AnalysisConfig()
    given = {k: v for k, v in overrides.items() if v not in (None, (), [])}
    for key in ("select", "ignore"):
        if key in given:
            given[key] = check_patterns(given[key], f"--{key}")
    return dataclasses.replace(cfg, **given)


def split(values: Sequence[str] | None) -> tuple[str, ...]:
    """Option values as given (``--select LD1,LD2 --select LD5``) -> one entry per comma-separated item."""
    return tuple(v.strip() for item in values or [] for v in item.split(",") if v.strip())


def from_options(
    config: str | None,
    field_map: Sequence[str] | None,
    steps_per_epoch: int | None,
    select: Sequence[str] | None,
    ignore: Sequence[str] | None,
    fail_on: str | None = None,
    max_memory: str | None = None,
    stride: str | None = None,
    *,
    note: Callable[[str], None] | None = None,
) -> AnalysisConfig:
    """The configuration in force for a command's options, spelled as on the command line (``--map``
    entries ``canonical=source``, ``--select`` lists, sizes and strides as text); None: not given.
    The one place the commands and the Python API build their AnalysisConfig (defaults: the config
    file, given or nearest, then AnalysisConfig's own). ConfigError names the bad option."""
    from logdoctor.ingest import memory

    try:
        severity = Severity.parse(fail_on) if fail_on else None
    except ValueError as err:
        raise ConfigError(f"--fail-on: {err}") from None
    fields = FieldMap.parse(field_map) if field_map else None
    if steps_per_epoch is not None:
        check_steps_per_epoch(steps_per_epoch, "--steps-per-epoch")
    given = None
    if stride is not None:  # read here, not by typer: a bad value is one line, not a usage screen
        given = check_stride(int(stride) if stride.strip().isdigit() else stride, "--stride")
    cfg = resolve(
        config,
        note=note,
        fields=fields,
        steps_per_epoch=steps_per_epoch,
        select=split(select),
        ignore=split(ignore),
        fail_on=severity,
        stride=given,
    )
    return dataclasses.replace(cfg, max_memory=memory.parse_size(max_memory)) if max_memory else cfg
