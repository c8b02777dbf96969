"""The ordered registry of parsers and format sniffing."""

from __future__ import annotations

from logdoctor.errors import InputError, ParseError
from logdoctor.ingest.parsers.base import Parser, ParseResult
from logdoctor.ingest.parsers.csvlog import CsvParser
from logdoctor.ingest.parsers.epochtable import EpochTableParser
from logdoctor.ingest.parsers.hf_state import HfTrainerStateParser
from logdoctor.ingest.parsers.jsonl import JsonLinesParser
from logdoctor.ingest.parsers.mlflow import MlflowParser
from logdoctor.ingest.parsers.tensorboard import TensorBoardParser
from logdoctor.ingest.parsers.text import TextParser
from logdoctor.ingest.parsers.wandb import WandbParser
from logdoctor.ingest.parsers.yolotxt import YoloResultsParser
from logdoctor.ingest.sources import Source

#: Ordered: the first parser whose ``sniff`` accepts the content reads it. Specific formats come
#: before general ones; the free-form text parser is last.
PARSERS: tuple[Parser, ...] = (
    TensorBoardParser(),
    WandbParser(),
    MlflowParser(),
    HfTrainerStateParser(),
    JsonLinesParser(),
    YoloResultsParser(),
    CsvParser(),
    EpochTableParser(),
    TextParser(),
)


def get_parser(name: str) -> Parser:
    """The registered parser called ``name``; ParseError names the known ones otherwise."""
    for p in PARSERS:
        if p.name == name:
            return p
    raise ParseError(f"unknown format {name!r} (known: {', '.join(p.name for p in PARSERS)})")


def ensure_content(source: Source) -> None:
    """Raise InputError for a file (or stdin) with nothing but whitespace in it."""
    if not source.is_dir and not source.head_bytes().strip():
        raise InputError(f"{source.name}: file is empty")


def sniff(source: Source) -> Parser:
    """Pick the parser for a source from its content.

    Raises:
        InputError: empty, binary or unrecognised content.
    """
    ensure_content(source)
    for parser in PARSERS:
        if parser.sniff(source):
            return parser
    if source.is_dir:
        raise InputError(f"{source.name}: is a directory, and not an MLflow run, W&B run or TensorBoard log dir")
    if b"\x00" in source.head_bytes(8192):
        raise InputError(f"{source.name}: binary file, not a training log")
    raise ParseError(f"{source.name}: unrecognised log format")


__all__ = [
    "PARSERS",
    "ParseResult",
    "Parser",
    "ensure_content",
    "get_parser",
    "sniff",
]
