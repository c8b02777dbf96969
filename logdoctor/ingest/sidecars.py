"""The plan of a run folder's log: the arguments or config file its trainer writes beside it.

A per-epoch table or a metrics stream states no plan. The trainers that write them save their arguments
or their whole config in the same run folder when training starts:

- Ultralytics (YOLOv8+) ``engine/trainer.py:116`` (8.3.0: ``yaml_save(self.save_dir / "args.yaml",
  vars(self.args))`` in ``BaseTrainer.__init__``): ``epochs: N``, ``patience: P`` (EarlyStopping,
  ``utils/torch_utils.py:707-712``), ``time:`` (hours; when set it replaces ``epochs`` as the plan);
- YOLOv5 ``train.py`` (v5.0:56-57 ``yaml.dump``, v6.1:89-90 ``yaml.safe_dump(vars(opt), f)`` into
  ``save_dir / 'opt.yaml'``; v7.0:90 ``yaml_save(save_dir / 'opt.yaml', vars(opt))``): ``epochs: N``,
  ``patience: P`` (v6.0+);
- detectron2 ``engine/defaults.py:230-240`` (``default_setup``: ``cfg.dump()`` into
  ``OUTPUT_DIR/config.yaml``, the folder of ``metrics.json`` (``utils/events.py`` JSONWriter) and
  ``log.txt`` (``setup_logger(output_dir)``)): ``SOLVER:`` / ``MAX_ITER: N``, iterations, not epochs;
  a LazyConfig run saves ``train:`` / ``max_iter: N`` under the same name (``LazyConfig.save``);
- MMEngine ``visualization/vis_backend.py:233-240`` (``LocalVisBackend.add_config`` dumps the config to
  ``config.py`` in ``vis_data/``, beside ``scalars.json``) and ``runner/runner.py:2278-2284``
  (``dump_config``: ``<work_dir>/<config file name>``, else ``<work_dir>/<timestamp>.py``; ``scalars.json``
  is in ``<work_dir>/<timestamp>/vis_data/``): ``train_cfg = dict(... max_epochs=N ...)`` or ``max_iters=N``;
- SpeechBrain ``core.py:88-101`` (``create_experiment_directory`` writes the resolved hyperparameters to
  ``hyperparams.yaml`` in the experiment folder, and its log file ``log.txt`` there; the recipes'
  ``train_log: <output_folder>/train_log.txt``):
  ``number_of_epochs: N``, and the classifier's output count ``out_n_neurons: k`` (the classification
  recipes: ESC50, IEMOCAP, UrbanSound8k, VoxCeleb, VoxLingua107) or ``n_classes: k`` (SpeechBrain-MOABB),
  never ``output_neurons`` (the token count of the ASR recipes: a vocabulary is no class count).

- timm ``train.py`` (``with open(os.path.join(output_dir, 'args.yaml'), 'w')``: ``yaml.safe_dump`` of its
  arguments, beside ``summary.csv``): its plan is ``create_scheduler_v2``'s ``num_epochs`` (printed as
  ``Scheduled epochs: N``; ``timm/scheduler/scheduler_factory.py``), ``epochs`` over ``lr_cycle_limit``
  cycles plus ``cooldown_epochs`` for the cycle schedulers (cosine, tanh, poly), plus ``warmup_epochs``
  where ``warmup_prefix``.

Only the log's own folder is looked in (for MMEngine also the work dir two folders up, only under
``vis_data/``), only these writer-named files, read-only and at most ``MAX_BYTES``; keys are read without
a YAML or Python parser (no dependency). A file that holds no plan is ignored with a notice.
"""

from __future__ import annotations

import dataclasses
import math
import re
from collections.abc import Callable
from pathlib import Path

from logdoctor.ingest.parsers.base import ParseResult
from logdoctor.model import ConfigFact

