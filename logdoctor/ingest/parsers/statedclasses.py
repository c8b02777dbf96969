"""The class count (``num_classes=10``, ``"num_labels": 3``) and the vocabulary size a text log states."""

from __future__ import annotations

import polars as pl

from logdoctor.ingest.configfacts import CLASS_KEYS
from logdoctor.ingest.parsers.lines import LINE, LINE_NO
from logdoctor.ingest.parsers.screen import Lines
from logdoctor.model import ConfigFact

#: ``num_classes=10`` (argparse Namespace), ``num_classes: 10`` (YAML, a printed dict), ``"num_labels": 3``
#: (JSON); the key whole (``max_num_classes`` is not it), the value a plain integer.
STATED = r"(?i)(?:^|\W)(" + "|".join(CLASS_KEYS) + r")[\"']?\s*[:=]\s*[\"']?(\d{1,6})(?:[\"',)\s}\]]|$)"


def stated_classes(frame: pl.DataFrame) -> tuple[ConfigFact, ...]:
    """The class count the log's non-step lines state, as a ``classes`` fact naming its line (1 is
    kept: HF's regression head); none when no line states one, or lines state different counts."""
    if frame.height == 0 or not Lines.of(frame[LINE]).may_match(STATED):
        return ()
    hits = (
        frame.filter(pl.col(LINE).str.contains(STATED))
        .select(LINE_NO, pl.col(LINE).str.extract_groups(STATED).alias("m"))
        .unnest("m")
    )
    if hits.height == 0:
        return ()
    values = {int(v) for v in hits["2"]}
    if len(values) != 1 or (k := values.pop()) < 1:
        return ()
    first = hits.row(0, named=True)
    return (ConfigFact(name="classes", value=k, source=f"log line {first[LINE_NO]} {first['1']}"),)


#: ``vocab_size: 50257``, ``'n_vocab': 32000``, ``padded_vocab_size=50432``, Megatron's ``padded vocab (size: 50257)``:
#: the vocabulary a language model's output spans (ln |V| is its uniform output, never a chance level).
VOCAB = r"(?i)(?:\b(?:padded_)?(?:vocab_size|n_vocab)[\"']?\s*[:=]\s*[\"']?|\bvocab \(size:\s*)(\d{2,8})\b"


def stated_vocab(frame: pl.DataFrame) -> tuple[ConfigFact, ...]:
    """The vocabulary size the log's lines state, as a ``vocab`` fact naming its line (the last one
    stated: a padded size follows the tokenizer's); none when no line states one."""
    if frame.height == 0 or not Lines.of(frame[LINE]).may_match(VOCAB):
        return ()
    hits = (
        frame.filter(pl.col(LINE).str.contains(VOCAB))
        .select(LINE_NO, pl.col(LINE).str.extract(VOCAB, 1).cast(pl.Int64, strict=False).alias("v"))
        .drop_nulls()
    )
    if hits.height == 0:
        return ()
    line, v = hits.row(hits.height - 1)
    return (ConfigFact(name="vocab", value=int(v), source=f"log line {line}"),)
