"""Per-line rules of the text parser: what a value is, which key names it, what a line is for."""

from __future__ import annotations

import re
from dataclasses import dataclass

import polars as pl

from logdoctor import vocab
from logdoctor.ingest.aliases import ALIASES, FieldMap, normalize_key

#: One value as logs print it: fingerprints joined by ``+`` (``micro_fp``; first, since a hex digest
#: of digits and one ``e`` reads as an integer with an exponent), a decimal (``123456789.5``,
#: ``1.5e-3``), an integer with an exponent, a hex fingerprint (``3e2a9c1d``), a
#: number with thousands separators, an integer, or nan/inf. Order matters (the first alternative
#: that matches wins). Written so that Python ``re`` and polars (Rust regex) agree.
VALUE = (
    r"(?:\b[0-9a-f]{8,}(?:\+[0-9a-f]{8,})+\b"  # first: ``351e8011...+ce7e...`` is no number 351e8011...
    r"|[-+]?\b\d+\.\d*(?:[eE][-+]?\d+)?"
    r"|[-+]?\b\d+[eE][-+]?\d+\b"
    r"|\b[0-9a-f]{8,}\b"
    r"|[-+]?\b\d{1,3}(?:,\d{3})+(?:\.\d+)?\b"
    r"|[-+]?(?:\b\d+|\.\d+)(?:[eE][-+]?\d+)?"
    r"|[-+]?\b(?:nan|NaN|NAN|inf|Inf|INF|infinity|Infinity)\b)"
)
VALUE_RE = re.compile(VALUE)
#: The shape of a line: every value (and the blanks before it) replaced by ``#``.
SHAPE_VALUE = r"\s*" + VALUE


def shape_of(lines: pl.Series) -> pl.Series:
    """The shape of each line: every value (and the blanks before it) replaced by ``#``, after a
    literal ``#`` (and ``\\``) is escaped with a ``\\``. Unescaped, a tqdm bar ``|#    |`` had the
    shape of ``|8    |`` with one value fewer, and its values were read one key over (issue 28).
    The escape runs only when some line holds a ``#`` or ``\\`` (the test is ~10x cheaper).
    Blanks at the end of a line are no part of its shape: tqdm pads a drawing with them to erase a
    longer one before it, so the two drawings of one count (the values of the batch before, then
    of this one) were two shapes, and the first was kept as a step written again (LD005)."""
    lines = lines.str.strip_chars_end()
    if lines.str.contains("#", literal=True).any() or lines.str.contains("\\", literal=True).any():
        lines = lines.str.replace_all("\\", "\\\\", literal=True).str.replace_all("#", "\\#", literal=True)
    return lines.str.replace_all(SHAPE_VALUE, "#")


