"""Bounded work on degenerate line logs: NUL runs skipped and reported with their offsets and sizes,
over-long lines cut and counted (in the notes and the JSON), in memory bounded by the line limit."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from logdoctor.cli import main

REPO = Path(__file__).resolve().parents[2]
#: lines of a healthy log before the degenerate part: more than the 64 KiB head read to sniff
LOG = "".join(f"step {i} loss {3 - 0.0002 * i:.4f} lr 0.001\n" for i in range(1, 3001)).encode()
MORE = "".join(f"step {i} loss {2.4 - 0.0002 * i:.4f} lr 0.001\n" for i in range(3001, 3501)).encode()


def _doc(log: Path, capsys: pytest.CaptureFixture[str]) -> dict:  # type: ignore[type-arg]
    main(["analyze", str(log), "--format", "json"])
    return json.loads(capsys.readouterr().out)  # type: ignore[no-any-return]


def test_a_nul_run_is_skipped_and_reported_with_its_offset_and_size(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    log = tmp_path / "nul.log"
    log.write_bytes(LOG + b"\x00" * 3_000_000 + MORE)
    doc = _doc(log, capsys)
    assert doc["structure"]["rows"] == 3500  # the steps after the NULs are read too
    degenerate = doc["source"]["degenerate"]
    assert degenerate["nul_runs"] == [{"offset": len(LOG), "size": 3_000_000}]
    assert degenerate["nul_bytes"] == 3_000_000 and degenerate["lines_cut"] == 0
    assert f"2.86 MiB of NUL bytes skipped at offset {len(LOG):,} (3,000,000 bytes)" in doc["source"]["notes"]


def test_several_runs_are_each_named(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    log = tmp_path / "nuls.log"
    log.write_bytes(b"\x00" * 5000 + LOG + b"\x00" * 10_000 + MORE + b"\x00" * 4096)
    doc = _doc(log, capsys)
    runs = doc["source"]["degenerate"]["nul_runs"]
    assert runs == [
        {"offset": 0, "size": 5000},
        {"offset": 5000 + len(LOG), "size": 10_000},
        {"offset": 15_000 + len(LOG) + len(MORE), "size": 4096},
    ]
    assert doc["structure"]["rows"] == 3500


def test_short_nul_runs_still_mark_a_binary_file(tmp_path: Path) -> None:
    blob = tmp_path / "weights.bin"
    blob.write_bytes(b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 64 + b"\x00" * 100_000)
    assert main(["analyze", str(blob)]) == 2


def test_a_file_of_nul_bytes_only_is_one_line_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    log = tmp_path / "zeros.log"
    log.write_bytes(b"\x00" * 100_000)
    assert main(["analyze", str(log)]) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and "holds nothing but NUL bytes" in err and "100,000 bytes" in err


def test_a_long_line_is_cut_and_counted(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("LOGDOCTOR_MAX_LINE", "4K")
    log = tmp_path / "long.log"
    log.write_bytes(LOG + b"x" * 50_000 + b"\n" + b"y" * 4097 + b"\n" + b"z" * 4096 + b"\n" + MORE)
    doc = _doc(log, capsys)
    degenerate = doc["source"]["degenerate"]
    assert degenerate["lines_cut"] == 2 and degenerate["max_line"] == 4096  # 4,096 bytes is not too long
    assert any(n.startswith("2 line(s) longer than 4 KiB cut") for n in doc["source"]["notes"])
    assert doc["structure"]["rows"] == 3500


def test_a_healthy_log_is_read_unfiltered(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    log = tmp_path / "ok.log"
    log.write_bytes(LOG + MORE)
    doc = _doc(log, capsys)
    assert "degenerate" not in doc["source"] and doc["structure"]["rows"] == 3500


def test_a_json_document_on_one_line_is_never_cut(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("LOGDOCTOR_MAX_LINE", "4K")
    log = tmp_path / "array.json"
    log.write_text(json.dumps([{"step": i, "loss": 3 - 0.001 * i} for i in range(1, 800)]) + "\x00" * 5000)
    doc = _doc(log, capsys)
    assert doc["structure"]["rows"] == 799 and doc["source"]["degenerate"]["lines_cut"] == 0


def test_the_filter_reads_any_block_split_alike() -> None:
    from logdoctor.ingest.linefilter import LineFilter, needs_filter

    rng = np.random.default_rng(3)
    parts = [b"ab\n", b"\x00" * 70, b"cd" * 40 + b"\n", b"\x00" * 9, b"e\n", b"\x00" * 64, b"f" * 200]
    data = b"".join(parts[i] for i in rng.integers(0, len(parts), 400))
    whole = LineFilter(max_line=50, min_nul=64)
    blocks = [data[i : i + 50] for i in range(0, len(data), 50)]
    expected = b"".join(b"".join(whole.feed(b)) for b in blocks) + b"".join(whole.finish())
    for _ in range(20):
        cuts = np.sort(rng.choice(np.arange(1, len(data)), 60, replace=False))
        pieces = [p for p in np.split(np.frombuffer(data, np.uint8), cuts)]
        filt = LineFilter(max_line=50, min_nul=64)
        out = b""
        for p in pieces:
            b = p.tobytes()
            for i in range(0, len(b), 50):
                out += b"".join(filt.feed(b[i : i + 50]))
        out += b"".join(filt.finish())
        assert out == expected
        assert (filt.runs, filt.lines_cut) == (whole.runs, whole.lines_cut)
    assert b"\x00" * 64 not in expected and all(len(x) <= 50 for x in expected.split(b"\n"))
    assert whole.runs and all(r.size >= 64 for r in whole.runs) and whole.lines_cut
    assert needs_filter(iter(blocks), 50, 64)
    clean = b"ab\n" * 100 + b"\x00" * 40 + b"\n" + b"c" * 50 + b"\n"  # a line of exactly the limit
    assert not needs_filter(iter([clean[i : i + 50] for i in range(0, len(clean), 50)]), 50, 64)


def _peak_rss_mb(args: list[str], env: dict[str, str]) -> float:
    """Peak RSS (MiB) of one CLI run in a fresh interpreter."""
    code = (
        "import resource, subprocess, sys; "
        f"subprocess.run({[sys.executable, '-m', 'logdoctor', *args]!r}, capture_output=True); "
        "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True)
    return int(out.stdout.strip()) / 1024


def test_memory_stays_bounded_on_a_huge_line_and_a_nul_tail(tmp_path: Path) -> None:
    """A 40 MB single line and a log followed by 40 MB of NULs cost about what a small log costs
    (the old reader held the whole line in several copies: ~13 bytes of memory per byte)."""
    env = {**os.environ, "PYTHONPATH": str(REPO), "NO_COLOR": "1"}
    small = tmp_path / "small.log"
    small.write_bytes(LOG)
    line = tmp_path / "line.log"
    line.write_bytes(LOG + b"q" * 40_000_000 + b"\n" + MORE)
    nuls = tmp_path / "nuls.log"
    nuls.write_bytes(LOG + b"\x00" * 40_000_000)
    base = _peak_rss_mb(["analyze", str(small), "-q"], env)
    for log in (line, nuls):
        assert _peak_rss_mb(["analyze", str(log), "-q"], env) < base + 30, log.name


def test_tail_reads_on_through_a_long_line_and_a_nul_run(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """tail read one 4 MiB block per wake-up and counted a block without steps as idle time (the
    idle timeout ended it inside a 12 MB line), and a chunk holding NULs lost its step lines to the
    binary check: 3,000 of 3,500 rows. Now it reads on, skips the NUL run and says where."""
    log = tmp_path / "live.log"
    log.write_bytes(LOG + b"w" * 12_000_000 + b"\n" + b"\x00" * 9_000_000 + MORE + b"\x00" * 5000)
    assert main(["tail", str(log), "--format", "jsonl", "--idle-timeout", "0.5"]) == 0
    events = [json.loads(x) for x in capsys.readouterr().out.splitlines()]
    assert events[-1]["event"] == "stop" and events[-1]["sources"][0]["rows"] == 3500
    notes = [e["message"] for e in events if e["event"] == "notice" and "NUL" in e["message"]]
    at = len(LOG) + 12_000_001
    assert notes == [
        f"8.58 MiB of NUL bytes skipped at offset {at:,} (9,000,000 bytes)",
        f"4.88 KiB of NUL bytes skipped at offset {at + 9_000_000 + len(MORE):,} (5,000 bytes)",
    ]
