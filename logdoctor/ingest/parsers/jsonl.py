"""JSON lines, one object per record (fairseq, W&B, LLaMA-Factory, ms-swift), or a JSON array."""

from __future__ import annotations

import dataclasses
import io
import re
from collections import Counter

import polars as pl

from logdoctor.errors import ParseError
from logdoctor.ingest import limits
from logdoctor.ingest.aliases import FieldMap
from logdoctor.ingest.parsers import ndjson
from logdoctor.ingest.parsers.base import Parser, ParseResult
from logdoctor.ingest.parsers.configdump import config_markers, dump_texts
from logdoctor.ingest.parsers.records import merge_skips, normalize_records, resolve_key
from logdoctor.ingest.sources import Source
from logdoctor.model import CANONICAL_COLUMNS, LINE_NO

#: Lines longer than this are not step records (ms-swift's final line embeds the whole history).
MAX_RECORD_CHARS = 100_000
_SNIFF_LINES = 40
# bare NaN / Infinity are not JSON, but Python's json module writes them: quote them
_ARRAY_START = re.compile(r"^\s*\[\s*\{")
_BARE = r"(:\s*)(-?(?:NaN|Infinity|nan|inf))(\s*[,}])"
#: A JSON key (nested ones too): a string, blanks, a colon.
_KEY = r'"((?:[^"\\]|\\.)*)"\s*:'
#: Lines sampled from a large log to see whether it is wide, and the keys past which it is counted.
WIDE_SAMPLE = 20_000
WIDE_HINT = 64


def _lines(source: Source) -> pl.DataFrame:
    """All lines, numbered from 1, stripped (one vectorised split, no per-line loop)."""
    data = source.read_bytes()
    if b"\r" not in data and b"\x1f" not in data and data.strip():
        try:  # polars splits valid UTF-8 without a Python string per line (~5x faster at 1M)
            return _split(data)
        except pl.exceptions.PolarsError:
            pass  # not UTF-8: decoded with replacement characters below
    text = source.text().replace("\r\n", "\n").replace("\r", "\n")
    lines = pl.Series("line", text.split("\n"), dtype=pl.String)
    if lines.len() and lines[-1] == "":
        lines = lines.head(lines.len() - 1)
    return (
        pl.DataFrame({"line": lines})
        .with_row_index(LINE_NO, offset=1)
        .with_columns(pl.col("line").str.strip_chars(), pl.col(LINE_NO).cast(pl.Int64))
    )


def _split(data: bytes) -> pl.DataFrame:
    """``_lines`` of UTF-8 bytes without CR or 0x1f; PolarsError when they are not UTF-8."""
    lines = pl.DataFrame({"line": ndjson.split_lines(data)})
    return lines.with_row_index(LINE_NO, offset=1).select(pl.col(LINE_NO).cast(pl.Int64), "line")


def _decode(lines: pl.DataFrame, fields: FieldMap, wide: bool = False) -> tuple[pl.DataFrame, int, str | None]:
    """Decode candidate object lines; returns (records with line_no, lines that were not JSON, the
    notice of the key budget or None).

    Fast path: one ``pl.read_ndjson`` over the lines. When some line is not valid JSON, or a key
    changes type between records (a number here, an object there), the lines are decoded one by
    one with ``json.loads`` (only then): bad lines are dropped and every value is kept as text,
    to be made numeric later.
    """
    lines = lines.with_columns(pl.col("line").str.replace_all(_BARE, '$1"$2"$3'))
    if lines.height == 0:
        return pl.DataFrame({LINE_NO: pl.Series([], dtype=pl.Int64)}), 0, None
    if wide:  # one column per key would be built: decoded under the key budget
        return _decode_slowly(lines, fields)
    try:
        text = lines["line"].str.join("\n").item()
        records = ndjson.read(lambda: io.StringIO(text), lines["line"])
        if records.height == lines.height:
            return records.with_columns(lines[LINE_NO]), 0, None
    except pl.exceptions.PolarsError:
        pass
    return _decode_slowly(lines, fields)


def _decode_raw(source: Source, lines: pl.DataFrame) -> pl.DataFrame | None:
    """Fast path when every line of the file is one JSON object: read the file's bytes as they
    are (no joined copy of the lines); None when the lines need quoting of bare NaN, have CRs or
    do not decode to one record each."""
    data = source.read_bytes()
    if b"\r" in data or lines["line"].str.contains(_BARE).any():
        return None
    try:
        records = ndjson.read(lambda: data, lines["line"])
    except pl.exceptions.PolarsError:
        return None
    return records.with_columns(lines[LINE_NO]) if records.height == lines.height else None