#: Lines that are source code or a Python format string, never metrics.
CODE = (
    r"\bprint\(|\bf[\"']|\.format\(|\{[^{}]*:[<>^]?[.,]?\d*[a-z%]\}|\blambda\b"
    r"|^\s*(?:def|class|import|from|for|while|if|elif|return|with|raise|assert|@)\b.*[(:=]"
    r"|^\s*#|^\s*[A-Za-z_][\w.]*\s*(?::\s*[A-Za-z_][\w.\[\]]*)?\s*=\s*[^=].*#"
)
CODE_RE = re.compile(CODE)
#: A marker that the whole line reports an evaluation pass. PaddleOCR opens its evaluation's line
#: with ``cur metric, `` (tools/program.py ``train()``: ``'cur metric, {}'.format(', '.join(['{}: {}'
#: .format(k, v) for k, v in cur_metric.items()]))``); its ``best metric, `` line is the best so far, no
#: evaluation.
EVAL_MARK_RE = re.compile(
    r"(?i)(?:^\s*|[\[|]\s*|\]\s+|\s-\s+|-->\s*|\bcollection=)"
    r"(?:eval|evaluation|evaluating|valid|validate|validation|val|test|dev|cur metric(?=,))\b"
    r"(?![-_/])"
)
#: The record prefix of Google's C++ logging, as TensorFlow, XLA and JAX print it: absl's
#: ``I1207 12:00:00.123456   63616 gpu_device.cc:2020] `` (abseil-cpp absl/log/internal/log_format.cc
#: FormatBoundedFields: severity letter, month and day, time, thread id, then ``file:line] `` and
#: ``RAW: `` for a raw log), whose time is ``0000 00:00:<unix seconds>`` before absl's time zone is
#: loaded (``"%c0000 00:00:%02d.%06d %7d "``: the lines after TensorFlow's "All log messages before
#: absl::InitializeLog() is called are written to STDERR"); and TensorFlow's own
#: ``2025-12-14 13:45:04.362248: I external/local_xla/xla/service/service.cc:163] ``
#: (tsl/platform/default/logging.cc ``"%s.%06d: %c%s %s:%d] %s\n"``: date-time, severity letter, an
#: optional thread id, file:line).
CPP_RECORD = (
    r"(?:[IWEF]\d{4} (?:\d{2}:\d{2}:\d{2}|00:00:\d+)\.\d{6} +-?\d+"
    r"|\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}\.\d{6}: [IWEF](?: +\d+)?)"
    r" [^\s\]]+:\d+\] ?(?:RAW: )?"
)
#: A C++ log record glued after a row's values (written while the row's line had no newline yet:
#: ``recall: 0.91362025-12-14 13:46:06.535895: I .../subprocess_compilation.cc:346] ptxas warning``):
#: the rest of the line is that record, never the row's; read as the row's, its ``file.cc:346``
#: became a metric named after the file. The token the record touches goes with it: the record may
#: have cut the row's value short (``training loss: 2.0452017-06-21 ...`` whose ``83`` follows on a
#: later line), and a value read from it would be wrong (``loss: 12017`` read as a spike).
GLUED_RECORD = r"\S*" + CPP_RECORD + ".*$"
#: A tqdm drawing (``Epoch 0: 100%|####| 40/40 [00:02<00:00, 19.49it/s, train_loss=4.10]``, tqdm's
#: ``{l_bar}{bar}| {n_fmt}/{total_fmt} [{elapsed}<{remaining}, {rate_fmt}{postfix}]``) with another
#: message glued after its closing ``]`` (a callback that logs while the bar's line has no newline yet:
#: Lightning's ModelCheckpoint ``...val_loss=3.000]Epoch 0, global step 40: 'val_loss' reached
#: 3.00394 (best 3.00394), saving model to '/tmp/x.ckpt' as top 3``). The drawing ends at its ``]``
#: (tqdm writes nothing after it but padding); the rest is a record of its own, read apart: read as
#: the bar's, its words and file path became a metric column. A terminal code after the ``]`` (tqdm's
#: cursor-up ``\x1b[A`` for nested bars) is the drawing's own. Groups: the drawing, the message.
BAR_GLUED = r"^(.*?\d+%\|[^|]*\| *\d+/(?:\d+|\?) \[[^\[\]]*\]) *([^\s\x1b].*)$"
#: Log-record prefixes up to the level name (``2021-05-10 14:08 | INFO | ``), stripped first; and the
#: absl/glog prefix ``I1207 12:00:00.123456   140 train.py:123] `` (absl/logging/__init__.py:831
#: ``'%c%02d%02d %02d:%02d:%02d.%06d %5d %s:%d] %s'``: severity letter, date, time, thread, file:line),
#: which JAX/clu and TensorFlow programs print, and the C++ forms of ``CPP_RECORD``. After the level
#: name, a source tag ``[train.py:878] `` (logging's ``[%(filename)s:%(lineno)d]``) and icefall's
#: rank tag ``(0/4) `` (icefall/utils.py setup_logger: ``[%(filename)s:%(lineno)d] ({rank}/{world_size})
#: %(message)s``) are prefix too: read as the message, the line number became a value and the rank
#: tag hid the message's first key.
LEVEL_PREFIX = (
    r"^(?:" + CPP_RECORD + r"|.{0,120}?\b(?:INFO|WARNING|WARN|DEBUG|ERROR|CRITICAL)\b\]?(?:\s*[-:|]\s*|\s+)"
    r"(?:\[[\w./-]+\.py:\d+\] (?:\(\d+/\d+\) )?)?)"
)
#: Launchers' rank tags before a line (ranks.py names them): ``[rank0]:``, torchrun's ``[default0]:``,
#: OpenMPI's ``[1,0]<stdout>:``, srun's ``0: ``.
RANK_PREFIX = r"^(?:\[[A-Za-z_]*\d+\]:\s?|\[\d+,\d+\]<std(?:out|err)>:\s?|\d{1,4}:\s)"
ANSI = r"\x1b\[[0-9;?]*[A-Za-z]"
#: ``np.float64(2.5)`` (numpy 2 repr) and ``tensor(2.5, device='cuda:0')`` (torch) around a value.
WRAPPED = r"\b(?:np\.[a-z]+\d*|numpy\.[a-z]+\d*|tensor)\(\s*([^,()\s]*)[^()]*\)"
#: Keys that name a value printed before them (``45000 tok/s``, ``9240 ms/iter``).
_UNIT_AFTER = re.compile(
    r"^\s*(tok/s|tokens/s|tok/sec|tokens/sec|tokens/second|words/s|samples/s|sents?/s"
    r"|ms/iter|ms/batch|ms/step|batches|sec)\b"
)
_WORD_AFTER = re.compile(r"^\s*([A-Za-z][A-Za-z_]*)\b(?![/=:])")
_DELIMS = re.compile(r"[|,;{}\[\]\t<>]|\s:\s|:\s|\s-\s|\s{2,}")
_UNITS = frozenset(
    {
        "ms",
        "s",
        "sec",
        "secs",
        "h",
        "m",
        "min",
        "%",
        "x",
        "gb",
        "mb",
        "it",
        "it/s",
        "s/it",
        "ms/it",
        "us",
        "batches",
    }
)
#: First words that make a phrase a different quantity than its last word (``consumed tokens``).
_CUMULATIVE = frozenset({"consumed", "total", "cumulative", "number", "skipped", "elapsed", "num"})
_STOPWORDS = frozenset({"of", "the", "at", "per", "in", "no", "with", "a", "an", "to", "for"})
#: ``number of nan iterations:``: a nan that is a word of the next key, not a value.
_NAN_IN_KEY = re.compile(r"\s+[a-z]+\b[^|,;=:]{0,40}[:=]")
_STEP_RANK = {normalize_key(n): i for i, n in enumerate(ALIASES["step"])}
_MAX_KEY_WORDS = 6
#: Words after which a phrase's tail is its unit (Lightning/NeMo ``train_step_timing in s``, ``tokens
#: per s``): ``s`` there is seconds, never llm.c's step key ``s:``.
_UNIT_LEADS = frozenset({"in", "per"})
#: Auxiliary verbs: a phrase that has one with words after it is a sentence, not a metric's name
#: (ESPnet2's ``[Early stopping] valid.loss has not been improved 2 epochs continuously``: a count
#: of epochs, never a ``valid.loss has not been improved`` evaluation). Metric names hold no verb
#: of this kind; a trailing one (``loss is 2.3``) is left as it was.
_AUXILIARY = frozenset({"has", "have", "had", "is", "are", "was", "were", "been", "will", "would", "should"})