#: The arguments files of the per-epoch tables, in the order they are tried.
SIDECARS = ("args.yaml", "opt.yaml")
#: Every plan source a file beside the log gives (RunStructure.planned_source / planned_epochs_source).
SOURCES = frozenset({*SIDECARS, "config.yaml", "config.py", "hyperparams.yaml"})
#: The sources whose value a run's own rows may pass (a whole config dump: structure/epochs.py passed_budget).
CONFIG_SOURCES = frozenset({"config.yaml", "config.py", "hyperparams.yaml"})
#: A larger file is no arguments dump (Ultralytics' args.yaml is ~2 KB, YOLOv5's opt.yaml ~1 KB, a
#: detectron2 config.yaml ~10 KB, an MMEngine config.py ~10 KB, a SpeechBrain hyperparams.yaml ~10 KB).
MAX_BYTES = 256 * 1024
_LINE = re.compile(r"^([A-Za-z_][\w-]*):[ \t]*(.*?)[ \t]*$")
_NESTED = re.compile(r"^( *)([A-Za-z_][\w-]*):[ \t]*(.*?)[ \t]*$")
_COMMENT = re.compile(r"[ \t]+#.*$")
_NULL = frozenset({"", "null", "~", "none", "false"})
#: SpeechBrain keys that name a classifier's output count (see the module docstring).
CLASS_KEYS = ("out_n_neurons", "n_classes")


@dataclasses.dataclass(frozen=True, slots=True)
class SidecarPlan:
    """What a file beside the log states: planned epochs or steps, patience, class count, and the notice."""

    epochs: int | None
    patience: int | None
    #: the plan source's name (RunStructure.planned_source / planned_epochs_source)
    source: str
    note: str
    steps: int | None = None
    #: (count, key) of a classifier's output count
    classes: tuple[int, str] | None = None


def _value(raw: str) -> str:
    return _COMMENT.sub("", raw).strip().strip("'\"")


def _keys(text: str) -> dict[str, str]:
    """Top-level ``key: value`` pairs (indented lines belong to a nested value and are not read)."""
    out: dict[str, str] = {}
    for line in text.splitlines():
        m = _LINE.match(line)
        if m:
            out.setdefault(m.group(1), _value(m.group(2)))
    return out


def nested(text: str, path: tuple[str, ...]) -> str | None:
    """The value of the block-YAML key ``path`` (``("SOLVER", "MAX_ITER")``), by indentation: a key's
    parents are the nearest less-indented keys above it. None when absent."""
    stack: list[tuple[int, str]] = []
    for line in text.splitlines():
        m = _NESTED.match(line)
        if not m:
            continue
        indent = len(m.group(1))
        while stack and stack[-1][0] >= indent:
            stack.pop()
        stack.append((indent, m.group(2)))
        if tuple(k for _, k in stack) == path:
            return _value(m.group(3))
    return None


def _positive(value: str | None) -> int | None:
    if value is None or not re.fullmatch(r"\d+", value):
        return None
    return int(value) or None


def _read(path: Path, name: str) -> str | SidecarPlan:
    """The file's text, or the plan-less notice that says why it was not read."""
    try:
        if path.stat().st_size > MAX_BYTES:
            return SidecarPlan(
                None, None, name, f"{path.name} beside the log is over {MAX_BYTES // 1024} KiB: not read"
            )
        return path.read_bytes().decode("utf-8")
    except (OSError, UnicodeDecodeError):
        return SidecarPlan(None, None, name, f"{path.name} beside the log could not be read as text: ignored")


def _args(text: str, name: str) -> SidecarPlan:
    """Ultralytics ``args.yaml`` / YOLOv5 ``opt.yaml``."""
    keys = _keys(text)
    epochs, patience = _positive(keys.get("epochs")), _positive(keys.get("patience"))
    if epochs is None:
        return SidecarPlan(None, None, name, f"{name} beside the log states no 'epochs: N': ignored")
    if keys.get("time", "").lower() not in _NULL:
        return SidecarPlan(None, None, name, f"{name} beside the log plans by time (time: {keys['time']}), not epochs")
    said = f"epochs {epochs}" + (f", patience {patience}" if patience else "")
    return SidecarPlan(epochs, patience, name, f"the run's plan from {name} beside the log: {said}")


