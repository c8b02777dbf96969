"""Numbers in findings re-read from the raw lines of real logs (../shared/reallogs), not from the parser.

Each log below is read here by its own small reader (json / a regex per format): its training
steps and losses as the file states them. Then every finding of the report is checked:

- every step a message names (``at step N``, ``steps a-b``, ``step N``) is a step the log wrote,
  or lies within the log's steps;
- a ``median X over steps a-b`` is the median of the raw losses written at steps a..b;
- a spike's ``at step N: V`` is the raw loss at step N.

Logs whose steps the log never prints (numbered by order, derived from epochs) are out of scope
here: their steps are logdoctor's placement, checked by the structure truths.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

from logdoctor import pipeline
from logdoctor.model import Finding, Report
from tests.conftest import REALLOGS

pytestmark = pytest.mark.reallogs

Raw = dict[int, float]


def _trainer_state(path: Path) -> Raw:
    hist = json.loads(path.read_text())["log_history"]
    return {int(h["step"]): float(h["loss"]) for h in hist if "loss" in h and "step" in h}


def _jsonl(step_of: Callable[[dict[str, object]], int | None]) -> Callable[[Path], Raw]:
    def read(path: Path) -> Raw:
        out: Raw = {}
        for line in path.read_text().splitlines():
            if not line.strip().startswith("{"):
                continue
            rec = json.loads(line)
            step = step_of(rec)
            if step is not None and isinstance(rec.get("loss"), int | float):
                out[step] = float(rec["loss"])  # type: ignore[arg-type]  # the later write of a step wins
        return out

    return read


def _regex(pattern: str) -> Callable[[Path], Raw]:
    rx = re.compile(pattern)

    def read(path: Path) -> Raw:
        out: Raw = {}
        for line in path.read_text(errors="replace").splitlines():
            if (m := rx.search(line)) is not None:
                # a step line without a loss (Megatron's all-skipped iteration) is a step too
                out[int(m["step"].replace(",", ""))] = float(m["loss"]) if m["loss"] else float("nan")
        return out

    return read


def _current(rec: dict[str, object]) -> int | None:
    v = rec.get("current_steps")
    return int(v) if isinstance(v, int) else None


def _swift(rec: dict[str, object]) -> int | None:
    if isinstance(rec.get("global_step/max_steps"), str):
        return int(str(rec["global_step/max_steps"]).split("/")[0])
    v = rec.get("global_step")
    return int(v) if isinstance(v, int) else None


MEGATRON = r"iteration\s+(?P<step>\d+)/(?:.*lm loss: (?P<loss>[\d.E+-]+))?"
READERS: dict[str, Callable[[Path], Raw]] = {
    "hf_trainer_state_lyric_lora_diverged.json": _trainer_state,
    "hf_trainer_state_star_multihead_acc.json": _trainer_state,
    "hf_trainer_state_whisper_ja_5k.json": _trainer_state,
    "hf_trl_sft_trainer_state_tinyllama_num_tokens.json": _trainer_state,
    "hf_trl_trainer_state_mistral7b_medical_gbl_false.json": _trainer_state,
    "llamafactory_codeup_sft_math_trainer_state_gbl_false.json": _trainer_state,
    "llamafactory_trainer_log_360_pairwise_acc.jsonl": _jsonl(_current),
    "llamafactory_trainer_log_luojiu7b_cpt.jsonl": _jsonl(_current),
    "llamafactory_trainer_log_mistral_translator_total_tokens0.jsonl": _jsonl(_current),
    "llamafactory_trainer_log_qwen7b_medical_overfit.jsonl": _jsonl(_current),
    "msswift_sft_logging.jsonl": _jsonl(_swift),
    "msswift_logging_dup_lines.jsonl": _jsonl(_swift),
    "megatron_bigscience_gpt2_n8_tp4_pp8.out": _regex(MEGATRON),
    "megatron_ds_bigscience_gpt2_perf_n16_dsoff.out": _regex(MEGATRON),
    "megatron_ds_gpt3_125m_consumed_tokens.log": _regex(MEGATRON),
    "megatron_ds_random_ltd_reserve_length.log": _regex(MEGATRON),
    "marian_encs_bt_multi_resume.log": _regex(r"\] Ep\. \d+ : Up\. (?P<step>\d+) : .* : Cost (?P<loss>[\d.]+)"),
    "llmc_gpt2_124m_main.log": _regex(r"^s:(?P<step>\d+) trl:(?P<loss>[\d.]+)"),
    "opennmt_py_id_bima_train.log": _regex(r"Step (?P<step>\d+)/.*xent: (?P<loss>[\d.]+)"),
}
#: Logs whose steps repeat with other values after a resume or between duplicate writers: a
#: value check at a step would compare against one of two writes; steps and ranges still are checked.
REWRITTEN = {"marian_encs_bt_multi_resume.log", "msswift_logging_dup_lines.jsonl"}

_MEDIAN = re.compile(r"median ([\d.]+) over (?:its (?:first|last) \d+ rows \()?steps (\d+)-(\d+)")
_SPIKE = re.compile(r"spike at step (\d+): ([\d.e+-]+)")
_STEPS = re.compile(r"\bsteps? ([\d,]+)(?:-([\d,]+))?")


def _num(text: str) -> int:
    return int(text.replace(",", ""))


def _check(f: Finding, raw: Raw, values: bool) -> list[str]:
    steps = np.array(sorted(raw))
    bad: list[str] = []
    for m in _STEPS.finditer(f.message):
        for s in (m[1], m[2]):
            if s and not steps[0] <= _num(s) <= steps[-1]:
                bad.append(f"{f.code}: step {s} outside the log's steps {steps[0]}-{steps[-1]}")
    for f_step in (f.first_step, f.last_step):
        if f_step is not None and not steps[0] <= f_step <= steps[-1]:
            bad.append(f"{f.code}: finding step {f_step} outside the log's steps")
    if not values:
        return bad
    medians = _MEDIAN.findall(f.message) if "loss" in f.message else []  # LD302 names accuracy levels
    for value, a, b in medians:
        sel = [raw[s] for s in steps if _num(a) <= s <= _num(b) and np.isfinite(raw[s])]
        if f"{np.median(sel):.4g}" != value:
            bad.append(f"{f.code}: median over steps {a}-{b} is {np.median(sel):.4g}, message says {value}")
    for at, value in _SPIKE.findall(f.message):
        if _num(at) in raw and f"{raw[_num(at)]:.4g}" != value:
            bad.append(f"{f.code}: loss at step {at} is {raw[_num(at)]:.4g}, message says {value}")
    return bad


@pytest.mark.parametrize("name", sorted(READERS))
def test_finding_numbers_are_the_logs(reallogs_dir: Path, name: str) -> None:
    path = reallogs_dir / name
    raw = READERS[name](path)
    assert len(raw) >= 10, f"the independent reader found {len(raw)} steps"
    report = pipeline.analyze(pipeline.load(str(path)))
    bad = [msg for f in report.findings for msg in _check(f, raw, name not in REWRITTEN)]
    assert not bad, bad


def _all_findings(report: Report) -> list[Finding]:
    return [*report.findings, *(f for r in report.earlier_runs for f in r.findings)]


ALL_LOGS = sorted(p.name for p in REALLOGS.glob("*") if p.name not in ("MANIFEST.tsv", "README.md"))


@pytest.mark.parametrize("name", ALL_LOGS)
def test_endings_and_eval_counts_are_the_logs_lines(reallogs_dir: Path, name: str) -> None:
    """LD010's line says what the finding quotes; LD009's count is the raw count of such evals."""
    path = reallogs_dir / name
    lines = path.read_text(errors="replace").splitlines()
    report = pipeline.analyze(pipeline.load(str(path)))
    for f in _all_findings(report):
        if f.code == "LD010":
            assert f.line is not None and str(f.evidence["text"])[:60] in lines[f.line - 1]
        if f.code == "LD009" and "eval_loss" in str(f.evidence["columns"]) and name.endswith(".txt"):
            # HF console dicts: the raw non-finite eval dicts written from this run's first row on
            first = report.runs[-1].first_line if report.runs else 1  # type: ignore[attr-defined]
            raw = [ln for ln in lines[first - 1 :] if re.search(r"'eval_loss': (inf|nan)\b", ln)]
            assert int(f.evidence["n_nonfinite"]) == len(raw)


def test_megatron_skip_count_is_the_logs(reallogs_dir: Path) -> None:
    path = reallogs_dir / "megatron_bigscience_gpt2_n8_tp4_pp8.out"
    skipped = sum(int(m) for m in re.findall(r"number of skipped iterations:\s+(\d+)", path.read_text()))
    scales = re.findall(r"iteration\s+\d+/.*?loss scale: ([\d.]+)", path.read_text())
    (f,) = [f for f in pipeline.analyze(pipeline.load(str(path))).findings if f.code == "LD020"]
    assert f.evidence["skipped_total"] == skipped == 19
    assert f.evidence["loss_scale_first"] == float(scales[0]) == 8388608.0
