"""Property tests: ingest returns a valid Run or raises the project's own error, for any input."""

from __future__ import annotations

import math
import tempfile
from pathlib import Path

import numpy as np
import polars as pl
from hypothesis import given
from hypothesis import strategies as st

from fixtures.mutate import mutate
from logdoctor import pipeline
from logdoctor.errors import LogdoctorError
from logdoctor.model import validate_run

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"
SEEDS = sorted(
    p for p in FIXTURES.rglob("*") if p.is_file() and p.suffix in {".log", ".jsonl", ".csv", ".json", ".txt", ".tsv"}
)[:40]


def _load_bytes(data: bytes, suffix: str = ".log") -> object:
    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / f"input{suffix}"
        path.write_bytes(data)
        try:
            run = pipeline.load(str(path))
        except LogdoctorError as err:
            assert str(err) and "\n" not in str(err).strip()
            return err
        if run.table.height == 0:  # a run that died before its first step: its failure is the answer
            st = run.meta.structure
            assert st is not None and st.rows == 0 and st.failure is not None
            assert dict(run.table.schema) == {"step": pl.Int64, "loss": pl.Float64, "line_no": pl.Int64}
            return run
        validate_run(run.table)  # the contract holds
        return run


@given(st.binary(max_size=4096))
def test_arbitrary_bytes_give_a_run_or_our_error(data: bytes) -> None:
    _load_bytes(data)


@given(st.text(max_size=2000))
def test_arbitrary_text_gives_a_run_or_our_error(text: str) -> None:
    _load_bytes(text.encode("utf-8", errors="surrogatepass"))


def test_there_are_fixtures_to_mutate() -> None:
    assert len(SEEDS) == 40


@given(st.integers(0, 2**32 - 1), st.sampled_from(SEEDS))
def test_mutated_fixtures_give_a_run_or_our_error(seed: int, base: Path) -> None:
    data = mutate(base.read_bytes(), np.random.default_rng(seed))
    _load_bytes(data, base.suffix)


_floats = st.floats(allow_nan=True, allow_infinity=True, width=64).filter(lambda x: x == x or math.isnan(x))
_noise = st.sampled_from(["", "WARNING: foo bar\n", "Traceback (most recent call last):\n", "config lr 3e-4\n", "  \n"])


@given(st.lists(st.tuples(st.floats(1e-6, 1e6), st.floats(0, 1), _noise), min_size=1, max_size=60))
def test_canonical_text_round_trip(rows: list[tuple[float, float, str]]) -> None:
    text = "".join(f"{noise}step {i + 1} | loss={loss!r} acc={acc!r}\n" for i, (loss, acc, noise) in enumerate(rows))
    run = _load_bytes(text.encode())
    assert not isinstance(run, LogdoctorError), run
    t = run.table  # type: ignore[attr-defined]
    assert t["step"].to_list() == list(range(1, len(rows) + 1))
    assert t["loss"].to_list() == [r[0] for r in rows]
    assert t["acc"].to_list() == [r[1] for r in rows]


def test_findings_are_deterministic() -> None:
    rng = np.random.default_rng(3)
    loss = 2 + np.exp(-np.arange(500) / 50) + 0.05 * rng.standard_normal(500)
    loss[[100, 250, 400]] += 3
    text = "".join(f"step {i + 1} | loss={v!r}\n" for i, v in enumerate(loss))
    with tempfile.TemporaryDirectory() as d:
        p = Path(d) / "a.log"
        p.write_text(text)
        a = pipeline.analyze(pipeline.load(str(p)))
        b = pipeline.analyze(pipeline.load(str(p)))
    assert a.findings == b.findings and a.verdict == b.verdict
    assert isinstance(a.run.table, pl.DataFrame)