def _detectron2(text: str, name: str) -> SidecarPlan:
    """detectron2 ``config.yaml``: ``SOLVER.MAX_ITER`` (a CfgNode dump) or ``train.max_iter`` (LazyConfig)."""
    for path in (("SOLVER", "MAX_ITER"), ("train", "max_iter")):
        steps = _positive(nested(text, path))
        if steps is not None:
            key = ".".join(path)
            return SidecarPlan(None, None, name, f"the run's plan from {name} beside the log: {key} {steps}", steps)
    return SidecarPlan(None, None, name, f"{name} beside the log states no SOLVER.MAX_ITER: ignored")


_TRAIN_CFG = re.compile(r"^train_cfg\s*=\s*dict\(", re.MULTILINE)


def _mmengine(text: str, shown: str) -> SidecarPlan:
    """MMEngine's dumped config: the top-level ``train_cfg = dict(...)``'s ``max_epochs`` or ``max_iters``
    (a literal, or a top-level ``name = N`` it refers to)."""
    name = "config.py"
    m = _TRAIN_CFG.search(text)
    if m is None:
        return SidecarPlan(None, None, name, f"{shown} beside the log states no train_cfg: ignored")
    depth, end = 1, m.end()
    while end < len(text) and depth:
        depth += {"(": 1, ")": -1}.get(text[end], 0)
        end += 1
    body = text[m.end() : end]
    for key in ("max_epochs", "max_iters"):
        v = re.search(rf"\b{key}\s*=\s*([A-Za-z_]\w*|\d+)", body)
        if v is None:
            continue
        value = v.group(1)
        if not value.isdigit():  # a variable of the config: its top-level assignment
            ref = re.search(rf"^{re.escape(value)}\s*=\s*(\d+)\s*$", text, re.MULTILINE)
            value = ref.group(1) if ref else ""
        n = _positive(value)
        if n is None:
            break
        note = f"the run's plan from {shown} beside the log: train_cfg {key}={n}"
        if key == "max_epochs":
            return SidecarPlan(n, None, name, note)
        return SidecarPlan(None, None, name, note, n)
    return SidecarPlan(None, None, name, f"{shown} beside the log states no max_epochs or max_iters: ignored")


def _speechbrain(text: str, name: str) -> SidecarPlan:
    """SpeechBrain ``hyperparams.yaml``: ``number_of_epochs`` and a classifier's output count."""
    keys = _keys(text)
    epochs = _positive(keys.get("number_of_epochs"))
    classes = next(((n, k) for k in CLASS_KEYS if (n := _positive(keys.get(k))) is not None and n >= 2), None)
    said = [f"number_of_epochs {epochs}"] if epochs else []
    said += [f"{classes[1]} {classes[0]} classes"] if classes else []
    if not said:
        return SidecarPlan(None, None, name, f"{name} beside the log states no number_of_epochs: ignored")
    return SidecarPlan(
        epochs, None, name, f"the run's plan from {name} beside the log: {', '.join(said)}", None, classes
    )


#: timm's schedulers whose length is their cycles' (``get_cycle_length``), to which the cooldown is added.
_TIMM_CYCLES = frozenset({"cosine", "tanh", "poly"})


def _timm(text: str, name: str) -> SidecarPlan:
    """timm ``train.py``'s ``args.yaml``: the epochs its scheduler plans (``Scheduled epochs``)."""
    keys = _keys(text)
    epochs, sched = _positive(keys.get("epochs")), keys.get("sched")
    if epochs is None or sched is None:
        return SidecarPlan(None, None, name, f"{name} beside the log states no 'epochs' and 'sched': ignored")
    cooldown = _positive(keys.get("cooldown_epochs")) or 0
    warmup = (_positive(keys.get("warmup_epochs")) or 0) if keys.get("warmup_prefix", "").lower() == "true" else 0
    cycles = _positive(keys.get("lr_cycle_limit")) or 1
    try:
        mul = float(keys.get("lr_cycle_mul", "1.0"))
    except ValueError:
        return SidecarPlan(None, None, name, f"{name} beside the log has an unreadable lr_cycle_mul: ignored")
    if sched in _TIMM_CYCLES:
        length = epochs * cycles if mul == 1.0 else math.floor(-epochs * (mul**cycles - 1) / (1 - mul))
        planned = length + cooldown + warmup
    else:
        planned = epochs + warmup
    said = f"{planned} epochs ({sched} schedule of epochs {epochs}, as timm's create_scheduler_v2 counts them)"
    return SidecarPlan(planned, None, name, f"the run's plan from {name} beside the log: {said}")


