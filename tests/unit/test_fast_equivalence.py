"""Fast paths give the same numbers as the slower code they replace."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest
from polars.testing import assert_frame_equal
from scipy import stats

from logdoctor.detectors import robust
from logdoctor.ingest.parsers.records import to_numeric
from logdoctor.stats.distributions import gamma_logsf


@pytest.mark.parametrize("n", [1, 5, 20, 44, 45, 46, 1000, 3001])
@pytest.mark.parametrize("window", [6, 7, 15])
def test_shrinking_and_trailing_medians_are_the_medians_of_their_windows(n: int, window: int) -> None:
    """The rolling median's ``shrink`` edges and the trailing median: at every row, numpy's median of
    exactly the points the window holds there (whole windows through the one filter's fast paths)."""
    f = np.random.default_rng(n * window).standard_cauchy(n)
    f[::5] = f[0]  # ties
    h = (window | 1) // 2
    centred = [np.median(f[max(0, i - h) : i + h + 1]) for i in range(n)]
    trailing = [np.median(f[max(0, i - window + 1) : i + 1]) for i in range(n)]
    np.testing.assert_array_equal(robust.rolling_median(f, window, "shrink"), centred)
    np.testing.assert_array_equal(robust.trailing_median(f, window), trailing)


def test_gamma_logsf_equals_scipy_stats() -> None:
    x = np.array([0.0, 1e-9, 0.5, 3.0, 10.0, 80.0, 400.0, 2000.0, 1e5] * 3)
    a = np.repeat([1, 5, 41], 9)
    got, want = gamma_logsf(x, a), stats.gamma.logsf(x, a)
    finite = np.isfinite(want)
    np.testing.assert_allclose(got[finite], want[finite], rtol=1e-12)
    # far tails scipy underflows to -inf; the closed form keeps them: log Q(1, x) = -x exactly
    assert np.all(got[~finite] < -700)
    np.testing.assert_array_equal(got[(a == 1) & ~finite], -x[(a == 1) & ~finite])


def test_gamma_logsf_needs_no_scipy_special_on_small_inputs() -> None:
    import subprocess
    import sys

    code = (
        "import sys, numpy as np; from logdoctor.stats.distributions import gamma_logsf, student_t_two_sided;"
        "gamma_logsf(np.linspace(0, 50, 400), np.full(400, 7)); student_t_two_sided(2.5, 300);"
        "assert gamma_logsf(np.zeros(0), np.zeros(0, int)).size == 0;"  # no candidate peak (1M runs)
        "print('scipy.special' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


@pytest.mark.parametrize("dof", [1, 2, 3, 5, 10, 48, 99, 101, 1000, 2998, 100_000, 1_000_000])
def test_student_t_tail_equals_scipy(dof: int) -> None:
    from scipy import special

    from logdoctor.stats.distributions import student_t_two_sided

    for t in (0.0, 1e-6, 0.1, 0.5, 1.0, 2.0, 3.0, 5.0, 8.0, 15.0, 40.0, 1e3):
        want = min(1.0, 2.0 * float(special.stdtr(dof, -t)))
        assert student_t_two_sided(t, dof) == pytest.approx(want, rel=1e-9, abs=1e-300)


def _to_numeric_slow(frame: pl.DataFrame) -> pl.DataFrame:
    """to_numeric's text normalisation applied to every column (the path before the fast one)."""
    txt = pl.all().str.strip_chars().str.to_lowercase().str.replace(r"^([-+]?)infinity$", "${1}inf")
    return frame.select(txt.cast(pl.Float64, strict=False))


def test_to_numeric_fast_path_equals_normalised_cast() -> None:
    values = ["1.5", " 2", "NaN", "nan", "Infinity", "-INFINITY", "inf", "1E3", "+4", ".5", "-0", "", "x", None]
    rng = np.random.default_rng(1)
    frame = pl.DataFrame({f"c{i}": list(rng.choice(np.array(values, dtype=object), 200)) for i in range(12)})
    frame = frame.with_columns(plain=pl.Series([f"{v:.3f}" for v in rng.normal(size=200)]))
    got = to_numeric(frame)
    ref = _to_numeric_slow(frame)
    ref = ref.select([c for c in ref.columns if ref[c].null_count() < ref.height])
    assert_frame_equal(got, ref)


@pytest.mark.parametrize(
    "text",
    [
        "".join(f'{{"step": {i}, "loss": {3 - i / 100}, "acc": {i / 50}, "tag": "a{i}"}}\n' for i in range(1, 60)),
        '{"step": 1, "loss": 2.5}\n  {"step": 2, "loss": 2.4, "lr": 0.1}  \n{"step": 3, "loss": 2.3}',
        '{"step": 1, "loss": NaN}\n{"step": 2, "loss": 2.4}\n',  # bare NaN: not the raw path
    ],
)
def test_jsonl_raw_path_equals_line_path(text: str, monkeypatch: pytest.MonkeyPatch) -> None:
    from logdoctor.ingest.aliases import FieldMap
    from logdoctor.ingest.parsers import jsonl
    from logdoctor.ingest.sources import Source

    fast = jsonl.JsonLinesParser().parse(Source.from_bytes("x.jsonl", text.encode()), FieldMap())
    monkeypatch.setattr(jsonl, "_decode_raw", lambda source, lines: None)
    slow = jsonl.JsonLinesParser().parse(Source.from_bytes("x.jsonl", text.encode()), FieldMap())
    assert_frame_equal(fast.table, slow.table)
    assert (fast.lines_read, fast.lines_skipped) == (slow.lines_read, slow.lines_skipped)


def test_fingerprint_ids_give_the_same_classes_as_string_ranks() -> None:
    from logdoctor.diagnosis.recurrence import signature_ids
    from logdoctor.model import Run, RunMeta, validate_run

    rng = np.random.default_rng(2)
    fps = [None if r < 0.05 else f"{int(r * 40):04x}" for r in rng.random(400)]
    df = pl.DataFrame(
        {"step": np.arange(1, 401), "loss": rng.random(400), "line_no": np.arange(1, 401), "batch_fp": fps}
    )
    run = Run(validate_run(df), RunMeta(path="x", format="jsonl"))
    got = signature_ids(run)
    assert got is not None and got[2] == "fingerprint"
    ref = df["batch_fp"].fill_null("").rank("dense").to_numpy()
    ids = got[0]
    assert ids.min() >= 1 and ids.max() == len(set(ref))  # dense
    assert len(set(zip(ids.tolist(), ref.tolist(), strict=True))) == len(set(ref))  # same classes


@pytest.mark.parametrize("n", [4, 10, 57, 3000])
@pytest.mark.parametrize("ties", [False, True])
@pytest.mark.parametrize("link", [0.0, 0.3, 1.0, -1.0])
def test_spearman_equals_scipy(n: int, ties: bool, link: float) -> None:
    from logdoctor.detectors import robust

    rng = np.random.default_rng(n)
    a = rng.normal(size=n)
    b = link * a + (1 - abs(link)) * rng.normal(size=n)
    if ties:
        a, b = np.round(a, 1), np.round(b, 1)
    np.testing.assert_array_equal(robust.rank_average(a), stats.rankdata(a))
    if np.ptp(a) == 0 or np.ptp(b) == 0:
        return
    rho, p = robust.spearman(a, b)
    ref = stats.spearmanr(a, b)
    np.testing.assert_allclose([rho, p], [ref.statistic, ref.pvalue], rtol=1e-9, atol=1e-300)


@pytest.mark.parametrize("d1", [1, 2, 4, 9, 19])
def test_f_tail_equals_scipy(d1: int) -> None:
    from logdoctor.stats.distributions import f_sf

    for d2 in (10, 50, 300, 5000, 200_000):
        for f in (0.0, 0.01, 0.5, 1.0, 1.5, 3.0, 8.0, 30.0, 200.0):
            assert f_sf(f, d1, d2) == pytest.approx(float(stats.f.sf(f, d1, d2)), rel=1e-8, abs=1e-300)


@pytest.mark.parametrize("width", [8, 13, 16])
def test_hex_fingerprint_ids_give_the_classes_of_the_strings(width: int) -> None:
    from logdoctor.diagnosis.recurrence import _hex_codes

    rng = np.random.default_rng(width)
    values = rng.integers(0, 2 ** (4 * width - 1), 3000)
    fp = pl.Series([f"{v:0{width}x}" for v in np.concatenate((values, values[:500], [0]))])
    codes = _hex_codes(fp)
    assert codes is not None
    by_code = codes.rank("dense").to_numpy()
    by_string = fp.cast(pl.Categorical).to_physical().rank("dense").to_numpy()
    # one-to-one both ways: the pairs are exactly as many as either's classes
    pairs = {(int(a), int(b)) for a, b in zip(by_code, by_string, strict=True)}
    assert len(pairs) == len(set(by_code.tolist())) == len(set(by_string.tolist())) == 3001


@pytest.mark.parametrize(
    "fp", [["0abc", "abc"], ["abcd", "ABCD"], ["abcd", None], ["12345678901234567", "0"], ["xyz1", "abcd"]]
)
def test_hex_fingerprint_ids_refuse_ambiguous_spellings(fp: list[str | None]) -> None:
    from logdoctor.diagnosis.recurrence import _hex_codes

    assert _hex_codes(pl.Series(fp, dtype=pl.String)) is None


@pytest.mark.parametrize("seed", range(5))
def test_recurrence_share_by_epoch_equals_one_scan_per_epoch(seed: int) -> None:
    from logdoctor.diagnosis.recurrence import _share_by_epoch

    rng = np.random.default_rng(seed)
    epoch = rng.integers(0, 30, 4000) * (1 + seed % 2)  # odd seeds leave empty epochs
    seen = rng.random(4000) < 0.3
    want = tuple(float(seen[epoch == e].mean()) if np.any(epoch == e) else 0.0 for e in range(int(epoch.max()) + 1))
    assert _share_by_epoch(seen, epoch) == want


@pytest.mark.parametrize("seed", range(4))
def test_within_epoch_repeats_equals_the_grouped_count(seed: int) -> None:
    from logdoctor.diagnosis.recurrence import within_epoch_repeats

    rng = np.random.default_rng(seed)
    ids = rng.integers(0, 50 + 500 * seed, 5000)
    epoch = np.sort(rng.integers(0, 12, 5000))
    count = pl.DataFrame({"e": epoch, "s": ids}).select(pl.len().over("e", "s")).to_series().to_numpy()
    assert within_epoch_repeats(ids, epoch) == float(np.mean(count > 1))
    assert within_epoch_repeats(ids.astype(float), epoch) == float(np.mean(count > 1))  # grouped path
