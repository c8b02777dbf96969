"""`logdoctor buckets` through main([...])."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from logdoctor.cli import main


@pytest.fixture
def lengths_file(tmp_path: Path) -> Path:
    rng = np.random.default_rng(0)
    f = tmp_path / "lengths.txt"
    f.write_text("\n".join(map(str, np.rint(rng.lognormal(5.0, 0.9, 20_000)).astype(int) + 1)))
    return f


def test_json_contract(lengths_file: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["buckets", str(lengths_file), "--token-budget", "4096", "--buckets", "5", "--format", "json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert len(doc["boundaries"]) == 5 and doc["boundaries"] == sorted(doc["boundaries"])
    assert set(doc["padding_efficiency"]) == {"random", "sorted", "bucketed"}
    assert set(doc["batches_per_epoch"]) == {"random", "sorted", "bucketed"}
    assert doc["objective"]["name"] == "bucket_upper_padding" and doc["objective"]["value"] > 0
    pe = doc["padding_efficiency"]
    assert pe["random"] < pe["bucketed"] <= pe["sorted"] <= 1
    assert doc["relative_throughput"]["bucketed_vs_sorted"] == pytest.approx(pe["bucketed"] / pe["sorted"], rel=1e-4)
    assert len(doc["buckets"]) == 5


def test_max_padding_and_text(lengths_file: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["buckets", str(lengths_file), "--token-budget", "4096", "--max-padding", "0.2", "-f", "json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert 1 - doc["objective"]["model_padding_efficiency"] <= 0.2
    k = len(doc["boundaries"])
    assert 1 - doc["efficiency_by_k"][k - 2]["model_padding_efficiency"] > 0.2
    assert main(["buckets", str(lengths_file), "--token-budget", "4096", "--max-padding", "0.2"]) == 0
    out = capsys.readouterr().out
    assert "(c) bucketed" in out and f"{k} buckets" in out


def test_emit_python_and_plot(lengths_file: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    png = tmp_path / "b.png"
    assert (
        main(
            [
                "buckets",
                str(lengths_file),
                "--token-budget",
                "4096",
                "--buckets",
                "3",
                "--emit",
                "python",
                "--plot",
                str(png),
            ]
        )
        == 0
    )
    src = capsys.readouterr().out
    compile(src, "<emitted>", "exec")
    assert "class BucketedBatchSampler" in src and "def set_epoch" in src
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and png.stat().st_size > 10_000


@pytest.mark.parametrize(
    "extra", [["--buckets", "2", "--max-padding", "0.1"], ["-f", "xml"], ["--max-seq-len", "99999"]]
)
def test_bad_options_exit_2(lengths_file: Path, extra: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["buckets", str(lengths_file), "--token-budget", "4096", *extra]) == 2
    err = capsys.readouterr().err
    assert err.startswith("logdoctor: error:") and err.count("\n") == 1


def test_missing_file_exit_2(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["buckets", "/no/such", "--token-budget", "8"]) == 2
    assert "no such file" in capsys.readouterr().err


def test_stdin_and_output_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import io
    import sys

    data = "\n".join(str(n) for n in [5, 9, 12, 40, 41, 300, 7, 8]) + "\n"
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(data.encode())))
    out = tmp_path / "plan.json"
    assert main(["buckets", "-", "--token-budget", "512", "--buckets", "2", "-f", "json", "-o", str(out)]) == 0
    doc = json.loads(out.read_text())
    assert doc["sequences"] == 8 and doc["boundaries"][-1] == 300
    assert capsys.readouterr().out == ""