#: (text, the file's name) -> what it states
Reader = Callable[[str, str], SidecarPlan]


def _candidates(log: Path) -> list[tuple[Path, str, Reader]]:
    """(file, source name, reader) of each writer-named file that may hold ``log``'s plan, in order."""
    here = log.parent
    if log.name in ("results.csv", "results.txt"):
        return [(here / n, n, _args) for n in SIDECARS]
    if log.name == "summary.csv":
        return [(here / "args.yaml", "args.yaml", _timm)]
    speechbrain = (here / "hyperparams.yaml", "hyperparams.yaml", _speechbrain)
    if log.name == "metrics.json":
        return [(here / "config.yaml", "config.yaml", _detectron2)]
    if log.name == "log.txt":  # detectron2's, or the log file of SpeechBrain's experiment folder
        return [(here / "config.yaml", "config.yaml", _detectron2), speechbrain]
    if log.name == "train_log.txt":
        return [speechbrain]
    if log.name == "scalars.json":
        # LocalVisBackend writes config.py beside scalars.json; in <work_dir>/<timestamp>/vis_data the
        # runner's dump is <work_dir>/<config name>.py (the default work dir is named after the config:
        # mmdet tools/train.py) or <work_dir>/<timestamp>.py
        files = [here / "config.py"]
        if here.name == "vis_data":
            work = here.parent.parent
            files += [work / f"{work.name}.py", work / f"{here.parent.name}.py"]
        return [(f, "config.py", _mmengine) for f in files]
    return []


def read_sidecar(log: Path) -> SidecarPlan | None:
    """The plan the file beside ``log`` states; None when ``log`` is no writer's log or its folder holds
    no such file. A file that cannot be read as one gives a plan of None with the notice that says so."""
    for path, name, reader in _candidates(log):
        if not path.is_file():
            continue
        text = _read(path, name)
        return text if isinstance(text, SidecarPlan) else reader(text, path.name)
    return None


def _states_steps(result: ParseResult) -> bool:
    """Whether the log itself states a planned length (which comes first)."""
    m = result.markers
    return any(v is not None for v in (result.total_steps, m.config_planned, m.planned_steps, m.epochs_planned))


def with_sidecar_plan(result: ParseResult, log: Path | None) -> ParseResult:
    """``result`` with the planned epochs or steps, patience and class count of the file beside ``log``
    where the log itself states none, and the notice that says where they came from."""
    plan = read_sidecar(log) if log is not None else None
    if plan is None:
        return result
    out = dataclasses.replace(result, notes=(*result.notes, plan.note))
    if plan.classes and not any(f.name == "classes" for f in result.config_facts):
        fact = ConfigFact("classes", plan.classes[0], f"{plan.source} {plan.classes[1]}")
        out = dataclasses.replace(out, config_facts=(*out.config_facts, fact))
    m = result.markers
    if plan.epochs is not None and m.epochs_planned is None:
        markers = dataclasses.replace(
            m,
            epochs_planned=plan.epochs,
            epochs_planned_source=plan.source,
            patience=m.patience if m.patience is not None else plan.patience,
        )
        out = dataclasses.replace(out, markers=markers)
    elif plan.steps is not None and not _states_steps(result):
        out = dataclasses.replace(out, total_steps=plan.steps, planned_source=plan.source)
    return out
