"""Numbers in findings re-read from the raw lines of real logs (../shared/reallogs), not from the parser.

Each log below is read here by its own small reader (json / csv / a regex per format): its training
steps and losses as the file states them. Then every finding of the report is checked:

- every step a message names (``at step N``, ``steps a-b``, ``step N``) is a step the log wrote,
  or lies within the log's steps;
- a ``median X over steps a-b`` is the median of the raw losses written at steps a..b;
- a spike's ``at step N: V`` is the raw loss at step N;
- the levels of LD002 (best, trough, last: centred medians over the rows it names), LD403 (its best
  and peak: medians of the rows it names), LD004 (medians of the rows before and after the resume),
  LD410/LD412 (the eval values at the steps named, the training medians of the rows up to each) and
  the counts of LD001 are recomputed from the raw values.

Logs that print no step number (HF console dicts, Keras bars, per-batch lines) are read in file
order: their values are checked against the rows the run places, the last rows of the file first
(a later write of a step wins); their step numbers are logdoctor's placement, checked by the
structure truths. Logs whose steps come from a per-epoch counter (PyTorch word-LM) are placed here
from their own counters; Sockeye's from its batches per update. nmt_sign_translator (22 appended
runs) is re-read run by run (its own test); so are fairseq's overflow lines and the resume and
duplicate-writer counts of LD003/LD005.
"""

from __future__ import annotations

import csv
import itertools
import json
import math
import re
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

from logdoctor.model import Finding, Report
from tests.conftest import REALLOGS
from tests.reports import report_of

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


def _lines(path: Path) -> list[str]:
    """Physical lines, a tqdm-redrawn line split at its carriage returns."""
    return [seg for ln in path.read_text(errors="replace").splitlines() for seg in ln.split("\r")]


def _ordered(pattern: str) -> Callable[[Path], list[float]]:
    """Losses in file order, for logs that print no step number."""
    rx = re.compile(pattern)

    def read(path: Path) -> list[float]:
        return [float(m["loss"]) for ln in _lines(path) if (m := rx.search(ln)) is not None]

    return read


def _keras_interval_means(path: Path) -> list[float]:
    """Keras bars print the running mean since the epoch began (``216/285 ... loss: 0.2866``); the
    loss of each logged interval is read back by hand: (b r_b - a r_a) / (b - a), a new epoch when
    the batch counter falls."""
    rx = re.compile(r"^\s*(\d+)/\d+ \[.*? - loss: ([-\d.eE+]+)")
    out: list[float] = []
    prev_b, prev_r = 0, 0.0
    for ln in _lines(path):
        if (m := rx.search(ln)) is None:
            continue
        b, r = int(m[1]), float(m[2])
        if b <= prev_b:
            prev_b, prev_r = 0, 0.0
        out.append((b * r - prev_b * prev_r) / (b - prev_b))
        prev_b, prev_r = b, r
    return out


def _wordlm(path: Path) -> Raw:
    """PyTorch word-LM: ``| epoch E | B/ T batches | ... | loss X``, step (E - 1) x T + B."""
    rx = re.compile(r"\| epoch\s+(\d+) \|\s+(\d+)/\s*(\d+) batches .*\| loss\s+(\S+)")
    return {(int(m[1]) - 1) * int(m[3]) + int(m[2]): float(m[4]) for ln in _lines(path) if (m := rx.search(ln))}


def _olmo(path: Path) -> Raw:
    """OLMo: ``[step=N/T,...]`` then the record's metrics one per line (``train/CrossEntropyLoss=X``)."""
    out: Raw = {}
    step = None
    for ln in _lines(path):
        if (m := re.search(r"\[step=(\d+)/\d+", ln)) is not None:
            step = int(m[1])
        elif step is not None and (m := re.search(r"train/CrossEntropyLoss=(\S+)", ln)) is not None:
            out[step] = float(m[1])
    return out


def _lightning(path: Path) -> Raw:
    with path.open(newline="") as fh:
        return {int(r["step"]): float(r["train_loss_step"]) for r in csv.DictReader(fh) if r["train_loss_step"]}


def _keras_csv(path: Path) -> Raw:
    with path.open(newline="") as fh:
        return {int(r["epoch"]): float(r["loss"]) for r in csv.DictReader(fh)}


