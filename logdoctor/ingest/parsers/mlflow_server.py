"""An MLflow tracking-server run as a ParseResult: one row per step from every metric history."""

from __future__ import annotations

import dataclasses
from typing import Any

import polars as pl

from logdoctor.errors import ParseError
from logdoctor.ingest import limits
from logdoctor.ingest.aliases import FieldMap
from logdoctor.ingest.configfacts import config_facts, epoch_length, planned_steps
from logdoctor.ingest.mlflow_server import RunRef, metric_history, run_info
from logdoctor.ingest.namespaced import canonical_renames
from logdoctor.ingest.parsers.base import ParseResult
from logdoctor.ingest.parsers.records import normalize_records, resolve_key
from logdoctor.model import CANONICAL_COLUMNS, LINE_NO, STEP

FORMAT = "mlflow_server"


def long_table(histories: dict[str, list[dict[str, Any]]]) -> pl.DataFrame:
    """(step, key, value, ts) of every logged value, in logging order (timestamp, then as served)."""
    rows = [
        (int(m.get("step", 0)), key, str(m.get("value")), int(m.get("timestamp", 0)))
        for key, hist in histories.items()
        for m in hist
    ]
    frame = pl.DataFrame(
        rows, schema={STEP: pl.Int64, "key": pl.String, "value": pl.String, "ts": pl.Int64}, orient="row"
    )
    # MLflow serves NaN / Infinity as JSON strings or numbers: read both
    text = pl.col("value").str.to_lowercase().str.replace(r"^([-+]?)infinity$", "${1}inf")
    value = text.cast(pl.Float64, strict=False)
    return frame.with_columns(value).with_row_index("order").sort("ts", "order")


def wide_table(long: pl.DataFrame, fields: FieldMap) -> pl.DataFrame:
    """One row per step (the last value of a key at a step wins), ordered by first appearance."""
    long = long.with_row_index("seq")
    wide = long.pivot(on="key", index=STEP, values="value", aggregate_function="last", sort_columns=True)
    first = long.group_by(STEP).agg(pl.col("seq").min().alias(LINE_NO))
    wide = wide.join(first, on=STEP).sort(LINE_NO).with_columns(pl.col(LINE_NO).cast(pl.Int64) + 1)
    return wide.rename(canonical_renames(wide.columns, fields))


def read_server_run(ref: RunRef, fields: FieldMap) -> ParseResult:
    """Every metric history and the params of the run ``ref`` names.

    Raises:
        InputError: server down, access refused, no such run.
        ParseError: the run logged no training loss.
    """
    keys, params, status = run_info(ref)
    if not keys:
        raise ParseError(f"{ref.display}: the run has no metrics")
    always = {k for k in keys if resolve_key(k, fields) in CANONICAL_COLUMNS}
    kept, budget = limits.keep_keys(dict.fromkeys(keys, 1), always)  # one request per metric
    histories = {k: metric_history(ref, k) for k in keys if k in kept}
    return from_histories(
        histories, params, status, fields, ref.display, f"MLflow server {ref.base}", "the REST API", budget
    )


def from_histories(
    histories: dict[str, list[dict[str, Any]]],
    params: Any,
    status: str,
    fields: FieldMap,
    display: str,
    store: str,
    how: str,
    budget: str | None = None,
) -> ParseResult:
    """A run's metric histories (``step``, ``value``, ``timestamp`` of each value), params and
    status as a ParseResult, however they were fetched (a server's REST API, a local store), under the
    key budget (``budget``: the notice of a caller that kept only some metrics before fetching them)."""
    if budget is None:
        always = {k for k in histories if resolve_key(k, fields) in CANONICAL_COLUMNS}
        kept, budget = limits.keep_keys({k: len(v) for k, v in histories.items()}, always)
        histories = {k: v for k, v in histories.items() if k in kept}
    long = long_table(histories)
    result = normalize_records(wide_table(long, fields), fields, display, long.height)
    facts = config_facts(params, "mlflow params")
    notes = [f"{store}: {long.height} values of {len(histories)} metric(s) over {how}"]
    notes += [budget] if budget else []
    spe, spe_note = (None, "") if result.steps_per_epoch else epoch_length(facts, result.table, status == "FINISHED")
    notes += [spe_note] if spe else []
    return dataclasses.replace(
        result,
        notes=(*result.notes, *notes),
        steps_per_epoch=result.steps_per_epoch or spe,
        config_facts=facts,
        total_steps=result.total_steps or planned_steps(facts),
    )