def key_phrase(gap: str, attached: bool = False) -> str | None:
    """The key named by the text just before a value (``" | lm loss: "`` -> ``"lm loss"``).

    Args:
        gap: the text between the previous value (or the line start) and this value.
        attached: True when the gap follows a value with no blank, so that a unit word at its
            start (``20.1ms, mfu 5``) belongs to that value.
    """
    body = gap.rstrip(" \t'\"=:")
    parts = _DELIMS.split(body)
    piece = parts[-1].strip(" \t'\"=:(").lstrip("-> ")  # ``-- GLOBAL_STEP:``, ``--> STEP:``
    words = piece.split()
    if attached and len(parts) == 1 and words and words[0].lower() in _UNITS:
        words.pop(0)
    if not words or len(words) > _MAX_KEY_WORDS or not words[0][:1].isalpha():
        return None
    if words[-1].lower() in _STOPWORDS:
        return None
    if any(w.lower() in _AUXILIARY for w in words[:-1]):
        return None
    return " ".join(words)


def resolve(phrase: str, fields: FieldMap) -> str:
    """Column name for a key phrase: canonical when the phrase, a trailing part of it or its last
    ``/`` segment is a known alias; otherwise its normalised form.
    """
    full = normalize_key(phrase)
    words = phrase.split()
    if fields.canonical(phrase) or words[0].lower() in _CUMULATIVE:
        return fields.resolve(phrase)
    if is_eval_key(full) and len(words) <= 2:
        return full
    for i in range(1, len(words)):
        if words[i].startswith("("):  # a unit in brackets (``Time taken (s)``) names no field alone
            continue
        if words[i - 1].lower() in _UNIT_LEADS:  # nor a unit after ``in``/``per`` (NeMo's ``timing in s``)
            continue
        canon = fields.canonical(" ".join(words[i:]))
        if canon:
            return canon
    tail = fields.canonical(phrase.rsplit("/", 1)[-1])
    return tail if tail and tail != "step" else full


def is_eval_key(name: str) -> bool:
    """True for a normalised key that holds an evaluation metric (``val_loss``, ``eval_acc``), as
    :mod:`logdoctor.vocab` decides."""
    return vocab.is_eval(name)


