"""Issue 33's line shapes (bench/shapes.py) at a few hundred steps: the fast path reads the ones it
is meant for, and every one is read exactly as the general path reads it."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest

from logdoctor import pipeline
from tests.unit.test_text_fastpath import _fast_read, assert_same_run

REPO = Path(__file__).resolve().parents[2]
STEPS = 400
#: Shapes whose step lines the fast path reads itself (the others go to the general path whole).
FAST = ("canonical", "timestamped", "hf_dicts", "megatron", "fairseq", "marian", "keras", "nanogpt")


def _shapes() -> ModuleType:
    spec = importlib.util.spec_from_file_location("bench_shapes", REPO / "bench" / "shapes.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("bench_shapes", module)
    spec.loader.exec_module(module)
    return module


SHAPES = _shapes()
TEXT = [s for s in SHAPES.SHAPES if s not in SHAPES.SUFFIX]


@pytest.fixture(scope="module")
def logs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("shapes")
    return {s: SHAPES.write(s, folder / f"{s}.log", STEPS) for s in TEXT}


def test_the_family_has_eight_text_shapes_besides_jsonl() -> None:
    assert len(TEXT) >= 8 and "jsonl_nested" in SHAPES.SHAPES


@pytest.mark.parametrize("shape", FAST)
def test_fast_path_reads_the_step_lines_of(shape: str, logs: dict[str, Path], monkeypatch: pytest.MonkeyPatch) -> None:
    assert _fast_read(logs[shape], monkeypatch) >= STEPS - 2  # the first line may be its own template


@pytest.mark.parametrize("shape", TEXT)
def test_fast_path_equals_general_path_on(shape: str, logs: dict[str, Path], monkeypatch: pytest.MonkeyPatch) -> None:
    assert_same_run(logs[shape], monkeypatch)


@pytest.mark.parametrize("shape", TEXT)
def test_re_loop_reads_every_step_of(shape: str, logs: dict[str, Path]) -> None:
    """The baseline parses what it is compared with: one row per step."""
    assert SHAPES.re_loop(shape, logs[shape]) == STEPS


def test_records_without_a_step_split_between_the_paths_count_as_one_shape(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """HF Trainer dicts: the fast path reads most; those with a nan loss go to the general path,
    and the few of them must not be dropped as a rare (summary) shape beside the fast path's."""
    rows: list[str] = []
    for s in range(1, 3001):
        if s % 100 == 1:  # 30 epoch markers: a shape of fewer lines than markers, 20x rarer, is a summary
            rows.append(f"Epoch {s // 100 + 1}")
        loss = "nan" if s % 300 == 0 else 2 + s % 9 / 10
        rows.append(f"{{'loss': {loss}, 'learning_rate': 5e-05, 'epoch': {s / 1000:.2f}}}")
    rows.append("{'train_runtime': 1234.5, 'train_samples_per_second': 12.1, 'train_loss': 2.41, 'epoch': 3.0}")
    path = tmp_path / "hf.log"
    path.write_text("\n".join(rows) + "\n")
    assert 2900 < _fast_read(path, monkeypatch) < 3000
    assert pipeline.load(str(path), fmt="text").table.height == 3000
    assert_same_run(path, monkeypatch)
