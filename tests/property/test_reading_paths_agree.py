"""One answer whatever the reading path: a log read in chunks (the streaming reader) and the same log
read whole give the same structure and findings, on generated logs with stuck and repeated
counters and on every real log."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from logdoctor import pipeline
from logdoctor.errors import LogdoctorError
from logdoctor.ingest import memory
from tests.conftest import REALLOGS

#: Chunks this small put many chunk boundaries inside any stuck or repeated run.
CHUNK = 1024


def _answer(path: Path) -> tuple[object, ...]:
    run = pipeline.load(str(path))
    report = pipeline.analyze(run)
    m = run.meta
    found = tuple(sorted((f.code, f.first_step, f.last_step, f.message) for f in report.findings))
    ending = m.structure.ending if m.structure is not None else None
    return (run.table.height, m.stuck_counters, m.resumes, m.duplicate_steps, m.repeated_steps, ending, found)


def _both(
    path: Path, monkeypatch: pytest.MonkeyPatch, chunk: int = CHUNK
) -> tuple[tuple[object, ...], tuple[object, ...]]:
    whole = _answer(path)
    with monkeypatch.context() as m:  # chunked, with a row budget that keeps every record
        m.setattr(memory, "in_memory_limit", lambda total: 1)
        m.setattr(memory, "chunk_bytes", lambda total: chunk)
        m.setattr(memory, "row_budget", lambda total: 10**9)
        chunked = _answer(path)
    return whole, chunked


def _log(steps: list[int], fmt: str = "text") -> str:
    if fmt == "jsonl":
        return "".join(f'{{"step": {s}, "loss": {2 - i / 5000:.5f}, "lr": 3e-4}}\n' for i, s in enumerate(steps))
    if fmt == "csv":
        return "step,loss,lr\n" + "".join(f"{s},{2 - i / 5000:.5f},3e-4\n" for i, s in enumerate(steps))
    return "".join(f"step {s} | loss={2 - i / 5000:.5f} lr=3.0e-04\n" for i, s in enumerate(steps))


@st.composite
def counters(draw: st.DrawFn) -> list[int]:
    """Step numbers in file order: a counter that writes each step ``repeat`` times, may stick for
    a while, and may go back (a resume)."""
    n = draw(st.integers(200, 1200))
    repeat = draw(st.integers(1, 3))
    steps = [i // repeat for i in range(n)]
    if draw(st.booleans()):
        at = draw(st.integers(0, n - 1))
        steps[at:at] = [steps[at]] * draw(st.integers(1, 300))
    if draw(st.booleans()):
        at = draw(st.integers(1, len(steps) - 1))
        steps[at:] = [s - draw(st.integers(1, 50)) for s in steps[at:]]
    return steps


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(steps=counters(), fmt=st.sampled_from(["text", "jsonl", "csv"]))
def test_chunked_and_whole_reads_agree_on_generated_counters(
    steps: list[int], fmt: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / f"gen.{'log' if fmt == 'text' else fmt}"
    path.write_text(_log(steps, fmt))
    try:
        whole, chunked = _both(path, monkeypatch)
    except LogdoctorError:
        return
    assert chunked == whole


def test_a_stuck_counter_is_found_when_the_log_is_reduced_to_blocks(tmp_path: Path) -> None:
    steps = list(range(3000)) + [3000] * 200 + list(range(3001, 6000))
    path = tmp_path / "stuck.log"
    path.write_text(_log(steps))
    whole = pipeline.load(str(path))
    reduced = pipeline.load(str(path), max_memory=memory.MIN_CHUNK * 4)
    assert "block_steps" in reduced.table.columns  # read in chunks and reduced
    assert reduced.meta.stuck_counters == whole.meta.stuck_counters
    assert whole.meta.stuck_counters[0].records == 200
    codes = {f.code for f in pipeline.analyze(reduced).findings}
    assert "LD008" in codes and "LD008" in {f.code for f in pipeline.analyze(whole).findings}


#: the shared real logs (absent: one case, which the reallogs_dir fixture skips, or fails under CI's
#: LOGDOCTOR_REQUIRE_REALLOGS)
REAL_NAMES = sorted(p.name for p in REALLOGS.iterdir() if p.suffix not in (".md", ".tsv")) if REALLOGS.is_dir() else []


@pytest.mark.reallogs
@pytest.mark.parametrize("name", REAL_NAMES or ["(../shared/reallogs absent)"])
def test_chunked_and_whole_reads_agree_on_real_logs(
    name: str, monkeypatch: pytest.MonkeyPatch, reallogs_dir: Path
) -> None:
    path = reallogs_dir / name
    if path.suffix == ".json":
        pytest.skip("a whole JSON document is never read in chunks (refused when past the limit)")
    # every real log read through the streaming reader, in the smallest chunks it ever uses (the
    # text parser decides some things per chunk, such as a curve printed only under evaluation
    # banners: chunks of a few KiB, which no budget gives, can still see less than the whole)
    whole, chunked = _both(path, monkeypatch, chunk=memory.MIN_CHUNK)
    assert chunked == whole


@pytest.mark.parametrize("config_lines", [0, 3, 200])
def test_a_restart_line_and_the_step_after_it_in_different_chunks(
    config_lines: int, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Marian prints ``Training started`` and a config dump before the first step of a continued run:
    the step after it is a resume however far the chunk boundary falls."""
    text = _log(list(range(300)))
    text += "[2019-05-16 19:10:37] Training started\n" + "".join(
        f"[config] option_{i}: {i}\n" for i in range(config_lines)
    )
    text += "".join(f"step {s} | loss={1.9 - s / 5000:.5f} lr=3.0e-04\n" for s in range(300, 600))
    path = tmp_path / "resumed.log"
    path.write_text(text)
    whole, chunked = _both(path, monkeypatch)
    assert whole[2] == 1  # one resume
    assert chunked == whole
