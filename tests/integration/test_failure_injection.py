"""Failure injection: each failure class planted in real healthy logs is reported at its severity; bases stay silent.

A planted loss is written where the reader finds the row's loss on its line (calibrated by sentinels
where the line prints the value twice), and the loss's parts move with it, as they do in a real
collapse: a total that rises while its parts hold is a change of loss weights (LD301), no failure."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

import polars as pl
import pytest

from logdoctor import pipeline
from logdoctor.detectors.nonfinite import other_objectives
from logdoctor.model import Report, Run, Severity
from tests.conftest import FIXTURES, REALLOGS
from tests.unit.blindcache import blind_log

_NUM = re.compile(r"[-+]?\d+\.\d+(?:[eE][-+]?\d+)?|[-+]?\d+(?:[eE][-+]?\d+)?")
_WRITERS = FIXTURES / "writers"


def _blind(name: str) -> Callable[[], Path]:
    return lambda: blind_log(name)


def _here(path: Path) -> Callable[[], Path]:
    return lambda: path


#: (key, the log, has a plan, is text): real healthy runs of several shapes. Text loops: a training loop's
#: ``step N/T | loss=``, modded-nanogpt's ``step:N/T train_loss:``, nanoGPT-style ``[train] iter N: loss``,
#: llm.c's ``s:N trl:X``, Megatron-DeepSpeed's ``iteration N/ T | ... | lm loss: X |``, fairseq's per-epoch
#: ``| epoch 001 | loss X | ... | num_updates N``, Joey NMT's ``Epoch N, Step: S, Batch Loss: X``; Keras 3
#: ``fit()`` progress bars (two rows on one line); SpeechBrain's ``train_log.txt``; HF Trainer console dicts;
#: icefall's ``loss[...], tot_loss[...]``; mmdetection 2.x ``Epoch [1][50/500] ... loss: X``; detectron2's
#: ``log.txt`` (``iter: 19  total_loss: X``, three launches appended); PaddleDetection's
#: ``Epoch: [0] [200/464] ... loss_class: X``; YOLOv5's console epoch table (box, obj and cls only: the
#: reader sums them). A CSV (Lightning ``metrics.csv``) takes only the plants that change a loss value: it
#: holds no failure line.
BASES = [
    ("loop_random_loss", _here(FIXTURES / "realruns" / "loop_random_loss.log"), True, True),
    ("keras3_fit", _here(_WRITERS / "keras" / "healthy_verbose1" / "train.log"), True, True),
    # its plan is in the hyperparams.yaml SpeechBrain writes beside the log: copied beside each planted copy
    ("speechbrain", _here(_WRITERS / "speechbrain" / "healthy" / "train_log.txt"), True, True),
    *(
        pytest.param((key, _here(REALLOGS / name), planned, text), marks=pytest.mark.reallogs)
        for key, name, planned, text in (
            ("moddednanogpt", "moddednanogpt_muon_record.txt", True, True),
            ("nanogpt_seis", "nanogpt_seis_train_mix.log", False, True),
            ("llmc", "llmc_gpt2_124m_main.log", False, True),
            ("megatron_ds", "megatron_ds_gpt3_125m_consumed_tokens.log", True, True),
            ("fairseq_epochs", "fairseq_iwslt14_baseline_train.log", False, True),
            ("joeynmt", "joeynmt_signwriting_multilingual_train.log", True, True),
            ("lightning_csv", "lightning_metrics_slm_wikitext103_v0.csv", False, False),
        )
    ),
    # the blind corpus's dev split (its cache; skipped where absent, as in CI)
    ("hf_console", _blind("hf_cpt_large_adgen_windows_console_cmd.txt"), True, True),
    ("icefall", _blind("icefall_ami_lstm_transducer_4gpu_20ep_console.log"), True, True),
    ("mmdet2", _blind("mmdet2_voc_faster_x101_1epoch_healthy.log"), True, True),
    ("detectron2", _blind("detectron2_mask2former_mgm_three_launches_log.txt"), True, True),
    ("paddledet", _blind("paddledet_rtdetr_ssdd_72ep_finished.log"), False, True),
    ("yolov5_stdout", _blind("yolov5_stdout_insect_cpu_10ep.txt"), True, True),
]


Span = tuple[int, int]


class Base:
    """A healthy log's lines, where its training rows are (line number, loss), where each loss is printed,
    and where its parts are (the other objectives the reader finds beside the loss: a detector's
    ``loss_cls``, icefall's ``simple_loss``), so that a planted loss moves its parts with it."""

    def __init__(self, path: Path, tmp: Path) -> None:
        self.name = path.name
        self.sidecars = {p.name: p.read_bytes() for p in path.parent.glob("*.yaml")}
        # the reader numbers lines by "\n" alone: a "\r" redraw (a progress bar) stays inside its line
        self.lines = path.read_bytes().decode(errors="replace").removesuffix("\n").split("\n")
        self.tmp = tmp
        run = pipeline.load(str(path))
        table = _ordered(run)
        self.rows = list(zip(table["line_no"].to_list(), table["loss"].to_list(), strict=True))
        #: part -> (its value, where it is printed) per row; None where the row has none
        self.parts = {c: self._values_and_spans(c, table[c].cast(float).to_list()) for c in other_objectives(run)}
        # a loss the reader sums from its parts (YOLOv5 prints box, obj and cls alone) has no span: the
        # parts carry the plant
        self.spans = self._spans("loss", table["loss"].to_list(), summed=self._summed())

    def with_loss(self, at: range, value: Callable[[float], float]) -> list[str]:
        """The lines with the loss of the rows ``at`` (indices) replaced by ``value(loss)``, and each of
        its parts scaled with it (zero with a zero loss, NaN with a NaN one)."""
        edits: list[tuple[int, Span, str]] = []
        for i in at:
            (line_no, loss), new = self.rows[i], value(self.rows[i][1])
            if (span := self.spans[i]) is not None:
                edits.append((line_no, span, _fmt(new)))
            for part in self.parts.values():
                v, span = part[i]
                if v is not None and span is not None:
                    edits.append((line_no, span, _fmt(new if new != new else v * new / loss if loss else new)))
        out = list(self.lines)
        for line_no, (start, end), text in sorted(edits, key=lambda e: (e[0], -e[1][0])):  # right to left
            out[line_no - 1] = out[line_no - 1][:start] + text + out[line_no - 1][end:]
        return out

    def cut(self, frac: float) -> list[str]:
        """The lines up to the training row at ``frac`` of the rows."""
        return self.lines[: self.rows[int(len(self.rows) * frac)][0]]

    def insert(self, fracs: tuple[float, ...], text: str) -> list[str]:
        """The lines with ``text`` after the training row at each of ``fracs``."""
        out = list(self.lines)
        for frac in sorted(fracs, reverse=True):
            out.insert(self.rows[int(len(self.rows) * frac)][0], text)
        return out

    def _values_and_spans(self, column: str, values: list[float | None]) -> list[tuple[float | None, Span | None]]:
        spans = self._spans(column, values)
        return list(zip(values, spans, strict=True))

    def _summed(self) -> list[bool]:
        """Per row: its parts are all printed and sum to its loss."""
        out = []
        for i, (_, loss) in enumerate(self.rows):
            vs = [part[i] for part in self.parts.values()]
            printed = [v for v, span in vs if v is not None and span is not None]
            out.append(bool(printed) and len(printed) == len(vs) and _close(sum(printed), loss))
        return out

    def _spans(self, column: str, values: list[float | None], summed: list[bool] | None = None) -> list[Span | None]:
        """Where each row's ``column`` value is printed on its line: the one number there equal to it, or,
        where a line prints that value more than once (a loss and its total) or holds several rows, the
        number whose change the reader reads back as that value (each candidate marked by a sentinel)."""
        candidates = [
            []
            if v is None or v != v
            else [m.span() for m in _NUM.finditer(self.lines[n - 1]) if _close(float(m.group()), v)]
            for (n, _), v in zip(self.rows, values, strict=True)
        ]
        for i, c in enumerate(candidates):
            if not c and values[i] is not None and values[i] == values[i] and not (summed and summed[i]):
                raise ValueError(f"line {self.rows[i][0]} does not print its row's {column} {values[i]}")
        keyed = {(self.rows[i][0], c[0]) for i, c in enumerate(candidates) if c}
        if all(len(c) <= 1 for c in candidates) and len(keyed) == sum(1 for c in candidates if c):
            return [c[0] if c else None for c in candidates]
        return self._calibrate(column, candidates)

    def _calibrate(self, column: str, candidates: list[list[Span]]) -> list[Span | None]:
        out = list(self.lines)
        marked = sorted(
            {(self.rows[i][0], s) for i, c in enumerate(candidates) for s in c}, key=lambda x: (x[0], -x[1][0])
        )
        sentinel: dict[tuple[int, str], Span] = {}
        for k, (n, (start, end)) in enumerate(marked):  # right to left on each line: earlier spans hold
            mark = f"{7 + k * 1e-4:.4f}"
            sentinel[(n, mark)] = (start, end)
            out[n - 1] = out[n - 1][:start] + mark + out[n - 1][end:]
        path = self.tmp / self.name
        path.write_text("\n".join(out) + "\n")
        table = _ordered(pipeline.load(str(path)))
        if table["line_no"].to_list() != [n for n, _ in self.rows] or column not in table.columns:
            raise ValueError(f"the reader reads other rows once the candidate {column} values are marked")
        read = table[column].cast(float).to_list()
        found = [
            sentinel.get((n, f"{v:.4f}")) if c else None
            for (n, _), v, c in zip(self.rows, read, candidates, strict=True)
        ]
        if any(f is None for f, c in zip(found, candidates, strict=True) if c):
            raise ValueError(f"a row's {column} is none of the numbers on its line that print it")
        return found


def _ordered(run: Run) -> pl.DataFrame:
    return run.table.with_row_index("i").sort("line_no", "i")


def _close(a: float, v: float) -> bool:
    return abs(a - v) <= 1e-6 * max(1.0, abs(v))


def _fmt(v: float) -> str:
    return "nan" if v != v else f"{v:.4f}"


def _analyze(tmp_path: Path, b: Base, lines: list[str]) -> Report:
    for name, data in b.sidecars.items():
        (tmp_path / name).write_bytes(data)
    path = tmp_path / b.name
    path.write_text("\n".join(lines) + "\n")
    return pipeline.analyze(pipeline.load(str(path)))


def _worst(report: Report, *codes: str) -> Severity | None:
    return max((f.severity for f in report.findings if f.code in codes), default=None)


def _nonfinite_crash(b: Base) -> list[str]:
    """The log cut at 60% of its rows, its last four losses NaN, then fairseq's stop on a NaN loss."""
    at = int(len(b.rows) * 0.6)
    lines = b.with_loss(range(at - 3, at + 1), lambda v: float("nan"))[: b.rows[at][0]]
    return [*lines, "FloatingPointError: Minimum loss scale reached (0.0001). Your loss is probably exploding."]


TRACEBACK = [
    "Traceback (most recent call last):",
    '  File "train.py", line 212, in <module>',
    "    loss.backward()",
    "RuntimeError: CUDA error: an illegal memory access was encountered",
]

#: name -> (plant it, the codes that report it, their severity, needs a plan)
PLANTS: dict[str, tuple[Callable[[Base], list[str]], tuple[str, ...], Severity, bool]] = {
    "crash_traceback": (lambda b: b.cut(0.6) + TRACEBACK, ("LD010",), Severity.ERROR, False),
    "os_kill": (lambda b: [*b.cut(0.6), "Killed"], ("LD010",), Severity.ERROR, False),
    "nonfinite_crash": (lambda b: _nonfinite_crash(b), ("LD001", "LD010"), Severity.ERROR, False),
    "recovered_ooms": (
        lambda b: b.insert((0.3, 0.5, 0.7), "| WARNING: ran out of memory, skipping batch"),
        ("LD012",),
        Severity.WARNING,
        False,
    ),
    "skipped_nonfinite": (
        lambda b: b.insert((0.4, 0.6), "WARNING: The grad norm is nan. Skipping updating the model."),
        ("LD013",),
        Severity.WARNING,
        False,
    ),
    "short_collapse": (
        lambda b: b.with_loss(range(int(len(b.rows) * 0.85), len(b.rows)), lambda v: v * 6),
        ("LD002", "LD403", "LD101"),
        Severity.WARNING,
        False,
    ),
    "silent_stop": (lambda b: b.cut(0.6), ("LD016",), Severity.WARNING, True),
    "zero_loss": (
        lambda b: b.with_loss(range(len(b.rows) // 2, len(b.rows)), lambda v: 0.0),
        ("LD025",),
        Severity.WARNING,
        False,
    ),
}


#: the plants that change only loss values or where the log ends: the ones a table (CSV) can hold
VALUE_PLANTS = ("short_collapse", "silent_stop", "zero_loss")


#: (base, plant) -> why logdoctor misses it still: each one xfail(strict), so a fix shows as XPASS
KNOWN_MISSES: dict[tuple[str, str], str] = {}


@pytest.fixture(scope="module", params=BASES, ids=lambda p: str(p[0]))
def base(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> tuple[Base, bool, bool, str]:
    key, where, planned, text = request.param
    path = where()
    if not path.is_file():
        pytest.skip(f"{path} is not present")
    return Base(path, tmp_path_factory.mktemp(key)), planned, text, key


def test_the_untouched_log_stays_silent(base: tuple[Base, bool, bool, str], tmp_path: Path) -> None:
    report = _analyze(tmp_path, base[0], base[0].lines)
    assert report.status == "ok", [f.code for f in report.problems]


@pytest.mark.parametrize("plant", sorted(PLANTS))
def test_each_planted_failure_is_reported_at_its_severity(
    base: tuple[Base, bool, bool, str], plant: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    make, codes, severity, needs_plan = PLANTS[plant]
    b, planned, text, key = base
    if not text and plant not in VALUE_PLANTS:
        pytest.skip("a table holds no failure line")
    if (key, plant) in KNOWN_MISSES:
        request.applymarker(pytest.mark.xfail(strict=True, reason=KNOWN_MISSES[(key, plant)]))
    report = _analyze(tmp_path, b, make(b))
    if needs_plan and not planned:
        assert _worst(report, *codes) is None  # no plan: the ending is unknown, never a silent stop
        assert report.meta.structure is not None and report.meta.structure.ending == "unknown"
        return
    worst = _worst(report, *codes)
    assert worst is not None and worst >= severity, (plant, [(f.code, f.severity.label) for f in report.findings])
    assert ("ok", "warning", "error").index(report.status) >= ("ok", "warning", "error").index(severity.label)