def _ln_ppl(path: Path) -> Raw:
    """A log of eval perplexities only: the curve logdoctor analyses is ln(ppl) (its note says so)."""
    rx = re.compile(r"'step':(\d+), 'ppl': ([\d.]+)")
    return {int(m[1]): math.log(float(m[2])) for ln in _lines(path) if (m := rx.search(ln))}


def _sockeye(path: Path) -> Raw:
    """Sockeye 3: ``E=e B=b ... ppl=P`` lines count batches; the checkpoint line right after a batch
    line (``Checkpoint [k]\tUpdates=U``) gives the batches per update (b / U); the loss is ln(ppl)."""
    lines = _lines(path)
    batch = re.compile(r"\] E=\d+ B=(\d+)\t.*\bppl=([\d.]+)")
    ratios = {
        int(b[1]) // int(u[1])
        for prev, ln in itertools.pairwise(lines)
        if (u := re.search(r"Checkpoint \[\d+\]\tUpdates=(\d+)", ln)) and (b := batch.search(prev))
    }
    (per_update,) = ratios  # one update interval for the whole run
    return {int(m[1]) // per_update: math.log(float(m[2])) for ln in lines if (m := batch.search(ln))}


def _fairseq_inner(path: Path) -> Raw:
    """fairseq hydra: ``[train_inner][INFO] - {json}`` with string values (``"num_updates": "200"``)."""
    recs = [json.loads(ln.split(" - ", 1)[1]) for ln in _lines(path) if "[train_inner]" in ln]
    return {int(r["num_updates"]): float(r["loss"]) for r in recs}


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
    "llamafactory_trainer_log_resume_dupwriters.jsonl": _jsonl(_current),
    "deepspeed_chat_rlhf_step3_fp16_overflow.log": _regex(
        r"\|step: (?P<step>\d+)\|ppo_ep: 1\|act_loss: (?P<loss>[-\d.e]+)\|"
    ),
    "deepspeed_randomltd_gpt2_seqlen_schedule.log": _ln_ppl,
    "joeynmt_signwriting_multilingual_train.log": _regex(r"Step:\s+(?P<step>\d+), Batch Loss:\s+(?P<loss>[\d.]+)"),
    "buildnanogpt_logtxt_2p5epoch.txt": _regex(r"^(?P<step>\d+) train (?P<loss>[\d.]+)"),
    "buildnanogpt_stdout_nowarmup.out": _regex(r"^step\s+(?P<step>\d+) \| loss: (?P<loss>[\d.]+)"),
    "nanogpt_seis_train_mix.log": _regex(r"\[train\] iter (?P<step>\d+): loss (?P<loss>[\d.]+)"),
    "moddednanogpt_muon_record.txt": _regex(r"^step:(?P<step>\d+)/\d+ train_loss:(?P<loss>[\d.]+)"),
    "olmo_1b_continue_from_ckpt.log": _olmo,
    "lightning_metrics_slm_wikitext103_v0.csv": _lightning,
    "keras_csvlogger_brats_unet.log": _keras_csv,
    "pytorch_wordlm_rnntanh_diverged.md": _wordlm,
    "pytorch_wordlm_rnnrelu_all_nan.md": _wordlm,
    "sockeye3_signwriting_train_original.log": _sockeye,
    "fairseq_hydra_hubert_pretrain.log": _fairseq_inner,
    # fairseq's per-epoch summary line (no progress lines were logged)
    "fairseq_iwslt14_baseline_train.log": _regex(
        r"\| train \| epoch \d+ \| loss (?P<loss>[\d.]+) \|.*"
        r"\| num_updates (?P<step>\d+) \|"
    ),
}
_HF_DICT = r"\{'loss': '?(?P<loss>[-\d.eE+]+|nan|inf)"
_KERAS_BAR = r"^\s*\d+/\d+ \[.*? - loss: (?P<loss>[-\d.eE+]+|nan|inf)"
#: Logs that print no step number: their losses in file order.
ORDERED: dict[str, Callable[[Path], list[float]]] = {
    "wav2vec2_xlsr_ar_aug20gaus_gbl_true_stdout.txt": _ordered(_HF_DICT),
    "wav2vec2_xlsr_ar_clean_gbl_true_stdout.txt": _ordered(_HF_DICT),
    "wav2vec2_xlsr_tr_clean_gbl_true_oom_restart_stdout.txt": _ordered(_HF_DICT),
    "msswift_gemma4_sft_stdout_tqdm_dicts.log": _ordered(_HF_DICT),
    "keras_stdout_leaf_1000ep_overfit.txt": _ordered(_KERAS_BAR),
    "keras_stdout_belgian_traffic_4models_50ep.txt": _keras_interval_means,
    "t5_finetune_per_batch_memorize.log": _ordered(r"Epoch \d+ - Batch loss: (?P<loss>[\d.]+)"),
}


