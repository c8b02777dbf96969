"""How the run ended: the failure its last lines print, reported with the line and the step."""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest

from logdoctor import pipeline
from logdoctor.ingest.parsers.events import ending_after, scan_events
from logdoctor.model import Finding, Severity

EXCERPTS = Path(__file__).resolve().parents[1] / "data" / "excerpts"
# tests/data/excerpts/hf_console_wav2vec2_cuda_oom.txt: lines 253-296 of
# record/turkish/clean/terminal/training.txt in neryabigon/wav2vec2-large-xlsr-53-finetuning
# (commit 07be4ae29002b46d747ab5f962c98e6e29ea0bf6; the repository's licence applies): the first
# attempt of that run, 10 training dicts, then evaluation dies of CUDA OOM. Trailing blanks
# stripped, the tqdm bars' fill characters cut out.
OOM = EXCERPTS / "hf_console_wav2vec2_cuda_oom.txt"


def _ld010(path: str) -> list[Finding]:
    report = pipeline.analyze(pipeline.load(path))
    return [f for f in report.findings if f.code == "LD010"]


def test_real_cuda_oom_traceback_is_the_ending() -> None:
    raw = OOM.read_text(errors="replace").splitlines()
    oom_line = next(i for i, ln in enumerate(raw, 1) if ln.startswith("torch.cuda.OutOfMemoryError"))
    last_row = max(i for i, ln in enumerate(raw, 1) if ln.startswith("{'loss'"))
    run = pipeline.load(str(OOM))
    st = run.meta.structure
    assert st is not None and st.failure is not None and st.ending == "crashed"
    assert (st.failure.kind, st.failure.line) == ("cuda_oom", oom_line)
    assert st.failure.block_line < oom_line and st.failure.block_line > last_row
    found = _ld010(str(OOM))
    assert len(found) == 1 and found[0].severity is Severity.ERROR
    assert found[0].line == oom_line and found[0].first_step == int(run.table["step"][-1])
    assert "ran out of memory" in found[0].message and "OutOfMemoryError" in found[0].message


def _log(tail: list[str], rows: int = 60, planned: int = 1000) -> list[str]:
    body = [f"step {k * 10}/{planned} | loss {3 - k / 100:.4f} | lr 1.0e-04" for k in range(1, rows + 1)]
    return ["starting training", *body, *tail]


CASES = {
    "cuda_oom": [
        "Traceback (most recent call last):",
        '  File "train.py", line 10, in <module>',
        "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB (GPU 0; 79.15 GiB total capacity)",
    ],
    "nccl_timeout": [
        "[rank3]:[E ProcessGroupNCCL.cpp:577] [Rank 3] Watchdog caught collective operation timeout: "
        "WorkNCCL(SeqNum=4417, OpType=ALLREDUCE, NumelIn=1, NumelOut=1, Timeout(ms)=600000) ran for "
        "600032 milliseconds before timing out.",
    ],
    "dataloader_killed": [
        "Traceback (most recent call last):",
        "RuntimeError: DataLoader worker (pid 12345) is killed by signal: Killed. ",
    ],
    "killed": ["Killed"],
    "keyboard_interrupt": ["^CTraceback (most recent call last):", '  File "train.py", line 3', "KeyboardInterrupt"],
    "terminated": ["torch.distributed.elastic.multiprocessing.api.SignalException: Process 9724 got signal: 15"],
    "nan_guard": ["Batch 612: Invalid loss, terminating training"],
    "exception": [
        "Traceback (most recent call last):",
        '  File "train.py", line 88, in <module>',
        "ValueError: Expected input batch_size (16) to match target batch_size (12).",
    ],
}


@pytest.mark.parametrize("kind", sorted(CASES))
def test_generated_endings(tmp_path: Path, kind: str) -> None:
    path = tmp_path / "train.log"
    path.write_text("\n".join(_log(CASES[kind])) + "\n")
    run = pipeline.load(str(path))
    st = run.meta.structure
    assert st is not None and st.failure is not None and st.failure.kind == kind
    found = _ld010(str(path))
    assert len(found) == 1 and found[0].first_step == 600
    # a person's Ctrl-C is info; SIGTERM at step 600 of 1000 cut the run before its plan (warning)
    want = {"keyboard_interrupt": Severity.INFO, "terminated": Severity.WARNING}.get(kind, Severity.ERROR)
    assert found[0].severity is want


def test_a_failure_before_more_training_is_not_the_ending(tmp_path: Path) -> None:
    lines = _log([]) + CASES["exception"] + [f"step {k * 10}/1000 | loss 2.0 | lr 1.0e-04" for k in range(61, 80)]
    path = tmp_path / "train.log"
    path.write_text("\n".join(lines) + "\n")
    assert _ld010(str(path)) == []


def test_a_clean_log_has_no_ending(tmp_path: Path) -> None:
    path = tmp_path / "train.log"
    path.write_text("\n".join(_log(["training finished", "Error rate on test set: 0.1"])) + "\n")
    run = pipeline.load(str(path))
    assert run.meta.structure is not None and run.meta.structure.failure is None
    assert _ld010(str(path)) == []


def test_finished_run_with_a_late_exception_is_info(tmp_path: Path) -> None:
    path = tmp_path / "train.log"
    path.write_text("\n".join(_log(CASES["exception"], rows=100, planned=1000)) + "\n")
    found = _ld010(str(path))
    assert len(found) == 1 and found[0].severity is Severity.INFO


def test_most_specific_block_after_the_last_row_wins() -> None:
    lines = pl.DataFrame(
        {
            "line_no": [5, 200, 201, 400],
            "line": ["Traceback (most recent call last):", "Killed", "x", "KeyboardInterrupt"],
        }
    )
    endings = scan_events(lines)
    assert [e.kind for e in endings] == ["exception", "killed", "keyboard_interrupt"]
    picked = ending_after(endings, 100)
    assert picked is not None and picked.kind == "killed"
    assert ending_after(endings, 500) is None


def test_the_cause_stands_beside_not_finished() -> None:
    from logdoctor.renderers.rows import facts

    report = pipeline.analyze(pipeline.load(str(OOM)))
    rows = dict(facts(report))
    assert "of 16,170 planned" in rows["steps"]
    assert rows["ending"].startswith("crashed (line 42: the GPU ran out of memory); planned 16,170 steps")
