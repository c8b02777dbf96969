"""The W&B reader keeps batch fingerprints whatever type they were logged as (strings included)."""

from __future__ import annotations

from pathlib import Path

from logdoctor.ingest.aliases import FieldMap
from logdoctor.ingest.parsers.wandb import WandbParser
from logdoctor.ingest.sources import open_source
from logdoctor.model import BATCH_FP, MICRO_FP
from tests.wandb_support import history, write_log

HUGE = 2**60 + 1  # an integer hash a float would round


def _parse(tmp_path: Path, records: list[bytes]) -> dict[str, list[object]]:
    log = tmp_path / "run-x.wandb"
    log.write_bytes(write_log(records))
    table = WandbParser().parse(open_source(str(log)), FieldMap()).table
    return {c: table[c].to_list() for c in table.columns}


def test_string_fingerprints_are_kept(tmp_path: Path) -> None:
    recs = [history(i, loss=2.0 - 0.01 * i, batch_fp=f"3e2a{i % 4:02x}") for i in range(1, 9)]
    cols = _parse(tmp_path, recs)
    assert cols[BATCH_FP] == [f"3e2a{i % 4:02x}" for i in range(1, 9)]
    assert cols["loss"][0] == 1.99


def test_integer_and_list_fingerprints_are_exact_text(tmp_path: Path) -> None:
    recs = [
        history(1, loss=2.0, batch_fp=HUGE, micro_fp=["a1", "b2"]),  # type: ignore[arg-type]
        history(2, loss=1.9, batch_fp="ff00", micro_fp=["c3"]),  # type: ignore[arg-type]
    ]
    cols = _parse(tmp_path, recs)
    assert cols[BATCH_FP] == [str(HUGE), "ff00"]
    assert cols[MICRO_FP] == ["a1+b2", "c3"]


def test_a_string_metric_that_is_no_fingerprint_is_still_dropped(tmp_path: Path) -> None:
    cols = _parse(tmp_path, [history(i, loss=1.0, phase="train") for i in range(1, 4)])  # type: ignore[arg-type]
    assert "phase" not in cols and cols["loss"] == [1.0, 1.0, 1.0]