def eval_step(name: str, fields: FieldMap) -> bool:
    """True for an eval-prefixed key that holds the step (``dev_other_num_updates``)."""
    parts = name.split("_")
    return any(fields.canonical("_".join(parts[j:])) == "step" for j in range(1, len(parts)))


def step_rank(name: str, fields: FieldMap) -> int:
    """Priority of a key that resolves to ``step`` (lower wins: ``num_updates`` over ``update``)."""
    if normalize_key(name) in {normalize_key(v) for v in fields.overrides.values()}:
        return -1
    return _STEP_RANK.get(normalize_key(name), len(_STEP_RANK))


@dataclass(frozen=True, slots=True)
class LineKeys:
    """What each value of a representative line is.

    Attributes:
        keys: per value, its key phrase (None: not a metric, e.g. a timestamp part).
        totals: per value, True when it is the total of the value before it (``254/52000``).
    """

    keys: tuple[str | None, ...]
    totals: tuple[bool, ...]


def value_spans(line: str) -> list[tuple[int, int]]:
    """(start, end) of every value in a line, skipping a ``nan`` that is a word of a key."""
    return [
        m.span()
        for m in VALUE_RE.finditer(line)
        if not (
            m.group().isalpha()
            and _NAN_IN_KEY.match(line, m.end())
            and line[: m.start()].rstrip().rsplit(" ", 1)[-1].lower() in _STOPWORDS
        )
    ]


#: Training counters keyed by brackets instead of words: mmcv ``Epoch [3][50/1563]`` and mmengine
#: ``Epoch(train)  [3][50/1563]`` (the epoch, then the iteration within it of the epoch's total),
#: the AverageMeter loops' ``Epoch: [3][ 50/1563]`` (pytorch/examples imagenet/main.py:321 and
#: ProgressMeter :498) and ``Epoch: [3]  [ 50/1563]`` (torchvision references/classification
#: utils.py MetricLogger.log_every, header ``Epoch: [{epoch}]``), timm's ``Train: 3 [ 50/1563 ( 3%)]``
#: (train.py ``train_one_epoch``'s log line); ``Iter(train) [50/40000]`` and ``Iter [50/40000]``
#: (the iteration of the total). ``Epoch(val)`` and ``Test: [ 10/196]`` lines are left to the
#: evaluation rules.
_MM_EPOCH = re.compile(
    r"\bEpoch(?:\(train\))?:?\s*\[\s*\d+\s*\]\s*\[\s*\d+\s*/\s*\d+\s*\]"
    r"|\bTrain:\s*\d+\s*\[\s*\d+\s*/\s*\d+\s*(?=\(\s*\d+%\)\])"
)
#: A message that opens with its step in brackets: clu's LoggingWriter (JAX; clu/metric_writers/
#: logging_writer.py ``write_scalars``: ``logging.info("[%d]%s %s", step, collection, "k=v, ...")``).
_BRACKET_STEP = re.compile(r"^\s*\[\s*\d+\s*\](?:\s|$)")
_MM_ITER = re.compile(r"\bIter(?:\(train\))?\s*\[\s*\d+\s*/\s*\d+\s*\]")
#: The epoch of the planned epochs in brackets: PaddleOCR's train line (tools/program.py ``train()``:
#: ``'epoch: [{}/{}], global_step: {}, {}, avg_reader_cost: ...'.format(epoch, epoch_num, global_step,
#: ...)``) and the plain PyTorch loops written after pytorch-tutorial (yunjey/pytorch-tutorial
#: tutorials/01-basics/feedforward_neural_network/main.py: ``'Epoch [{}/{}], Step [{}/{}], Loss:
#: {:.4f}'.format(epoch+1, num_epochs, i+1, total_step, loss.item())``, ``total_step =
#: len(train_loader)``; its one-line-per-epoch variants ``Epoch [3/50], Train Loss: ...``): the
#: epoch and its total, the plan. The ``Step [i/M]`` after it is the batch within the epoch of the
#: epoch's batches (``len(train_loader)``), from which the step is derived.
_EPOCH_OF = re.compile(r"(?i)\bepoch:?\s*\[\s*\d+\s*/\s*\d+\s*\]")
_EPOCH_OF_STEP = re.compile(
    r"(?i)\bepoch:?\s*\[\s*\d+\s*/\s*\d+\s*\],?\s*(?:step|batch|iter):?\s*\[\s*\d+\s*/\s*\d+\s*\]"
)