def _eval_json(key: str) -> Callable[[Path], Raw]:
    def read(path: Path) -> Raw:
        if path.suffix == ".json":
            hist = json.loads(path.read_text())["log_history"]
            return {int(h["step"]): float(h[key]) for h in hist if key in h}
        recs = [json.loads(ln) for ln in path.read_text().splitlines() if ln.startswith("{")]
        return {int(r["current_steps"]): float(r[key]) for r in recs if key in r}

    return read


def _keras_val(path: Path) -> list[float | None]:
    """Keras: ``val_loss`` on the epoch's last bar line, in the order of the bar lines."""
    bar = re.compile(_KERAS_BAR)
    val = re.compile(r" - val_loss: ([-\d.eE+]+)")
    return [float(m[1]) if (m := val.search(ln)) else None for ln in _lines(path) if bar.search(ln)]


#: Eval series by step, for the levels LD410/LD412 name (the ordered ones are aligned like the losses).
EVALS: dict[str, Callable[[Path], Raw]] = {
    "hf_trainer_state_whisper_ja_5k.json": _eval_json("eval_loss"),
    "llamafactory_trainer_log_qwen7b_medical_overfit.jsonl": _eval_json("eval_loss"),
    "marian_encs_bt_multi_resume.log": _regex(
        r"\[valid\] Ep\. \d+ : Up\. (?P<step>\d+) : ce-mean-words : (?P<loss>[\d.]+)"
    ),
}
ORDERED_EVALS = {"keras_stdout_leaf_1000ep_overfit.txt": _keras_val}
#: Logs whose steps repeat with other values after a resume or between duplicate writers: a
#: value check at a step would compare against one of two writes; steps and ranges still are checked.
REWRITTEN = {
    "marian_encs_bt_multi_resume.log",
    "msswift_logging_dup_lines.jsonl",
    "llamafactory_trainer_log_resume_dupwriters.jsonl",
}

_MEDIAN = re.compile(r"median ([\d.]+) over (?:its (?:first|last) \d+ rows \()?steps (\d+)-(\d+)")
_SPIKE = re.compile(r"spike at step (\d+): ([\d.e+-]+)")
_STEPS = re.compile(r"\bsteps? ([\d,]+)(?:-([\d,]+))?")


def _num(text: str) -> int:
    return int(text.replace(",", ""))


_G = r"([-\d.]+(?:e[-+]?\d+)?)"
_LD002_BEST = re.compile(rf"from a best of {_G} \(step (\d+)\) it rose to {_G} \([\d.]+x, smoothed over (\d+) rows\)")
_LD002_AT = re.compile(rf"(?:fell to {_G} by step (\d+)|to {_G} at the last step (\d+))")
_LD403 = re.compile(rf"best level \({_G} at step (\d+) -> {_G} at step (\d+), medians of (\d+) rows\)")
_LD004 = re.compile(
    rf"resume at step (\d+) the loss jumped from {_G} to {_G} .*medians of the (\d+) rows before and the (\d+) from"
)
_LD41X = re.compile(
    rf"was best at step ([\d,]+) \({_G}\) and rose to {_G} by step ([\d,]+) .*?\({_G} -> {_G}, medians? of the "
    r"(\d+)(?: and (\d+))? rows up to each\)"
)


_LD411 = re.compile(
    rf"fell [\d,]+-fold since step ([\d,]+) \({_G} -> {_G}, medians? of the (\d+)(?: and (\d+))? rows up to each\)"
)
_LD421 = re.compile(rf"median {_G} over (\d+) rows, {_G} in its last quarter.* first \({_G}; medians of (\d+) rows")
_LD605 = re.compile(rf"at step (\d+): the earlier lr was too high .* above the {_G} the run reaches later, its")


def _g(x: float) -> str:
    return f"{x:.4g}"


