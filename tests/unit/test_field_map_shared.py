"""A configuration file's map is shared by many logs: a field one log lacks is no error there,
while a ``--map`` on the command line names this log's fields and must exist."""

from __future__ import annotations

import dataclasses

import pytest

from logdoctor.errors import ConfigError
from logdoctor.ingest.aliases import FieldMap
from logdoctor.ingest.parsers.base import ParseResult, check_overrides


def _result() -> ParseResult:
    import polars as pl

    frame = pl.DataFrame({"step": [1, 2], "loss": [1.0, 0.9]})
    return dataclasses.replace(ParseResult(frame), keys_seen=("step", "loss"))  # type: ignore[call-arg]


def test_command_line_map_of_a_missing_field_is_an_error() -> None:
    with pytest.raises(ConfigError, match="no such field"):
        check_overrides(_result(), FieldMap.parse(["loss=misspelled"]), "run.log")


def test_configuration_file_map_of_a_missing_field_is_accepted() -> None:
    shared = dataclasses.replace(FieldMap.parse(["loss=misspelled"]), shared=True)
    check_overrides(_result(), shared, "run.log")