def _bracket_counters(line: str, spans: list[tuple[int, int]], keys: list[str | None], totals: list[bool]) -> None:
    """Key the values of an OpenMMLab counter (:data:`_MM_EPOCH`, :data:`_MM_ITER`) in place: the
    epoch, ``batches`` and its total (the step is derived from them), or the step and its total."""
    counters = (
        (_MM_EPOCH, ("epoch", "batches", "batches"), (False, False, True)),
        (_MM_ITER, ("iter", "iter"), (False, True)),
        (_EPOCH_OF_STEP, ("epoch", "epoch", "batches", "batches"), (False, True, False, True)),
        (_EPOCH_OF, ("epoch", "epoch"), (False, True)),
    )
    for pattern, names, of in counters:
        m = pattern.search(line)
        if m is None:
            continue
        inside = [i for i, (a, _) in enumerate(spans) if m.start() <= a < m.end()]
        if len(inside) != len(names):
            continue
        for i, name, total in zip(inside, names, of, strict=True):
            keys[i], totals[i] = name, total
        return


#: A clock duration (``H:MM:SS``, Python's timedelta ``1 day, 2:03:04``, fractional seconds
#: ``0:08:01.463362``): mmcv/mmengine's and detectron2's ``eta: 4:59:11``, PaddleDetection's
#: ``eta: 4:16:32``, swin's ``eta 0:00:56``, detectron2's ``ETA=0:16:24`` and ``Total inference time:
#: 0:08:01.46``. Its numbers are no values: ``eta: 4:59:11`` was an ``eta`` of 4, ``eta: 0:10:00`` one
#: of 0 at every step. Not after a word character, ``.``, ``/`` or ``-`` (ISO ``2021-05-24T09:50:34``,
#: ``[08/30 23:00:36]``), nor after ``:`` or ``=`` but a key's (``a:1:00:00:00``); hours of four
#: digits or more start with no 0 (PCI ids ``0000:00:08.0``). ``MM:SS`` is left alone: its form is a
#: ratio's (``ratio: 3:1``, ``split 80:20``).
CLOCK = re.compile(
    r"(?:(?<=[A-Za-z_][:=])|(?<![\w.:/=-]))(?:\d+ days?, )?(?:\d{1,3}|[1-9]\d{3,}):[0-5]\d:[0-5]\d(?:\.\d+)?"
    r"(?![\w:]|\.\d)"
)


def _drop_clocks(line: str, spans: list[tuple[int, int]], keys: list[str | None], totals: list[bool]) -> None:
    """Unkey, in place, the numbers of every clock duration (:data:`CLOCK`) that is a key's value
    (its first number has a key): dropped as a duration in words (``3h 35m``, textshape) is, so
    that no column holds its hours. A clock with no key before it (a time of day in a prefix) is
    left as it was read. Decided per line shape, on its representative line (the plan)."""
    for m in CLOCK.finditer(line):
        inside = [i for i, (a, b) in enumerate(spans) if m.start() <= a and b <= m.end()]
        if inside and keys[inside[0]] is not None:
            for i in inside:
                keys[i], totals[i] = None, False


def line_keys(line: str) -> LineKeys:
    """Assign a key to every value of one line, from the text around it."""
    spans = value_spans(line)
    n = len(spans)
    gaps = [line[(spans[i - 1][1] if i else 0) : spans[i][0]] for i in range(n)]
    after = [line[spans[i][1] : (spans[i + 1][0] if i + 1 < n else len(line))] for i in range(n)]
    keys: list[str | None] = [None] * n
    totals = [False] * n
    for i in range(n):
        if i and gaps[i].strip() == "/" and not totals[i - 1]:
            if keys[i - 1] is None:
                unit = _WORD_AFTER.match(after[i])
                keys[i - 1] = unit.group(1) if unit else None
            if keys[i - 1] is not None:
                keys[i], totals[i] = keys[i - 1], True
                continue
        attached = bool(i) and gaps[i][:1].isalpha()
        keys[i] = key_phrase(gaps[i], attached)
        if keys[i] is None:
            unit = _UNIT_AFTER.match(after[i])
            keys[i] = unit.group(1) if unit else None
    for i in range(n - 2):
        # ``acc: 5384/8986=0.5992`` (NCRF++): the counts, then their ratio, which is the value
        if totals[i + 1] and keys[i] is not None and gaps[i + 2].strip() == "=":
            keys[i + 2], keys[i], keys[i + 1], totals[i + 1] = keys[i], None, None, False
    if "poch" in line or "Iter" in line or "Train:" in line:
        _bracket_counters(line, spans, keys, totals)
    if ":" in line:  # the cheap test first
        _drop_clocks(line, spans, keys, totals)
    if n and keys[0] is None and _BRACKET_STEP.match(line):
        keys[0] = "step"
    return LineKeys(tuple(keys), tuple(totals))