def _centred(raw: Raw, at: int, w: int) -> float:
    """The centred median of ``w`` finite rows around step ``at`` (edges mirrored), by hand."""
    steps = [s for s in sorted(raw) if np.isfinite(raw[s])]
    i, n, h = steps.index(at), len(steps), w // 2
    idx = [abs(j) if j < 0 else (2 * (n - 1) - j if j >= n else j) for j in range(i - h, i + h + 1)]
    return float(np.median([raw[steps[j]] for j in idx]))


def _levels(f: Finding, raw: Raw, evals: Raw | None) -> list[str]:
    """The levels LD002, LD403, LD004 and LD410/LD412 name, recomputed from the raw values."""
    bad: list[str] = []
    finite = {s: v for s, v in raw.items() if np.isfinite(v)}
    steps = np.array(sorted(finite))
    vals = np.array([finite[s] for s in steps])
    if f.code == "LD002" and (m := _LD002_BEST.search(f.message)) is not None:
        w = int(m[4])
        if _g(_centred(raw, int(m[2]), w)) != m[1]:
            bad.append(f"LD002: best at step {m[2]} is {_g(_centred(raw, int(m[2]), w))}, message says {m[1]}")
        for t in _LD002_AT.finditer(f.message):
            value, at = (t[1], t[2]) if t[1] else (t[3], t[4])
            if _g(_centred(raw, int(at), w)) != value:
                bad.append(f"LD002: level at step {at} is {_g(_centred(raw, int(at), w))}, message says {value}")
    if f.code == "LD403" and (m := _LD403.search(f.message)) is not None:
        for value, at in ((m[1], m[2]), (m[3], m[4])):
            if _g(_centred(raw, int(at), int(m[5]))) != value:
                bad.append(f"LD403: level at step {at} is {_g(_centred(raw, int(at), int(m[5])))}, says {value}")
    if f.code == "LD004" and (m := _LD004.search(f.message)) is not None:
        at, pre, post = int(m[1]), int(m[4]), int(m[5])
        before, after = np.median(vals[steps < at][-pre:]), np.median(vals[steps >= at][:post])
        if (_g(before), _g(after)) != (m[2], m[3]):
            bad.append(f"LD004: levels {_g(before)} -> {_g(after)}, message says {m[2]} -> {m[3]}")
    if f.code in ("LD410", "LD412") and (m := _LD41X.search(f.message)) is not None and evals is not None:
        best, last = _num(m[1]), _num(m[4])
        if (_g(evals[best]), _g(evals[last])) != (m[2], m[3]):
            bad.append(f"{f.code}: eval {_g(evals[best])} -> {_g(evals[last])}, message says {m[2]} -> {m[3]}")
        k1 = int(m[7])
        k2 = int(m[8]) if m[8] else k1
        a, b = np.median(vals[steps <= best][-k1:]), np.median(vals[steps <= last][-k2:])
        if (_g(a), _g(b)) != (m[5], m[6]):
            bad.append(f"{f.code}: training medians {_g(a)} -> {_g(b)}, message says {m[5]} -> {m[6]}")
    if f.code == "LD411" and (m := _LD411.search(f.message)) is not None and f.last_step is not None:
        k1 = int(m[4])
        k2 = int(m[5]) if m[5] else k1
        a, b = np.median(vals[steps <= _num(m[1])][-k1:]), np.median(vals[steps <= f.last_step][-k2:])
        if (_g(a), _g(b)) != (m[2], m[3]):
            bad.append(f"LD411: training medians {_g(a)} -> {_g(b)}, message says {m[2]} -> {m[3]}")
    if f.code == "LD421" and (m := _LD421.search(f.message)) is not None:
        q = int(m[5])
        whole, last, first = (_g(np.median(v)) for v in (vals, vals[-q:], vals[:q]))
        got = (whole, str(vals.size), last, first, str(vals.size // 4))
        if got != (m[1], m[2], m[3], m[4], m[5]):
            bad.append(f"LD421: whole, rows, last, first, quarter {got}, message says {m.groups()}")
    if f.code == "LD605" and (m := _LD605.search(f.message)) is not None:
        later = vals[steps >= int(m[1])]
        pad = np.concatenate([[later[0]] * 2, later, [later[-1]] * 2])  # edges: the nearest row
        low = min(float(np.median(pad[j : j + 5])) for j in range(later.size))
        if _g(low) != m[2]:
            bad.append(f"LD605: the lowest 5-row median later is {_g(low)}, message says {m[2]}")
    m = re.search(r"Every logged loss \((\d+)\)", f.message) if f.code == "LD001" else None
    if m is not None and (int(m[1]) != len(raw) - len(finite) or finite):
        bad.append(f"LD001: {m[1]} non-finite in the message, the log has {len(raw) - len(finite)} of {len(raw)}")
    return bad


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
    m = re.search(r"stopped after step ([\d,]+)", f.message) if f.code == "LD010" else None
    if m is not None and _num(m[1]) != steps[-1]:
        bad.append(f"LD010: the log's last step is {steps[-1]}, message says {m[1]}")
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


def _placed(values: list[float], steps: list[int]) -> Raw:
    """Values read in file order on the steps the run placed them at: the last rows of the file
    are the run's (an earlier attempt's rows were rewritten by the later one)."""
    assert len(values) >= len(steps), f"the reader found {len(values)} records, the run has {len(steps)} rows"
    return dict(zip(steps, values[len(values) - len(steps) :], strict=True))


def _raw(path: Path, report: Report) -> tuple[Raw, Raw | None]:
    """The log's losses by step, and its eval series by step where a finding names eval levels."""
    name = path.name
    if name in ORDERED:
        steps = [int(s) for s in report.run.table["step"].to_list()]
        raw = _placed(ORDERED[name](path), steps)
        ev = None
        if name in ORDERED_EVALS:
            placed = _placed(ORDERED_EVALS[name](path), steps)  # type: ignore[arg-type]
            ev = {s: v for s, v in placed.items() if v is not None}
        return raw, ev
    return READERS[name](path), EVALS[name](path) if name in EVALS else None


@pytest.mark.parametrize("name", sorted([*READERS, *ORDERED]))
def test_finding_numbers_are_the_logs(reallogs_dir: Path, name: str) -> None:
    path = reallogs_dir / name
    report = report_of(str(path))
    raw, evals = _raw(path, report)
    assert len(raw) >= 10, f"the independent reader found {len(raw)} steps"
    values = name not in REWRITTEN
    bad = [msg for f in report.findings for msg in _check(f, raw, values)]
    bad += [msg for f in report.findings for msg in _levels(f, raw, evals)]
    assert not bad, bad


def test_every_log_with_numbers_is_re_read(reallogs_dir: Path) -> None:
    """The logs left out above name no level, count or step range beyond their placement."""
    left = set(ALL_LOGS) - set(READERS) - set(ORDERED)
    assert left == {"nmt_sign_translator_appended_restarts.txt"}  # re-read run by run below


def _all_findings(report: Report) -> list[Finding]:
    return [*report.findings, *(f for r in report.earlier_runs for f in r.findings)]


ALL_LOGS = sorted(p.name for p in REALLOGS.glob("*") if p.name not in ("MANIFEST.tsv", "README.md"))


@pytest.mark.parametrize("name", ALL_LOGS)
def test_endings_and_eval_counts_are_the_logs_lines(reallogs_dir: Path, name: str) -> None:
    """LD010's line says what the finding quotes; LD009's count is the raw count of such evals."""
    path = reallogs_dir / name
    lines = path.read_text(errors="replace").splitlines()
    report = report_of(str(path))
    for f in _all_findings(report):
        if f.code == "LD010":
            assert f.line is not None and str(f.evidence["text"])[:60] in lines[f.line - 1]
        if f.code == "LD009" and "eval_loss" in str(f.evidence["columns"]) and name.endswith(".txt"):
            # HF console dicts: the raw non-finite eval dicts written from this run's first row on
            first = report.runs[-1].first_line if report.runs else 1  # type: ignore[attr-defined]
            raw = [ln for ln in lines[first - 1 :] if re.search(r"'eval_loss': (inf|nan)\b", ln)]
            assert int(f.evidence["n_nonfinite"]) == len(raw)
        if f.code == "LD009" and name.startswith("pytorch_wordlm"):
            # word LM: the ``| end of epoch N | ... | valid loss nan`` lines
            raw = [ln for ln in lines if re.search(r"end of epoch .*valid loss\s+(nan|inf)\b", ln)]
            assert int(f.evidence["n_nonfinite"]) == len(raw) and f"({len(raw)} evaluations)" in f.message


def test_resume_and_backward_counts_are_the_logs(reallogs_dir: Path) -> None:
    """LD005's backward and repeated steps and LD003's replaced records, counted from the raw
    records: a record identical to the one before it (step, loss, lr, epoch) is the duplicate
    writer's copy, counted apart; the resume is where the elapsed time resets (the step goes back and
    its time halves: the two writers drift apart by minutes, not hours)."""
    path = reallogs_dir / "llamafactory_trainer_log_resume_dupwriters.jsonl"
    recs = [r for r in map(json.loads, path.read_text().splitlines()) if "loss" in r]

    def sig(r: dict[str, object]) -> tuple[object, ...]:
        return (r["current_steps"], r["loss"], r["lr"], r["epoch"])

    kept = [r for i, r in enumerate(recs) if i == 0 or sig(r) != sig(recs[i - 1])]
    step = [int(r["current_steps"]) for r in kept]
    back = [i for i in range(1, len(step)) if step[i] < step[i - 1]]
    (resume,) = [i for i in back if _clock(kept[i]) < _clock(kept[i - 1]) / 2]  # the clock restarts
    same = sum(step[i] == step[i - 1] for i in range(1, len(step)))
    replaced_by_resume = sum(s >= step[resume] for s in step[:resume])
    report = report_of(str(path))
    (ld5,) = [f for f in report.findings if f.code == "LD005"]
    (ld3,) = [f for f in report.findings if f.code == "LD003"]
    assert f"went backwards {len(back) - 1} time(s) and repeated the step just before (other values) {same} " in (
        ld5.message
    )
    assert f"(at step {step[resume]}); the resume(s) replaced {replaced_by_resume} earlier record(s)" in ld3.message
    assert f"; {len(step) - len(set(step)) - replaced_by_resume} more record(s) were replaced" in ld3.message
    assert len(recs) - len(kept) == report.run.meta.duplicate_steps


def _clock(rec: dict[str, object]) -> int:
    """LLaMA-Factory's ``elapsed_time`` (``H:MM:SS`` or ``D day(s), H:MM:SS``) in seconds."""
    text = str(rec["elapsed_time"])
    days = int(text.split(" day")[0]) if "day" in text else 0
    h, m, s = (int(x) for x in text.split(", ")[-1].split(":"))
    return ((days * 24 + h) * 60 + m) * 60 + s


def test_fairseq_overflow_scales_and_steps_are_the_logs(reallogs_dir: Path) -> None:
    """fairseq's ``gradient overflow detected ... setting loss scale to: X`` lines (the scale tried
    was 2X), each belonging to the next ``train_inner`` record's num_updates. Calibration: the
    overflows before any record shows the scale grown above the lowest it was set to; LD023 and
    LD024 name their counts, steps, scales, and LD024 the null (one probe per 100 settled steps)."""
    path = reallogs_dir / "fairseq_hydra_hubert_pretrain.log"
    events: list[tuple[int, float, bool]] = []  # (step, scale set to, after calibration)
    pending: list[float] = []
    low, grown = math.inf, False
    for ln in _lines(path):
        if m := re.search(r"gradient overflow detected, ignoring gradient, setting loss scale to: ([\d.]+)", ln):
            pending.append(float(m[1]))
        elif "[train_inner]" in ln:
            rec = json.loads(ln.split(" - ", 1)[1])
            for x in pending:
                events.append((int(rec["num_updates"]), x, grown))
                low = min(low, x)
            pending = []
            grown = grown or float(rec["loss_scale"]) > low
    assert not pending  # every overflow is followed by a record
    calib = [e for e in events if not e[2]]
    late = [e for e in events if e[2]]
    last = max(_fairseq_inner(path))
    found = {f.code: f.message for f in report_of(str(path)).findings}
    assert found["LD023"].startswith(
        f"{len(calib)} optimizer step(s) skipped for fp16 overflow while the loss scale calibrated down from "
        f"{2 * max(x for _, x, _ in calib):g} to {min(x for _, x, _ in calib):g} (step {calib[-1][0]})"
    )
    lam = (last - calib[-1][0]) / 100
    assert found["LD024"].startswith(
        f"{len(late)} optimizer step(s) skipped for fp16 overflow after the loss scale had settled "
        f"(steps {late[0][0]:,}-{late[-1][0]:,}, at scale {2 * max(x for _, x, _ in late):g}, cut to "
        f"{min(x for _, x, _ in late):g}); no more than a scaler probing a higher scale once per 100 steps "
        f"gives about {lam:.1f}"
    )
    clips = {json.loads(ln.split(" - ", 1)[1])["clip"] for ln in _lines(path) if "[train_inner]" in ln}
    assert clips == {"0"} and "Column 'clip' is 0 at every step" in found["LD007"]


_NMT_TRAIN = re.compile(r"^epoch (\d+), iter (\d+), avg\. loss ([\d.]+), .* cum\. examples (\d+),")
_NMT_VALID = re.compile(r"^validation: iter \d+, dev\. ppl (\S+)")


def _nmt_runs(path: Path) -> list[dict[str, object]]:
    """CS224N-style NMT log of appended runs: a run starts where (epoch, iter) goes back to epoch 0.
    Within a run ``iter`` counts within the epoch; the epoch's size is where epoch 1's first row
    puts the end of epoch 0 (its ``cum. examples`` minus its iter, one example per step); a
    validation line belongs to the last training step before it."""
    runs: list[dict[str, object]] = []
    prev: tuple[int, int] | None = None
    for no, ln in enumerate(path.read_text().splitlines(), 1):
        if (m := _NMT_TRAIN.match(ln)) is not None:
            e, it = int(m[1]), int(m[2])
            if prev is None or (e == 0 and (e, it) <= prev):
                runs.append({"rows": [], "valid": [], "first": no})
            runs[-1]["rows"].append((e, it, float(m[3]), int(m[4])))  # type: ignore[attr-defined]
            runs[-1]["last"] = no
            prev = (e, it)
        elif (m := _NMT_VALID.match(ln)) is not None and runs:
            runs[-1]["valid"].append((len(runs[-1]["rows"]), float(m[1])))  # type: ignore[attr-defined,arg-type]
            runs[-1]["last"] = no
    for run in runs:
        rows = run["rows"]
        size = next((c - it for e, it, _, c in rows if e == 1), 0)  # type: ignore[attr-defined]
        steps = [e * size + it for e, it, _, _ in rows]  # type: ignore[attr-defined]
        run["raw"] = dict(zip(steps, (v for _, _, v, _ in rows), strict=True))  # type: ignore[attr-defined]
        run["evals"] = {steps[k - 1]: v for k, v in run["valid"]}  # type: ignore[attr-defined]
    return runs


def test_appended_runs_numbers_are_the_logs(reallogs_dir: Path) -> None:
    """nmt_sign_translator (22 appended runs): each run's lines, steps and rows, the earlier runs'
    finding levels (LD002, LD412 via the checks above, LD009's non-finite evaluations) and the
    current run's row count, re-read run by run from the raw lines."""
    path = reallogs_dir / "nmt_sign_translator_appended_restarts.txt"
    runs = _nmt_runs(path)
    report = report_of(str(path))
    assert len(report.runs) == len(runs)
    bad: list[str] = []
    for part, run in zip(report.runs, runs, strict=True):
        raw, evals = run["raw"], run["evals"]
        assert isinstance(raw, dict) and isinstance(evals, dict)
        got = (part.first_line, part.last_line, part.first_step, part.last_step, part.rows)
        assert got == (run["first"], run["last"], min(raw), max(raw), len(raw)), part.index
        assert part.too_short == (len(raw) < 20 and not part.findings), part.index
        findings = report.findings if part.current else part.findings
        bad += [f"run {part.index}: {msg}" for f in findings for msg in _check(f, raw, True)]
        bad += [f"run {part.index}: {msg}" for f in findings for msg in _levels(f, raw, evals)]
        for f in findings:
            if f.code == "LD009":
                inf = sorted(s for s, v in evals.items() if not math.isfinite(v))
                assert len(inf) == len(evals), "LD009 says every evaluation"
                assert f"({len(inf)} evaluations) is inf, from step {inf[0]} to {inf[-1]}" in f.message
    assert not bad, bad
    (short,) = [f for f in report.findings if f.code == "LD006"]
    assert short.message.startswith(f"Only {len(runs[-1]['raw'])} steps logged")  # type: ignore[arg-type]
    assert f"{sum(len(r['raw']) for r in runs[:-1])} row(s) of earlier run(s)" in " ".join(report.meta.notes)  # type: ignore[arg-type]


def test_accuracy_levels_are_the_logs(reallogs_dir: Path) -> None:
    """LD302 names accuracy medians: re-read from OpenNMT's ``Step N/ T; acc: X`` lines."""
    path = reallogs_dir / "opennmt_py_id_bima_train.log"
    acc = {int(m[1]): float(m[2]) for m in re.finditer(r"Step (\d+)/\s*\d+; acc:\s+([\d.]+)", path.read_text())}
    found = [f for f in report_of(str(path)).findings if f.code == "LD302"]
    medians = [m for f in found for m in _MEDIAN.findall(f.message)]
    assert medians
    for value, a, b in medians:
        assert f"{np.median([v for s, v in acc.items() if _num(a) <= s <= _num(b)]):.4g}" == value


def test_megatron_skip_count_is_the_logs(reallogs_dir: Path) -> None:
    path = reallogs_dir / "megatron_bigscience_gpt2_n8_tp4_pp8.out"
    skipped = sum(int(m) for m in re.findall(r"number of skipped iterations:\s+(\d+)", path.read_text()))
    scales = re.findall(r"iteration\s+\d+/.*?loss scale: ([\d.]+)", path.read_text())
    (f,) = [f for f in report_of(str(path)).findings if f.code == "LD020"]
    assert f.evidence["skipped_total"] == skipped == 19
    assert f.evidence["loss_scale_first"] == float(scales[0]) == 8388608.0


#: A skipped fp16 step as each framework prints it (one line per skipped optimizer step).
OVERFLOW_LINE = {
    "deepspeed_chat_rlhf_step3_fp16_overflow.log": r"\] OVERFLOW! Rank 0 Skipping step",
    "fairseq_hydra_hubert_pretrain.log": r"gradient overflow detected, ignoring gradient",
}


@pytest.mark.parametrize("name", sorted(OVERFLOW_LINE))
def test_overflow_counts_are_the_logs_lines(reallogs_dir: Path, name: str) -> None:
    """LD023 (while the scale calibrates) and LD024 (after) together count every skipped step the
    log prints, and LD023's scales are the first attempted and the last one it fell to."""
    path = reallogs_dir / name
    text = path.read_text(errors="replace")
    report = report_of(str(path))
    counts = {
        f.code: int(m[1])
        for f in report.findings
        if f.code in ("LD023", "LD024") and (m := re.match(r"(\d+) optimizer step", f.message))
    }
    assert counts and sum(counts.values()) == len(re.findall(OVERFLOW_LINE[name], text))
    if name.startswith("deepspeed"):
        scales = re.findall(
            r"OVERFLOW! Rank 0 Skipping step\. Attempted loss scale: (\d+)(?:, reducing to (\d+))?", text
        )
        (cal,) = [f for f in report.findings if f.code == "LD023"]
        first, last = scales[0][0], [to for _, to in scales[: counts["LD023"]] if to][-1]
        assert f"from {first} to {last}" in cal.message


#: Gradient norms by step (file order where the log prints no step), for LD104's "largest X at step S".
GRAD_NORMS: dict[str, Callable[[Path], Raw]] = {
    "hf_trainer_state_star_multihead_acc.json": lambda p: {
        int(h["step"]): float(h["grad_norm"]) for h in json.loads(p.read_text())["log_history"] if "grad_norm" in h
    },
    "msswift_logging_dup_lines.jsonl": lambda p: {
        _swift(r) or 0: float(r["grad_norm"])
        for r in map(json.loads, (ln for ln in p.read_text().splitlines() if ln.startswith("{")))
        if "grad_norm" in r and _swift(r) is not None
    },
    "msswift_gemma4_sft_stdout_tqdm_dicts.log": lambda p: {
        int(m[2]): float(m[1])
        for ln in _lines(p)
        if (m := re.search(r"'grad_norm': '([^']+)'.*'global_step/max_steps': '(\d+)/", ln))
    },
}


@pytest.mark.parametrize("name", sorted(GRAD_NORMS))
def test_grad_norm_spike_is_the_logs(reallogs_dir: Path, name: str) -> None:
    path = reallogs_dir / name
    grad = GRAD_NORMS[name](path)
    (f,) = [f for f in report_of(str(path)).findings if f.code == "LD104"]
    m = re.search(r"largest ([\d.e+]+) at step (\d+)", f.message)
    assert m is not None and f"{grad[int(m[2])]:.4g}" == m[1]
