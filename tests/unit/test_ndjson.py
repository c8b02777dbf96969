"""ingest/parsers/ndjson.py: a large input's schema from a sample decodes what the full inference does."""

from __future__ import annotations

import io
import json

import polars as pl
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from polars.testing import assert_frame_equal

from logdoctor.ingest.parsers import ndjson

_FULL = pl.read_ndjson  # the reference, before any test spies on polars


@pytest.fixture
def tiny_sample(monkeypatch: pytest.MonkeyPatch) -> list[int | None]:
    """Every input counts as large, its schema from its first line; records the inference lengths
    that ``read`` asked polars for."""
    monkeypatch.setattr(ndjson, "LARGE", 0)
    monkeypatch.setattr(ndjson, "SAMPLE", 1)
    asked: list[int | None] = []
    real = pl.read_ndjson

    def spy(source: object, **kwargs: object) -> pl.DataFrame:
        asked.append(kwargs.get("infer_schema_length"))  # type: ignore[arg-type]
        return real(source, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(ndjson.pl, "read_ndjson", spy)
    return asked


def _both(text: str) -> tuple[pl.DataFrame | str, pl.DataFrame | str]:
    """(``ndjson.read``, polars' full inference) of ``text``; an error's class name for a frame."""
    lines = pl.Series("line", text.splitlines(), dtype=pl.String)
    out: list[pl.DataFrame | str] = []
    for call in (
        lambda: ndjson.read(lambda: io.StringIO(text), lines),
        lambda: _FULL(io.StringIO(text), infer_schema_length=None),
    ):
        try:
            out.append(call())
        except pl.exceptions.PolarsError as err:
            out.append(type(err).__name__)
    return out[0], out[1]


def _same(text: str) -> None:
    got, want = _both(text)
    if isinstance(want, str) or isinstance(got, str):
        assert got == want
    else:
        assert_frame_equal(got, want)


UNIFORM = "".join(json.dumps({"step": i, "train": {"loss": 1.5 + i, "lr": 3e-4}, "tag": "a"}) + "\n" for i in range(5))


def test_a_uniform_input_is_decoded_once_with_the_samples_schema(tiny_sample: list[int | None]) -> None:
    _same(UNIFORM)
    assert tiny_sample == [1]  # one read, with the sample's schema


@pytest.mark.parametrize(
    "text",
    [
        '{"a": 1}\n{"a": 2, "late": 3}\n',  # a key the sample never saw (polars drops it)
        '{"a": {"x": 1}}\n{"a": {"x": 2, "y": 3}}\n',  # a nested key the sample never saw
        '{"a": {"x": 1}}\n{"b": {"x": 2}}\n',  # a late struct
        '{"a" : 1}\n{"a" : 2, "late" : 3}\n',  # blanks before the colon
        '{"a" : 1}\n{"a": 2, "late": 3}\n',  # the same, in one line only: the counts must not cancel
        '{"a":1}\n{"a":2,"b":"x\\":y"}\n',  # a string value that ends like a key
        '{"a": 1}\n{"a": 1.5}\n',  # int, then float (polars raises with the sample's schema)
        '{"a": 1}\n{"a": "x"}\n',  # int, then text
        '{"a": null}\n{"a": 2}\n',  # null-typed sample
        '{"a": 1}\n{"a": null}\n',  # an explicit null later
        '{"a": 1}\n{"a": [1, 2]}\n',  # a list where the sample had a number
        '{"a": 1}\n{"a": 2, "a": 3}\n',  # a repeated key
        '{"a": [{"k": 1}]}\n{"a": [{"k": 2, "j": 3}]}\n',  # keys inside a list of objects
        '{"a": {}}\n{"a": {"x": 1}}\n',  # an empty object first
        '{"\\u00e9t\\u00e9": 1}\n{"\\u00e9t\\u00e9": 2, "n": 1}\n',  # escaped keys
        '{"a": 1.5}\n{"a": 2}\n',  # float, then int: the sample's schema holds it
        '{"a": []}\n{"a": [false]}\n',  # an empty list first: List(Null) decodes later items as null
        '{"a": [null]}\n{"a": [1]}\n',  # a list of nulls first
        '{"a": [[]]}\n{"a": [[1]]}\n',  # the same, one list deeper
        '{"a": {"b": []}}\n{"a": {"b": [2.5]}}\n',  # inside a struct
        '{"a": [{"k": []}]}\n{"a": [{"k": ["x"]}]}\n',  # inside a list of structs
    ],
)
def test_the_sampled_schema_never_decodes_other_records(text: str, tiny_sample: list[int | None]) -> None:
    _same(text)


def test_a_dropped_key_sends_it_to_the_full_inference(tiny_sample: list[int | None]) -> None:
    _same('{"a": 1}\n{"a": 2, "late": 3}\n')
    assert tiny_sample == [1, None]  # sampled, rejected by the count, then every line


def test_small_inputs_keep_the_full_inference(monkeypatch: pytest.MonkeyPatch) -> None:
    asked: list[object] = []
    real = pl.read_ndjson
    monkeypatch.setattr(
        ndjson.pl, "read_ndjson", lambda src, **kw: asked.append(kw.get("infer_schema_length")) or real(src, **kw)
    )
    lines = pl.Series("line", UNIFORM.splitlines())
    assert_frame_equal(
        ndjson.read(lambda: io.StringIO(UNIFORM), lines), _FULL(io.StringIO(UNIFORM), infer_schema_length=None)
    )
    assert asked == [None]


def test_counts() -> None:
    lines = pl.Series(['{"a": 1, "b" : {"c": null}}', '{"s": "x\\":"}'])
    assert ndjson.key_marks(lines) == 5  # a, b, c, s and the string's '":'
    frame = pl.DataFrame({"a": [1, None], "b": [{"c": None}, None]})
    assert ndjson.values(frame) == 2  # a in row 1, the struct b in row 1 (its field c is null)


def test_holds_null_looks_at_every_depth() -> None:
    assert ndjson.holds_null(pl.Null())
    assert ndjson.holds_null(pl.List(pl.Null()))
    assert ndjson.holds_null(pl.Struct({"x": pl.Int64(), "y": pl.List(pl.List(pl.Null()))}))
    assert ndjson.holds_null(pl.Array(pl.Null(), 2))
    assert not ndjson.holds_null(pl.Struct({"x": pl.Int64(), "y": pl.List(pl.String())}))
    assert not ndjson.holds_null(pl.Float64())


_KEYS = st.sampled_from(["a", "b", "loss", "train", "é", 'q"'])
_SCALARS = st.one_of(
    st.none(), st.booleans(), st.integers(-5, 5), st.floats(-3, 3, allow_nan=False), st.text('ab:" ', max_size=4)
)
_VALUES = st.recursive(
    _SCALARS,
    lambda inner: st.one_of(st.lists(inner, max_size=2), st.dictionaries(_KEYS, inner, max_size=3)),
    max_leaves=6,
)
_RECORDS = st.lists(st.dictionaries(_KEYS, _VALUES, min_size=1, max_size=4), min_size=1, max_size=6)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(records=_RECORDS, spaced=st.lists(st.booleans(), min_size=6, max_size=6))
def test_any_records_decode_as_the_full_inference_does(
    records: list[dict[str, object]], spaced: list[bool], tiny_sample: list[int | None]
) -> None:
    # the fixture only sets constants and spies; what it records is not read here
    seps = [(", ", " : ") if s else (",", ":") for s in spaced]
    _same("".join(json.dumps(r, separators=sep) + "\n" for r, sep in zip(records, seps, strict=False)))
