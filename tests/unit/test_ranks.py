"""Several ranks' lines interleaved in one log: the lowest rank's metric rows are read, every rank's failures."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from logdoctor import pipeline
from logdoctor.ingest.parsers.ranks import rank_tags

STEPS = range(10, 510, 10)


def _loss(step: int, rank: int) -> float:
    # each rank's own batch: its loss differs a little, so a merged series would zig-zag
    return round(3.0 - 0.004 * step + 0.07 * rank + 0.01 * ((step // 10) % 3), 4)


#: Each launcher's tag before one metric line, exactly as it prints it (ranks.py names the source).
TAGGED: dict[str, Callable[[int, str], str]] = {
    "torchrun --tee": lambda r, line: f"[default{r}]:{line}",
    "torchrun --role trainer": lambda r, line: f"[trainer{r}]:{line}",
    "log-line-prefix [rank]": lambda r, line: f"[rank{r}]: {line}",
    "srun --label": lambda r, line: f"{r}: {line}",
    "mpirun --tag-output": lambda r, line: f"[1,{r}]<stdout>:{line}",
}


def _write(tmp_path: Path, lines: list[str], name: str = "train.log") -> Path:
    path = tmp_path / name
    path.write_text("\n".join(lines) + "\n")
    return path


def _interleaved(tag: Callable[[int, str], str], ranks: int) -> list[str]:
    out = []
    for s in STEPS:
        # ranks finish a step in any order: never rank 0 first always
        for r in sorted(range(ranks), key=lambda r: (r * 7 + s) % ranks):
            out.append(tag(r, f"step {s} loss {_loss(s, r):.4f} lr 0.001"))
    return out


@pytest.mark.parametrize("launcher", list(TAGGED))
@pytest.mark.parametrize("ranks", [2, 4])
def test_the_lowest_ranks_rows_are_read_once(tmp_path: Path, launcher: str, ranks: int) -> None:
    run = pipeline.load(str(_write(tmp_path, _interleaved(TAGGED[launcher], ranks))))
    assert run.table["step"].to_list() == list(STEPS)
    assert run.table["loss"].to_list() == [_loss(s, 0) for s in STEPS]
    notes = [n for n in run.meta.notes if "ranks interleaved" in n]
    assert len(notes) == 1 and f"{ranks} ranks interleaved" in notes[0] and "rank 0's rows read" in notes[0]
    assert not [f for f in pipeline.analyze(run).findings if f.code == "LD005"]


def test_the_merged_series_was_the_fault(tmp_path: Path) -> None:
    # the same lines untagged: nothing says which rank wrote them, and they are read as they come
    lines = _interleaved(lambda r, line: line, 4)
    run = pipeline.load(str(_write(tmp_path, lines)))
    assert not [n for n in run.meta.notes if "ranks interleaved" in n]
    assert run.table.height == len(STEPS)  # one row per step: a repeated step keeps one write


def test_a_log_of_one_rank_is_read_as_before(tmp_path: Path) -> None:
    plain = [f"step {s} loss {_loss(s, 0):.4f} lr 0.001" for s in STEPS]
    tagged = [f"[default0]:{line}" for line in plain]
    a = pipeline.load(str(_write(tmp_path, plain, "plain.log")))
    b = pipeline.load(str(_write(tmp_path, tagged, "tagged.log")))
    assert a.table.equals(b.table)
    assert not [n for n in b.meta.notes if "ranks interleaved" in n]


def test_only_rank0_prints_metrics_the_others_only_setup(tmp_path: Path) -> None:
    lines = [f"[default{r}]:Using device cuda:{r}" for r in range(4)]
    lines += [f"[default0]:step {s} loss {_loss(s, 0):.4f} lr 0.001" for s in STEPS]
    run = pipeline.load(str(_write(tmp_path, lines)))
    assert run.table["loss"].to_list() == [_loss(s, 0) for s in STEPS]
    assert not [n for n in run.meta.notes if "ranks interleaved" in n]


@pytest.mark.parametrize("launcher", ["srun --label", "torchrun --tee", "mpirun --tag-output"])
def test_a_rank_that_dies_ends_the_run_while_rank0_is_silent(tmp_path: Path, launcher: str) -> None:
    tag = TAGGED[launcher]
    lines = _interleaved(tag, 2)
    lines += [
        tag(1, "Traceback (most recent call last):"),
        tag(1, '  File "train.py", line 88, in <module>'),
        tag(1, "    loss.backward()"),
        tag(1, "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB"),
    ]
    run = pipeline.load(str(_write(tmp_path, lines)))
    assert run.table["loss"].to_list() == [_loss(s, 0) for s in STEPS]
    st = run.meta.structure
    assert st is not None and st.ending == "crashed", st.ending if st else None
    assert st.ending_source == f"line {len(lines)}"  # rank 1's out-of-memory line, the last


def test_torch_excepthook_rank_tags_on_a_traceback_only(tmp_path: Path) -> None:
    # rank 0 prints the metrics untagged; at the crash every rank's traceback carries ``[rankN]:``
    lines = [f"step {s} loss {_loss(s, 0):.4f} lr 0.001" for s in STEPS]
    for r in (1, 0):
        lines += [f"[rank{r}]: Traceback (most recent call last):", f"[rank{r}]: RuntimeError: NCCL error"]
    run = pipeline.load(str(_write(tmp_path, lines)))
    assert run.table["loss"].to_list() == [_loss(s, 0) for s in STEPS]
    st = run.meta.structure
    assert st is not None and st.ending == "crashed"


def _icefall(ranks: int) -> list[str]:
    out = [f"2023-08-25 19:14:22,589 INFO [train.py:958] ({r}/{ranks}) Training started" for r in range(ranks)]
    for e in range(1, 6):
        for b in (0, 50, 100, 150):
            for r in sorted(range(ranks), key=lambda r: (r + b) % ranks):
                x = _loss(e * 200 + b, r)
                out.append(
                    f"2023-08-25 19:16:07,966 INFO [train.py:878] ({r}/{ranks}) Epoch {e}, batch {b}, "
                    f"loss[loss={x}, simple_loss={x + 0.1:.4f}, over 18145.00 frames. ], "
                    f"tot_loss[loss={x + 0.02:.4f}, over 30000.00 frames. ], batch size: 47, lr: 3.00e-03"
                )
    out += [f"2023-08-25 20:47:55,078 INFO [train.py:1099] ({r}/{ranks}) Done!" for r in range(ranks)]
    return out


def test_icefall_rank_tags_and_epochs(tmp_path: Path) -> None:
    run = pipeline.load(str(_write(tmp_path, _icefall(4))))
    assert run.table.height == 20
    assert run.table["loss"].to_list() == [_loss(e * 200 + b, 0) for e in range(1, 6) for b in (0, 50, 100, 150)]
    # ``Epoch e, batch b``: the epoch is read; the source tag's line number is no value
    assert run.table["epoch"].to_list() == [e for e in range(1, 6) for _ in range(4)]
    assert "train_py" not in run.table.columns
    assert [n for n in run.meta.notes if "4 ranks interleaved (tags (0/4)..(3/4))" in n]


def test_icefall_single_rank_reads_its_epochs(tmp_path: Path) -> None:
    run = pipeline.load(str(_write(tmp_path, _icefall(1))))
    assert run.table.height == 20
    assert run.table["epoch"].to_list() == [e for e in range(1, 6) for _ in range(4)]
    assert not [n for n in run.meta.notes if "ranks interleaved" in n]


def test_numbers_before_a_colon_that_only_rise_are_no_ranks() -> None:
    # an epoch printed before each block of lines (``3: loss ...``): never back to a lower number
    data = "".join(f"{e}: loss {2.0 - 0.1 * e:.3f}\n" for e in range(1, 6) for _ in range(5)).encode()
    assert rank_tags(data) is None
    steps = "".join(f"{s}: loss 1.0\n2: loss 1.0\n" for s in range(3, 40)).encode()
    # every number once but one: fewer than two lines per rank
    assert rank_tags(steps) is None