def _decode_slowly(lines: pl.DataFrame, fields: FieldMap | None = None) -> tuple[pl.DataFrame, int, str | None]:
    """Per-line fallback: nested objects flattened one level, scalars as strings, others dropped;
    at most ``limits.MAX_KEYS`` keys are kept (the canonical ones, then the most frequent: ``fields``
    resolves them), with the notice when some were dropped."""
    rows: list[dict[str, str | None]] = []
    keep: list[int] = []
    counts: Counter[str] = Counter()
    for no, text in zip(lines[LINE_NO].to_list(), lines["line"].to_list(), strict=True):
        try:
            obj = limits.loads(text)
        except ValueError:
            continue
        if isinstance(obj, dict):
            row = _flat_strings(obj)
            counts.update(row.keys())
            rows.append(row)
            keep.append(no)
    bad = lines.height - len(rows)
    if not rows:
        return pl.DataFrame({LINE_NO: pl.Series([], dtype=pl.Int64)}), bad, None
    always = {k for k in counts if resolve_key(k, fields or FieldMap()) in CANONICAL_COLUMNS}
    kept, note = limits.keep_keys(counts, always, records=len(rows))
    if note is not None:
        rows = [{k: v for k, v in row.items() if k in kept} for row in rows]
    frame = pl.from_dicts(rows, infer_schema_length=None)
    return frame.with_columns(pl.Series(LINE_NO, keep, dtype=pl.Int64)), bad, note


def _wide(lines: pl.Series) -> bool:
    """Whether the records may hold more than ``limits.MAX_KEYS`` distinct keys (nested ones
    counted), so that they are decoded under the key budget: counted exactly below
    ``ndjson.LARGE`` lines, else first on a sample of ``WIDE_SAMPLE`` lines spread over the log
    (exactly only when the sample holds more than ``WIDE_HINT`` keys: real logs hold a few dozen)."""
    if lines.len() >= ndjson.LARGE:
        step = max(1, lines.len() // WIDE_SAMPLE)
        if _distinct_keys(lines.gather_every(step)) <= WIDE_HINT:
            return False
    return _distinct_keys(lines) > limits.MAX_KEYS


def _distinct_keys(lines: pl.Series) -> int:
    return int(lines.str.extract_all(_KEY).explode().drop_nulls().n_unique())


def _flat_strings(obj: dict[str, object]) -> dict[str, str | None]:
    out: dict[str, str | None] = {}
    for key, value in obj.items():
        if isinstance(value, dict):
            for sub, v in value.items():
                if not isinstance(v, dict | list):
                    out[f"{key}/{sub}"] = None if v is None else str(v)
        elif not isinstance(value, list):
            out[key] = None if value is None else str(value)
    return out


def _parse_array(source: Source, fields: FieldMap) -> ParseResult:
    """A JSON array of record objects (a W&B history export saved as one JSON document)."""
    try:
        doc = limits.loads(source.text())
    except ValueError as err:
        raise ParseError(f"{source.name}: JSON array is not valid JSON ({err})") from None
    rows = [r for r in doc if isinstance(r, dict)] if isinstance(doc, list) else []
    if not rows:
        raise ParseError(f"{source.name}: JSON array holds no record objects")
    frame = pl.from_dicts([_flat_strings(r) for r in rows], infer_schema_length=None)
    frame = frame.with_row_index(LINE_NO, offset=1).with_columns(pl.col(LINE_NO).cast(pl.Int64))
    result = normalize_records(frame, fields, source.name, len(doc))
    return dataclasses.replace(result, notes=(*result.notes, "line_no = record index in the array"))


def _is_object(text: str) -> bool:
    try:
        return isinstance(limits.loads(text), dict)
    except ValueError:
        return False


class JsonLinesParser(Parser):
    """One JSON object per line; junk lines between records are skipped with a reason."""

    name = "jsonl"
    description = "JSON lines, one object per record (fairseq JSON, W&B export, LLaMA-Factory, ms-swift)"

    def sniff(self, source: Source) -> bool:
        if source.is_dir:
            return False
        if _ARRAY_START.match(source.head_text(4096)):
            return True
        head = source.head_text().splitlines()
        if len(source.head_bytes()) >= 64 * 1024 and len(head) > 1:
            head = head[:-1]  # the last line of a cut head may be incomplete
        lines = [ln.strip() for ln in head if ln.strip()][:_SNIFF_LINES]
        if not lines:
            return False
        good = sum(1 for ln in lines if ln.startswith("{") and _is_object(ln))
        return good >= 1 and good * 2 >= len(lines)

    def parse(self, source: Source, fields: FieldMap) -> ParseResult:
        if _ARRAY_START.match(source.head_text(4096)):
            return _parse_array(source, fields)
        lines = _lines(source)
        n_read = lines.height
        nonempty = lines.filter(pl.col("line") != "")
        is_obj = pl.col("line").str.starts_with("{") & pl.col("line").str.ends_with("}")
        too_long = pl.col("line").str.len_chars() > MAX_RECORD_CHARS
        skips = {
            "not a JSON object": nonempty.filter(~is_obj).height,
            f"line over {MAX_RECORD_CHARS:,} characters (not a step record)": nonempty.filter(is_obj & too_long).height,
        }
        objects = nonempty.filter(is_obj & ~too_long)
        wide = objects.height > 0 and _wide(objects["line"])
        records = _decode_raw(source, objects) if objects.height == n_read and not wide else None
        bad, note = 0, None
        if records is None:
            records, bad, note = _decode(objects, fields, wide)
        skips["not a JSON object"] += bad
        if records.width <= 1:
            raise ParseError(f"{source.name}: no JSON object records found ({n_read} lines read)")
        result = normalize_records(records, fields, source.name, n_read)
        if texts := dump_texts(records):  # MMDetection 2.x: the config as text in the first record
            result = dataclasses.replace(result, markers=config_markers(texts))
        if note:
            result = dataclasses.replace(result, notes=(*result.notes, note))
        return merge_skips(result, skips)
