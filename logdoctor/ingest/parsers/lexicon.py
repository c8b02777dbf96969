"""What training frameworks print when a run fails, stops, recovers or ends, each wording beside its source."""

from __future__ import annotations

from typing import NamedTuple

#: Roles of a signal. A block of FATAL/STOP lines ends the process unless more training follows;
#: RECOVERED lines say the framework caught a failure and went on (a batch or an epoch lost);
#: EARLY_STOP and DONE lines say how training loop ended on purpose; a RESTORED line says the trainer
#: went back to its best checkpoint mid-run (the evaluations after it continue from that model).
FATAL, STOP, RECOVERED, EARLY_STOP, DONE = "fatal", "stop", "recovered", "early_stop", "done"
RESTORED = "restored"
#: Roles whose lines are one event each (counted), not grouped into a failure block.
PER_LINE = (RECOVERED, EARLY_STOP, DONE, RESTORED)


class Signal(NamedTuple):
    """One class of message: its name, role, the lines that say it, its cause in plain words, and
    the framework files (package/path, or repository:path) whose messages the pattern matches."""

    name: str
    role: str
    pattern: str
    cause: str
    sources: str


#: Most specific first: a line (or a block) is of the first signal whose pattern it matches.
SIGNALS: tuple[Signal, ...] = (
    # -- a failure the framework caught: the batch (or the epoch) was lost, training went on
    Signal(
        "oom_recovered",
        RECOVERED,
        r"(?i)attempting to recover from OOM|ran out of memory in validation step, retrying batch"
        r"|ran out of memory, skipping batch|out of memory with batch=\d+\. Reducing to batch=\d+ and retrying"
        r"|memory error with batch=\d+\. Reducing to batch=",
        "out of memory, recovered by skipping or retrying the batch",
        "fairseq:fairseq/trainer.py (train_step, valid_step; `| WARNING: ran out of memory, skipping batch` in "
        "0.6), ultralytics:ultralytics/engine/trainer.py (_do_train OOM retry)",
    ),
    Signal(
        "nonfinite_skipped",
        RECOVERED,
        r"The grad norm is (?:-?nan|-?inf)\. Skipping updating the model|AMP: skipping this batch"
        r"|(?:Loss|Fitness) NaN/Inf detected (?:\(attempt \d+/\d+\), recovering from|but can not recover)",
        "a non-finite (NaN/inf) loss or gradient: the update was skipped or rolled back",
        "espnet:espnet2/train/trainer.py (train_one_epoch), fairseq:fairseq/trainer.py (train_step, AMP), "
        "ultralytics:ultralytics/engine/trainer.py (_handle_nan_recovery)",
    ),
    # -- the loop stopped on purpose
    Signal(
        "early_stopping",
        EARLY_STOP,
        r"(?i)\bEpoch \d+: early stopping\b|did not improve in the last \d+ records"
        r"|early stop since valid performance hasn't improved|\[Early stopping\] .{0,80}has not been improved"
        r"|(?:Stopping training|stopped training|Training stopped) early as no improvement observed"
        r"|Stopping threshold reached"
        r"|Maximum number of not improved checkpoints reached",
        "early stopping: the monitored evaluation stopped improving",
        "keras:keras/src/callbacks/early_stopping.py, lightning/pytorch/callbacks/early_stopping.py, "
        "sockeye:sockeye/training.py (_determine_convergence, max_num_checkpoint_not_improved), "
        "mmengine:mmengine/hooks/early_stopping_hook.py, fairseq:fairseq_cli/train.py (should_stop_early), "
        "espnet:espnet2/train/reporter.py (check_early_stopping), ultralytics:ultralytics/utils/torch_utils.py",
    ),
    Signal(
        "best_restored",
        RESTORED,
        r"Loading model parameters and optimizer states from best checkpoint",
        "the trainer reloaded its best checkpoint: the evaluations since it had not improved, and it cut the lr",
        "sockeye:sockeye/training.py (_adjust_learning_rate: an adaptive lr reduced without improvement, "
        "unless no_reload_on_learning_rate_reduce)",
    ),
    Signal(
        "budget_stop",
        EARLY_STOP,
        r"Time limit reached\. Elapsed time is .{0,40}Signaling Trainer to stop|(?i:\bstopping[ _]early\b)",
        "stopped on its time budget before its step plan (a designed stop, not a failure)",
        'lightning/pytorch/callbacks/timer.py (Timer, max_time); ray:tune/search ("is stopping early"); '
        "the progressive 'stopping early' of scripts that cap training by wall clock (a config key such as "
        "early_stopping never reads so)",
    ),
    Signal(
        "training_done",
        DONE,
        r"`Trainer\.fit` stopped: `max_(?:steps|epochs)=\d+` reached|Training completed\. Do not forget"
        r"|\bdone training in [\d.]+ seconds|The training was finished at \d+ epochs"
        r"|^\s*\d+ epochs completed in [\d.]+ hours|Training ended after +\d+ epochs\.|\bTraining finished\s*$",
        "the training loop ran to its end",
        "lightning/pytorch/loops/fit_loop.py, transformers/trainer.py, fairseq:fairseq_cli/train.py, "
        "espnet:espnet2/train/trainer.py, ultralytics:ultralytics/engine/trainer.py, "
        "joeynmt:joeynmt/training.py (train_and_validate), marian:src/training/training.h (finished)",
    ),
    # -- failures that stop the process unless caught
    Signal(
        "no_update",
        FATAL,
        r"The gradients at all steps are invalid in this epoch|Current loss scale already at minimum",
        "no optimizer step could be applied: every gradient was non-finite",
        "espnet:espnet2/train/trainer.py (run), deepspeed:deepspeed/runtime/fp16/loss_scaler.py",
    ),
    Signal(
        "restore_failed",
        FATAL,
        r"Can't find a valid checkpoint at|Unable to find latest file at"
        r"|Cannot load model parameters from checkpoint"
        r"|Error\(s\) in loading state_dict for|The passed save_path is not a valid checkpoint",
        "a checkpoint could not be restored",
        "transformers/trainer.py (_load_from_checkpoint), deepspeed:deepspeed/runtime/engine.py "
        "(load_checkpoint), fairseq:fairseq/trainer.py (load_checkpoint), torch/nn/modules/module.py "
        "(load_state_dict), tensorflow/python/training/saver.py (Saver.restore)",
    ),
    Signal(
        "cuda_oom",
        FATAL,
        r"CUDA out of memory|cuda\.OutOfMemoryError|CUBLAS_STATUS_ALLOC_FAILED|HIP out of memory"
        r"|MPS backend out of memory|RESOURCE_EXHAUSTED: Out of memory|CUDA error: out of memory"
        r"|OOM during optimization, irrecoverable",
        "the GPU ran out of memory",
        "torch/cuda/memory.py and c10/cuda/CUDACachingAllocator.cpp (OutOfMemoryError), "
        "accelerate/utils/memory.py (should_reduce_batch_size), fairseq:fairseq/trainer.py, "
        "tensorflow (ResourceExhaustedError)",
    ),
    Signal(
        "nccl_timeout",
        FATAL,
        r"[Ww]atchdog caught collective operation timeout|collective operation timeout"
        r"|ProcessGroupNCCL.{0,80}(?:[Tt]ime(?:d )?out)|NCCL.{0,40}(?:timeout|timed out)"
        r"|DistBackendError|NCCL error",
        "an NCCL collective operation timed out or failed; a rank stalled, died or lost its network",
        "pytorch:torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp (watchdog), torch/distributed/distributed_c10d.py",
    ),
    Signal(
        "dataloader_killed",
        FATAL,
        r"DataLoader worker \(pid.{0,40}\) (?:is killed by signal|exited unexpectedly)",
        "a DataLoader worker process was killed; host memory or shared memory ran out",
        "torch/utils/data/_utils/signal_handling.py, torch/utils/data/dataloader.py",
    ),
    Signal(
        "nan_guard",
        FATAL,
        r"(?i)loss is nan|nan loss detected|detected (?:nan|inf)\b|invalid loss, terminating"
        r"|non-finite loss|FloatingPointError|minimum loss scale reached|loss became infinite or nan"
        r"|is not finite\. Previous best value was|returned nan values in its \d+th output"
        r"|loss is not finite and patience is exhausted",
        "a NaN/inf guard stopped training; the loss or gradients became NaN/inf",
        "keras:keras/src/callbacks/terminate_on_nan.py, detectron2:detectron2/engine/train_loop.py "
        "(_write_metrics), speechbrain:speechbrain/core.py (check_loss_isfinite, past nonfinite_patience), "
        "fairseq:fairseq/optim/dynamic_loss_scaler.py and fairseq/trainer.py, "
        "lightning/pytorch/callbacks/early_stopping.py (check_finite), torch/csrc/autograd (detect_anomaly)",
    ),
    # a shell prints ``Killed`` alone, after a job spec (``line 3: 4242 Killed  python train.py``) or at
    # the end of a progress bar it interrupted (``45%|####  | 50/110 [00:10<00:12]Killed``)
    Signal(
        "killed",
        FATAL,
        r"^\s*Killed\s*$|[\]|%]\s*Killed\s*$|\b\d+ Killed\s+\S|oom-kill|Out of memory: Killed process"
        # never a config value's enum repr: NeMo's exp_manager prints its whole schema at every start,
        # ``'rank_termination_signal': <Signals.SIGKILL: 9>`` (its fault-tolerance default), no kill
        r"|Signal 9 \(SIGKILL\)|(?:^|[^.])SIGKILL|exitcode\s*:\s*-9\b",
        "the process was killed with SIGKILL, usually by the host's out-of-memory killer or the job scheduler",
        "bash (job status `Killed`), slurm:src/slurmd/slurmstepd (oom-kill event), "
        "torch/distributed/elastic/multiprocessing/errors/__init__.py (Signal 9)",
    ),
    # the shell names the fatal signal a job died on (``line 3:  3904 Aborted  (core dumped) python
    # train.py``): a native crash (a C++ abort or assertion, memory corruption, a segfault)
    Signal(
        "signal_death",
        FATAL,
        r"\b(?:Aborted|Segmentation fault|Bus error|Floating point exception|Illegal instruction)\s*\(core dumped\)"
        r"|\b\d+ (?:Aborted|Segmentation fault|Bus error|Floating point exception|Illegal instruction)\s+\S"
        r"|^\s*(?:Aborted|Segmentation fault|Bus error)\s*$",
        "the process died on a fatal signal (SIGABRT, SIGSEGV, SIGBUS, SIGFPE, SIGILL): a native crash",
        "bash: siglist.c (signal names) and jobs.c (job status, `(core dumped)`)",
    ),
    Signal(
        "time_limit",
        STOP,
        r"DUE TO TIME LIMIT|CANCELLED DUE TO|DUE TO PREEMPTION",
        "the job scheduler stopped the job: its time limit, a preemption or a node failure",
        "slurm:src/slurmd/slurmstepd/req.c (`*** JOB N ON node CANCELLED AT t DUE TO TIME LIMIT ***`)",
    ),
    # slurm names no reason when the job's user (or an admin) ran scancel: a person's cancel
    Signal(
        "job_cancelled",
        STOP,
        r"CANCELLED AT \S+",
        "the job was cancelled (scancel), with no time limit or preemption named",
        "slurm:src/slurmd/slurmstepd/req.c (`*** JOB N ON node CANCELLED AT t ***`)",
    ),
    # KeyboardInterrupt is SIGINT, which a terminal's Ctrl-C sends to every process of its group (no
    # scheduler stops a job with it); the launcher of those workers may then log a SIGTERM of its own
    # (DeepSpeed's launch.py: workers' KeyboardInterrupt tracebacks, then "Main process received
    # SIGTERM, exiting"): a block holding both is a person's stop, so this class ranks before SIGTERM's
    Signal(
        "keyboard_interrupt",
        STOP,
        r"^\s*KeyboardInterrupt\b|\^C.*Traceback|Detected KeyboardInterrupt, attempting graceful shutdown",
        "a person stopped it with Ctrl-C, a KeyboardInterrupt",
        "python (KeyboardInterrupt), lightning/pytorch/trainer/call.py (_call_and_handle_interrupt)",
    ),
    Signal(
        "terminated",
        STOP,
        r"got signal: 15\b|Signal 15 \(SIGTERM\)|\bSIGTERM\b|exitcode\s*:\s*-15\b"
        r"|Training interrupted \(via signal\)|`Termination signal` is detected by the operating system",
        "the process got SIGTERM from another process (the job scheduler, a launcher stopping its "
        "workers, the system); no person is named",
        "torch/distributed/elastic/multiprocessing/api.py (SignalException), "
        "deepspeed:deepspeed/launcher/launch.py, "
        "marian:src/training/training.h (finished), "
        "paddle/fluid/platform/init.cc (SignalHandle: Termination signal is detected by the operating system)",
    ),
    Signal(
        "exception",
        FATAL,
        r"^[A-Za-z_][\w.]*(?:Error|Exception|Exit)\b:?",
        "an uncaught Python exception",
        "python (traceback's last line)",
    ),
)
BY_NAME = {s.name: s for s in SIGNALS}
#: The first line of a Python traceback.
TRACEBACK = r"Traceback \(most recent call last\)"
#: Stops that are no fault of the training itself (Ctrl-C, SIGTERM, the scheduler).
DELIBERATE = tuple(s.name for s in SIGNALS if s.role == STOP)
#: A launcher stopping its other workers because one failed: a consequence of that failure, not a cause
#: (torch/multiprocessing/spawn.py ``Terminating process N via signal SIGTERM``,
#: torch/distributed/elastic/multiprocessing/api.py ``Sending process N closing signal SIGTERM``).
LAUNCHER_STOP = r"Terminating process \d+ via signal SIGTERM|Sending process \d+ closing signal SIGTERM"


def role_of(kind: str) -> str:
    """The role of a signal class (``exception`` for an unknown name: any traceback)."""
    return BY_NAME[kind].role if kind in BY_NAME else FATAL
