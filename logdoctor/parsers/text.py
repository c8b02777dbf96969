"""Free-form text logs: ``step N ... key=value`` lines (minimal version; see issue 2)."""

from __future__ import annotations

import io

import polars as pl

from logdoctor.aliases import FieldMap
from logdoctor.errors import ParseError
from logdoctor.parsers.base import Parser, ParseResult
from logdoctor.sources import Source

_STEP = r"(?i)\b(?:step|iter|iteration)\s*[:=]?\s*(\d+)"
_PAIR = r"([A-Za-z_][\w/.]*)\s*[=:]\s*([-+]?(?:\d+\.?\d*(?:[eE][-+]?\d+)?|\.\d+(?:[eE][-+]?\d+)?|nan|inf|NaN|Inf))"


def read_lines(source: Source) -> pl.Series:
    """All lines of a text source as a String series (no Python loop over lines)."""
    data = source.read_bytes()
    text = data.decode("utf-8", errors="replace").replace("\r\n", "\n").replace("\r", "\n")
    frame = pl.read_csv(
        io.BytesIO(text.encode()),
        has_header=False,
        separator="\x1f",
        quote_char=None,
        new_columns=["line"],
        schema_overrides={"line": pl.String},
        truncate_ragged_lines=True,
    )
    return frame["line"].fill_null("")


class TextParser(Parser):
    """Lines with a step number and ``key=value`` / ``key: value`` metric pairs."""

    name = "text"
    description = "free-form text lines: step N ... loss=X acc=Y key=value"

    def sniff(self, source: Source) -> bool:
        if source.is_dir:
            return False
        head = source.head_text()
        return "\x00" not in head[:8192]

    def parse(self, source: Source, fields: FieldMap) -> ParseResult:
        lines = read_lines(source)
        df = pl.DataFrame({"line": lines}).with_row_index("line_no", offset=1)
        df = df.with_columns(
            pl.col("line").str.extract(_STEP, 1).cast(pl.Int64, strict=False).alias("step"),
            pl.col("line").str.extract_all(_PAIR).alias("pairs"),
        )
        steps = df.filter(pl.col("step").is_not_null() & (pl.col("pairs").list.len() > 0))
        if steps.height == 0:
            raise ParseError(f"{source.name}: no training steps found")
        long = (
            steps.select("line_no", "step", "pairs")
            .explode("pairs")
            .with_columns(
                pl.col("pairs").str.extract(r"^([A-Za-z_][\w/.]*)", 1).alias("key"),
                pl.col("pairs").str.extract(r"[=:]\s*(\S+)$", 1).str.to_lowercase()
                .cast(pl.Float64, strict=False).alias("value"),
            )
        )
        keys = long["key"].unique().to_list()
        mapping = {k: fields.resolve(k) for k in keys if k is not None}
        long = long.with_columns(pl.col("key").replace_strict(mapping, default=None))
        long = long.filter(pl.col("key").is_not_null() & (pl.col("key") != "step"))
        wide = long.pivot(on="key", index=["line_no", "step"], values="value", aggregate_function="first")
        if "loss" not in wide.columns:
            raise ParseError(f"{source.name}: step lines found but no loss (keys seen: {', '.join(sorted(mapping))})")
        wide = wide.filter(pl.col("loss").is_not_null() | pl.col("loss").is_nan()).sort("line_no")
        skipped = lines.len() - wide.height
        return ParseResult(
            table=wide,
            lines_read=lines.len(),
            skip_reasons={"no training step": skipped} if skipped else {},
            aliases={k: v for k, v in mapping.items() if k != v},
        )
