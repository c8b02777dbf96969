"""The registry of finding codes: stable code, rule name, default severity and meaning.

Blocks: LD0xx run structure and data integrity, LD1xx spikes, LD2xx periodicity, LD3xx regime
changes, LD4xx metric trends and drops, LD5xx batching, LD6xx learning-rate schedule,
LD7xx step time and throughput. Codes are never reused or renumbered.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from logdoctor.model import Finding, Severity


@dataclass(frozen=True, slots=True)
class Rule:
    """A documented finding kind."""

    code: str
    name: str
    severity: Severity
    meaning: str
    action: str


_RULES: tuple[Rule, ...] = (
    Rule(
        "LD001",
        "nonfinite-loss",
        Severity.ERROR,
        "The training loss is NaN or infinite at one or more steps.",
        "Check the learning rate, mixed-precision loss scaling and the batches at the first bad step.",
    ),
    Rule(
        "LD002",
        "divergence",
        Severity.ERROR,
        "The loss climbed well above its earlier level and stayed there.",
        "Lower the learning rate or add warm-up / gradient clipping; resume from a checkpoint before the rise.",
    ),
    Rule(
        "LD003",
        "resumed-run",
        Severity.INFO,
        "The run restarted from an earlier step (a resume); later writes of a step replaced earlier ones.",
        "Check that optimizer, scheduler and data-loader state were restored with the checkpoint.",
    ),
    Rule(
        "LD004",
        "resume-loss-jump",
        Severity.WARNING,
        "The loss jumped right after a resume compared with before it.",
        "Restore the optimizer/scheduler/data-sampler state, not just the weights.",
    ),
    Rule(
        "LD005",
        "nonmonotonic-steps",
        Severity.WARNING,
        "Step numbers went backwards without a recognisable resume (two writers of one file?).",
        "Find what wrote the steps again (a relaunch appending without a resume line, two runs sharing a "
        "file) and give each its own file.",
    ),
    Rule(
        "LD006",
        "too-short",
        Severity.INFO,
        "The run is too short for some analyses (periodicity, changepoints, batching).",
        "Analyse again once the run has logged more steps.",
    ),
    Rule(
        "LD007",
        "degenerate-column",
        Severity.INFO,
        "A column is constant or zero throughout and was ignored (e.g. a broken token counter).",
        "Fix the logging of that field if you want it used as evidence.",
    ),
    Rule(
        "LD008",
        "stuck-step-counter",
        Severity.WARNING,
        "The step counter stopped advancing: far more records in a row carry one step than the log "
        "repeats any other step (or the log never carries another step); they count as one step.",
        "Log the optimizer's global step (not an epoch, a constant or a counter reset each record); "
        "until then the analyses see one row for all of those records.",
    ),
    Rule(
        "LD009",
        "nonfinite-eval",
        Severity.WARNING,
        "An evaluation loss or metric is NaN or infinite at one or more evaluations (error while the last "
        "evaluation still is; information when the training loss was non-finite first).",
        "Check the eval loss itself (CTC without zero_infinity, empty references, fp16 overflow in "
        "evaluation): an infinite eval loss ranks no checkpoint.",
    ),
    Rule(
        "LD010",
        "run-stopped-by-failure",
        Severity.ERROR,
        "The run crashed: the lines after its last training row say why (CUDA out of memory, an NCCL/"
        "collective timeout, a killed DataLoader worker or process (SIGKILL), a NaN guard, a checkpoint that "
        "could not be restored, a Python exception); a stop from outside that names no person (SIGTERM, a "
        "scheduler's time limit or preemption) before the run reached its plan, or with no plan stated, is a "
        "warning (the run was not completed); Ctrl-C, a scheduler's cancel, and any failure after the run "
        "reached its plan are info.",
        "Fix the cause the log names (smaller batch or activation checkpointing for OOM; the stalled rank "
        "for NCCL; host/shared memory for killed workers), then resume from the last checkpoint.",
    ),
    Rule(
        "LD012",
        "recovered-oom",
        Severity.WARNING,
        "The framework ran out of GPU memory during training and went on: each time, the batch was "
        "skipped or retried smaller (fairseq, ultralytics), so training data was lost.",
        "Lower the batch size or the longest sequences (or enable activation checkpointing) so that no "
        "batch runs out of memory.",
    ),
    Rule(
        "LD013",
        "skipped-nonfinite-batches",
        Severity.WARNING,
        "The framework met a NaN/inf loss or gradient and skipped the update or rolled back to a "
        "checkpoint (ESPnet, fairseq AMP, ultralytics): those batches taught the model nothing.",
        "Look at the batches and the lr at those steps; lower the lr, clip gradients, or use bf16.",
    ),
    Rule(
        "LD014",
        "crashed-and-relaunched",
        Severity.WARNING,
        "A launch of the run crashed (a traceback, a kill, an NCCL timeout) and the run was launched "
        "again; the steps since its last checkpoint were lost and the failure may recur.",
        "Fix the cause the crash names before relying on the relaunched run.",
    ),
    Rule(
        "LD015",
        "checkpoint-not-restored",
        Severity.WARNING,
        "A checkpoint could not be found or loaded and training went on without it (from scratch, "
        "or from other weights).",
        "Check the checkpoint path and that the model's architecture matches the checkpoint.",
    ),
    Rule(
        "LD016",
        "stopped-before-plan",
        Severity.WARNING,
        "The log ends before the run's planned length (stated by the log: a progress bar's total, "
        "``Epoch e/N``, a config dump's max_steps/epochs) and prints no error, no stop and no "
        "early stopping: the run stopped without saying why (killed without a message, a lost node, "
        "or the log is an excerpt).",
        "Check the job's exit status and the scheduler's log; resume from the last checkpoint.",
    ),
    Rule(
        "LD017",
        "early-stopped",
        Severity.INFO,
        "Early stopping ended the run before its plan: the log says so, or its best evaluation is "
        "exactly the stated patience before the end.",
        "Nothing to fix: the checkpoint at the best evaluation is the one to keep.",
    ),
    Rule(
        "LD018",
        "several-launches",
        Severity.INFO,
        "The log holds several launches of training appended one after another (the step counter "
        "starts again where the log began, or a launch printed its start-up and config again before any "
        "step): each launch is analysed on its own, and the report is the last one's; a launch's crash "
        "stays its own (LD010, LD014).",
        "Nothing to fix by itself; check that each relaunch was meant, and give each launch its own log "
        "(or resume from a checkpoint) to keep their curves apart.",
    ),
    Rule(
        "LD011",
        "nonfinite-grad-norm",
        Severity.WARNING,
        "The grad norm is NaN/inf on steps whose loss is finite (skipped or NaN-writing updates), more "
        "often than a settled fp16 loss scaler overflows.",
        "Check the loss scale and the lr; clip gradients; look for inputs that overflow (bf16 if available).",
    ),
    Rule(
        "LD020",
        "skipped-iterations",
        Severity.WARNING,
        "Mixed-precision steps were skipped (gradient overflow: inf/NaN) and the loss scale was cut; read from "
        "a skip counter (Megatron's skipped iterations, DeepSpeed's `step=K, skipped=S`, even on lines with no "
        "loss). Skips during the loss scale's warm-up are info; an error when every step was skipped (the model "
        "never updated; read from overflow lines too).",
        "A few skips at the start are normal; many, or late ones, point at an lr too high or bad data. "
        "Check the loss scale and the batches at those steps.",
    ),
    Rule(
        "LD021",
        "no-failures-counted",
        Severity.INFO,
        "A failure counter (skipped / NaN iterations, overflows) is 0 at every step: good news.",
        "Nothing to do.",
    ),
    Rule(
        "LD022",
        "loss-scale-collapse",
        Severity.ERROR,
        "The dynamic loss scale fell below 1 and 2^10 under its peak and stayed there: fp16 keeps overflowing.",
        "Lower the learning rate, switch to bf16, or find the batch that overflows; resume before the collapse.",
    ),
    Rule(
        "LD023",
        "fp16-overflow-calibration",
        Severity.INFO,
        "fp16 steps were skipped (gradient overflow) while the dynamic loss scale calibrated down from its "
        "initial value: how dynamic loss scaling starts, not a fault.",
        "Nothing to fix.",
    ),
    Rule(
        "LD024",
        "fp16-overflows-after-calibration",
        Severity.WARNING,
        "fp16 steps were skipped after the loss scale had settled (it had grown back since its last cut); "
        "a warning only when they are more than a settled scaler's probing explains (one per growth window).",
        "Many late overflows point at an lr too high or bad batches: check the loss and gradient norm at "
        "those steps, or switch to bf16.",
    ),
    Rule(
        "LD025",
        "zero-loss",
        Severity.WARNING,
        "The training loss is exactly 0 on several rows (a warning from 3 rows and 5% of the run, or its "
        "end): no loss of real data is; nothing is learned from those batches.",
        "Check the labels and the mask (an ignore-index or padding mask over every target), empty batches, "
        "and that the loss is computed on the model's outputs.",
    ),
    Rule(
        "LD101",
        "loss-spike",
        Severity.WARNING,
        "The loss rose far above its local level (robust z-score on a rolling median/MAD).",
        "Look at the batches at these steps; spikes that recur with batch length point at batching.",
    ),
    Rule(
        "LD102",
        "grad-norm-spike",
        Severity.WARNING,
        "The gradient norm spiked together with the loss: optimisation instability.",
        "Lower the learning rate, add or tighten gradient clipping, check for bad samples.",
    ),
    Rule(
        "LD103",
        "frequent-spikes",
        Severity.WARNING,
        "Loss spikes are frequent or regular in time rather than isolated.",
        "Relate the spike times to epochs, batch lengths and the lr schedule (see the verdict).",
    ),
    Rule(
        "LD104",
        "grad-norm-spike-alone",
        Severity.INFO,
        "The gradient norm spiked far above its local level without a matching loss spike.",
        "Check the batches at those steps; clipping may be hiding instability (compare the loss just after).",
    ),
    Rule(
        "LD201",
        "periodic-loss",
        Severity.WARNING,
        "The detrended loss has a significant period.",
        "A period equal to the epoch length points at data order; one matching the lr points at the schedule.",
    ),
    Rule(
        "LD202",
        "epoch-sawtooth",
        Severity.WARNING,
        "The loss follows a sawtooth whose period is the epoch: it drifts within each epoch and jumps at the boundary.",
        "Shuffle the data each epoch (a bucketed shuffle keeps the padding savings).",
    ),
    Rule(
        "LD203",
        "epoch-staircase",
        Severity.INFO,
        "The loss steps down at each epoch boundary (the model has seen the data before): "
        "memorisation, not a batching fault.",
        "Watch validation loss for overfitting; this is expected for multi-epoch training on small data.",
    ),
    Rule(
        "LD204",
        "running-average-reset",
        Severity.INFO,
        "The logged loss is a running average that resets every epoch (its noise shrinks through the epoch).",
        "Log the per-step loss to see the real training signal; this pattern is a logging artifact.",
    ),
    Rule(
        "LD301",
        "loss-regime-change",
        Severity.INFO,
        "The level of the loss changes abruptly (changepoint).",
        "Match the step with lr schedule changes, resumes or data changes.",
    ),
    Rule(
        "LD302",
        "acc-regime-change",
        Severity.INFO,
        "The level of the accuracy changes abruptly (changepoint).",
        "Match the step with lr schedule changes, resumes or data changes.",
    ),
    Rule(
        "LD401",
        "acc-drop",
        Severity.WARNING,
        "Accuracy fell significantly below its earlier level, beyond noise and the stage of the run.",
        "Compare with the loss at the same steps and check the lr and data at that point.",
    ),
    Rule(
        "LD402",
        "loss-plateau",
        Severity.INFO,
        "The loss stopped decreasing for a long stretch.",
        "Consider the learning rate or schedule; this may be expected late in training.",
    ),
    Rule(
        "LD403",
        "loss-rise",
        Severity.WARNING,
        "The loss rose significantly over a sustained stretch (not a single spike).",
        "Check the lr schedule and data order over those steps.",
    ),
    Rule(
        "LD410",
        "overfitting",
        Severity.WARNING,
        "The eval loss passed its best point and rose beyond its noise while the training loss kept falling.",
        "Use the checkpoint at the eval metric's best step; stop earlier or regularise (more data, dropout).",
    ),
    Rule(
        "LD411",
        "memorization",
        Severity.WARNING,
        "The training loss kept falling many-fold while an eval score (BLEU, accuracy, F1, ...; or WER/"
        "perplexity or a validation loss past its best, lower is better) stayed within its noise or got worse: "
        "the model memorises the training set.",
        "Keep the checkpoint where the eval score stopped improving; more training only fits the training "
        "data (more data, augmentation, regularisation, or stop there).",
    ),
    Rule(
        "LD412",
        "eval-rise",
        Severity.WARNING,
        "The eval loss passed its best point and rose beyond its noise while the training loss stayed flat, "
        "rose too, or fell with every eval inside the first epoch (no example seen twice: no overfitting).",
        "The run stopped learning: check the lr, data and labels; use the checkpoint at the eval's best step.",
    ),
    Rule(
        "LD413",
        "eval-collapse",
        Severity.WARNING,
        "An eval metric that is not a loss (mAP, accuracy, F1, BLEU; WER/CER, lower is better) sat at its worst "
        "(a score near 0, an error rate near 100%) at every evaluation, or for several evaluations in a row "
        "after it had been better: the model's predictions were of no use on held-out data.",
        "Check the labels, the evaluation's inputs and post-processing, and the learning rate; keep a checkpoint "
        "from before the collapse.",
    ),
    Rule(
        "LD414",
        "eval-metric-fall",
        Severity.WARNING,
        "An eval metric that is not a loss fell from its best beyond its noise and ended well below it "
        "(higher-is-better scores; WER/CER the mirror case).",
        "Use the checkpoint at the metric's best evaluation; stop earlier or regularise.",
    ),
    Rule(
        "LD415",
        "eval-noise",
        Severity.INFO,
        "An evaluation metric is too noisy to rank checkpoints by: its step-to-step noise is as large "
        "as the differences between the best checkpoints.",
        "Evaluate on more data (or average several evaluations) before picking a checkpoint by it.",
    ),
    Rule(
        "LD420",
        "loss-floor",
        Severity.WARNING,
        "Heuristic: the loss fell implausibly fast to near zero early in the run (label leakage, "
        "a target in the inputs, or a broken loss).",
        "Check that labels cannot be read from the inputs and that the loss is computed on the right tensors.",
    ),
    Rule(
        "LD421",
        "loss-at-chance",
        Severity.WARNING,
        "The loss sits at chance level (ln 2 for a binary or pairwise objective, ln k for k classes the "
        "log or config states) for the whole run, or a held-out loss never goes below it over many epochs: "
        "nothing is learned.",
        "Check the labels (chosen/rejected pairs swapped or identical?), the lr (too low or zero), and "
        "that the trainable parameters receive gradients.",
    ),
    Rule(
        "LD501",
        "sorted-batching",
        Severity.ERROR,
        "Batches are fed in length order (fully or within windows) and the loss tracks it.",
        "Shuffle each epoch; use a bucketed shuffle to keep the padding savings (`logdoctor buckets`).",
    ),
    Rule(
        "LD502",
        "static-composition",
        Severity.ERROR,
        "The same batches (same sample combinations) recur every epoch; only their order is shuffled.",
        "Re-form batches every epoch: shuffle within length buckets, then batch, then shuffle batches.",
    ),
    Rule(
        "LD503",
        "loss-tracks-length",
        Severity.INFO,
        "The loss correlates with batch length (expected under length-homogeneous batches).",
        "Nothing by itself; it matters only with sorted order or static composition.",
    ),
    Rule(
        "LD504",
        "batching-undecidable",
        Severity.INFO,
        "The log lacks the per-batch statistics needed to decide how batches are formed.",
        "Log per-batch seqs, tokens, len_min/len_mean/len_max and a batch fingerprint (see logdoctor.emit).",
    ),
    Rule(
        "LD505",
        "length-grouped-batching",
        Severity.WARNING,
        "Batches are length-grouped megabatches (HF group_by_length / LengthGroupedSampler, sorted-"
        "megabatch bucketing): each window of batches is sorted by length and the windows are recomposed "
        "every epoch. The loss oscillates at the megabatch period, a short length curriculum each time.",
        "Keep it if the speed matters more than the oscillation; else use a bucketed shuffle with random "
        "batch order (`logdoctor buckets`).",
    ),
    Rule(
        "LD506",
        "loss-follows-cyclic-lr",
        Severity.INFO,
        "The learning rate rises again after its first peak (restarts / cyclic) and the detrended loss "
        "follows it: the loss pattern is the schedule's, not the batching's.",
        "Nothing to fix if the schedule is intended; judge the loss at the same phase of each cycle.",
    ),
    Rule(
        "LD601",
        "lr-no-warmup",
        Severity.INFO,
        "The learning rate is at its peak from the first logged step: no warm-up.",
        "Add a linear warm-up (a few hundred steps, or 1-5% of training) if the early loss is unstable.",
    ),
    Rule(
        "LD602",
        "lr-rises-after-peak",
        Severity.WARNING,
        "The learning rate rises again after its peak, outside a recognisable cyclic/restart schedule.",
        "Check the scheduler (stepped twice per step, reset on resume, wrong total steps).",
    ),
    Rule(
        "LD603",
        "lr-jump",
        Severity.WARNING,
        "The learning rate jumps (a discontinuity that is not one leg of a ramp or a warm restart).",
        "Check the scheduler and any lr set by hand or restored from a checkpoint at that step.",
    ),
    Rule(
        "LD604",
        "lr-cyclic",
        Severity.INFO,
        "The learning rate follows a cyclic or warm-restart schedule (it returns to its peak).",
        "Nothing by itself; expect the loss to rise briefly after each restart.",
    ),
    Rule(
        "LD605",
        "lr-too-high",
        Severity.WARNING,
        "The loss made no progress until the learning rate was lowered, then fell steeply: the "
        "earlier lr was too high.",
        "Start with a lower learning rate (or a warm-up); the steps at the high lr were wasted.",
    ),
    Rule(
        "LD701",
        "step-time-slowdown",
        Severity.WARNING,
        "Steps became slower than the run's own baseline over a stretch (not an isolated eval/checkpoint step).",
        "Look for data-loader stalls, throttling, a noisy neighbour, swapping or a checkpoint storm in that range.",
    ),
)

RULES: Mapping[str, Rule] = {r.code: r for r in _RULES}
RULES_BY_NAME: Mapping[str, Rule] = {r.name: r for r in _RULES}


def rule(code: str) -> Rule:
    """Look a rule up by code ("LD101") or name ("loss-spike"); KeyError if unknown."""
    if code in RULES:
        return RULES[code]
    return RULES_BY_NAME[code]


def finding(code: str, message: str, **kwargs: object) -> Finding:
    """Build a Finding for a registered code, with its rule name and default severity.

    Keyword arguments are passed to Finding (``severity`` may override the default).
    """
    r = RULES[code]
    kwargs.setdefault("severity", r.severity)
    kwargs.setdefault("hint", r.action)
    return Finding(code=r.code, rule=r.name, message=message, **kwargs)  # type: ignore[arg-type]


def select(findings: Iterable[Finding], select: Iterable[str] = (), ignore: Iterable[str] = ()) -> list[Finding]:
    """Keep findings chosen by ``select`` (all when empty) and not named in ``ignore``.

    Entries may be codes, code prefixes ("LD1") or rule names.
    """
    sel, ign = tuple(select), tuple(ignore)

    def hit(f: Finding, pats: tuple[str, ...]) -> bool:
        return any(f.code.startswith(p) or f.rule == p for p in pats)

    return [f for f in findings if (not sel or hit(f, sel)) and not hit(f, ign)]
