"""The sampler probe on plain Python samplers (no framework): the records it writes are emit's, the
numbers it adds are the direct computation's, and it stops, notes and refuses where it must."""

from __future__ import annotations

import math
import random
from collections.abc import Iterator

import numpy as np
import pytest

from logdoctor.bucketing.plan import recommend
from logdoctor.emit import BatchRecorder
from logdoctor.emit.stats import batch_fingerprint, batch_stats, combine
from logdoctor.errors import ConfigError
from logdoctor.model import BATCH_FP, LEN_MAX, LEN_MEAN, LEN_MIN, MICRO_FP, PAD_FRAC, SEQS, TOKENS
from logdoctor.probing import assert_sampler_ok, probe
from logdoctor.probing.records import batches, step_record

LENGTHS = np.ceil(np.random.default_rng(7).lognormal(4.0, 0.8, 600)).astype(np.int64)


class Reshuffled:
    """A batch sampler that reshuffles and re-batches every epoch from its own generator."""

    def __init__(self, n: int = 600, size: int = 12, seed: int = 0) -> None:
        self.n, self.size, self.rng = n, size, np.random.default_rng(seed)

    def __iter__(self) -> Iterator[list[int]]:
        order = self.rng.permutation(self.n)
        return iter([order[i : i + self.size].tolist() for i in range(0, self.n, self.size)])


class SortedOnce:
    """Sort by length and batch once; every epoch the same batches, only their order shuffled."""

    def __init__(self, size: int = 12, seed: int = 0) -> None:
        order = np.argsort(LENGTHS, kind="stable")
        self.batches = [order[i : i + size].tolist() for i in range(0, order.size, size)]
        self.rng = np.random.default_rng(seed)

    def __iter__(self) -> Iterator[list[int]]:
        return iter([self.batches[i] for i in self.rng.permutation(len(self.batches))])


class Endless:
    """A sampler that never ends an epoch."""

    def __iter__(self) -> Iterator[list[int]]:
        rng = np.random.default_rng(1)
        while True:
            yield rng.integers(0, LENGTHS.size, 12).tolist()


def _walked_batches(sampler: object, epochs: int = 3) -> list[list[int]]:
    return [list(b) for _ in range(epochs) for b in sampler]  # type: ignore[attr-defined]


def test_batch_records_are_emits_own() -> None:
    rng = np.random.default_rng(3)
    parts = [rng.choice(LENGTHS.size, int(rng.integers(1, 20)), replace=False) for _ in range(200)]
    idx = np.concatenate(parts)
    table = batches(idx, np.array([p.size for p in parts]), LENGTHS[idx])
    for b, part in enumerate(parts):
        want = {**batch_stats(LENGTHS[part]), "batch_fp": batch_fingerprint(part)}
        assert table.record(b) == want  # exact: the same numbers emit writes, not close ones


def test_a_step_of_several_batches_is_emits_combine() -> None:
    parts = [np.array([5, 1, 9]), np.array([2, 2, 40]), np.array([7])]
    idx = np.concatenate(parts)
    table = batches(idx, np.array([3, 3, 1]), LENGTHS[idx])
    starts = np.array([0, 3, 6])
    pairs = [({**batch_stats(LENGTHS[p]), "batch_fp": batch_fingerprint(p)}, p) for p in parts]
    assert step_record(table, range(3), idx, starts) == combine(pairs)


def test_the_run_rows_are_what_a_recorder_writes() -> None:
    sampler = Reshuffled(seed=5)
    report = probe(Reshuffled(seed=5), lengths=LENGTHS)
    rec = BatchRecorder(LENGTHS)
    want = [rec.record(b) for b in _walked_batches(sampler)]
    t = report.run.table
    assert t.height == len(want)
    cols = {
        SEQS: "n_seq",
        TOKENS: "tokens",
        LEN_MEAN: "len_mean",
        LEN_MIN: "len_min",
        LEN_MAX: "len_max",
        PAD_FRAC: "pad_frac",
        BATCH_FP: "batch_fp",
    }
    for col, key in cols.items():
        assert t[col].to_list() == [w[key] for w in want]


def test_gradient_accumulation_steps_carry_each_micro_batch_fingerprint() -> None:
    report = probe(Reshuffled(seed=2), lengths=LENGTHS, grad_accum=2, epochs=2)
    t = report.run.table
    assert t.height == 50 and set(t[SEQS].to_list()) == {24}
    assert all(fp.count("+") == 1 for fp in t[MICRO_FP].to_list())


@pytest.mark.parametrize(
    ("sampler", "verdict"),
    [
        (Reshuffled(), "healthy"),
        (SortedOnce(), "static"),
        ([[int(i) for i in np.argsort(LENGTHS)[k : k + 12]] for k in range(0, 600, 12)], "sorted"),
    ],
)
def test_plain_samplers_get_their_verdict(sampler: object, verdict: str) -> None:
    assert probe(sampler, lengths=LENGTHS).verdict.batching == verdict


def test_a_fixed_list_of_prebuilt_batches_is_static_in_the_same_order() -> None:
    order = np.random.default_rng(4).permutation(600)
    fixed = [order[i : i + 12].tolist() for i in range(0, 600, 12)]
    v = probe(fixed, lengths=LENGTHS).verdict
    assert v.batching == "static"
    assert "same order every epoch" in v.summary


def test_padding_and_tokens_are_the_direct_computation() -> None:
    sampler = Reshuffled(seed=9)
    walked = _walked_batches(Reshuffled(seed=9))
    p = probe(sampler, lengths=LENGTHS).sampler
    assert p is not None and p.padding is not None and p.tokens is not None and p.padded is not None
    real = np.array([LENGTHS[b].sum() for b in walked])
    padded = np.array([len(b) * LENGTHS[b].max() for b in walked])
    assert p.efficiency == pytest.approx(real.sum() / padded.sum(), rel=1e-12)
    assert p.padding.median == pytest.approx(float(np.median(real / padded)), rel=1e-12)
    assert p.padding.p5 == pytest.approx(float(np.percentile(real / padded, 5)), rel=1e-12)
    assert (p.tokens.median, p.tokens.high) == (float(np.median(real)), float(real.max()))
    assert p.padded.high == float(padded.max())
    assert (p.batches, p.steps, p.epochs, p.batch_size, p.samples) == (150, 150, 3, 12, 600)


def test_recurrence_by_epoch_counts_batches_seen_before() -> None:
    p = probe(SortedOnce(), lengths=LENGTHS).sampler
    assert p is not None and p.recurrence_by_epoch == (0.0, 1.0, 1.0) and p.recurrence == 1.0
    q = probe(Reshuffled(), lengths=LENGTHS).sampler
    assert q is not None and q.recurrence == 0.0


def test_the_chance_level_is_what_a_uniform_reshuffle_repeats() -> None:
    """8 samples in batches of 2 (28 possible pairs): a reshuffled epoch repeats about 4/28 of its
    batches; the probe's chance level and a simulation of random reshuffles agree."""
    lengths = np.arange(1, 9)
    p = probe(Reshuffled(n=8, size=2, seed=11), lengths=lengths, epochs=2).sampler
    assert p is not None and p.recurrence_chance == pytest.approx(4 / 28)
    rng = np.random.default_rng(0)
    shares = []
    for _ in range(4000):
        first = {frozenset(rng.permutation(8)[i : i + 2].tolist()) for i in range(0, 8, 2)}
        second = rng.permutation(8)
        shares.append(np.mean([frozenset(second[i : i + 2].tolist()) in first for i in range(0, 8, 2)]))
    assert float(np.mean(shares)) == pytest.approx(4 / 28, abs=0.015)


def test_the_fix_is_priced_on_the_samples_lengths_as_buckets_prices_it() -> None:
    report = probe(SortedOnce(), lengths=LENGTHS)
    fix = report.sampler.fix if report.sampler else None
    assert fix is not None
    budget = int(math.ceil(max(12 * LENGTHS[b].max() for b in SortedOnce().batches) / 128) * 128)
    plan = recommend(LENGTHS, budget, max_seq_len=min(budget, int(LENGTHS.max())), shuffles=2, seed=0)
    assert (fix.token_budget, fix.boundaries, fix.sequences) == (budget, plan.boundaries, 600)
    assert fix.bucketed_vs_random == plan.relative_throughput("bucketed", "random")
    assert fix.bucketed_vs_this == pytest.approx(fix.efficiency_bucketed / (report.sampler.efficiency or 1))
    assert f"Priced on these 600 samples' lengths: {plan.summary()}." in report.verdict.hint
    assert report.verdict.evidence["fix_token_budget"] == budget
    assert "Estimated from the batches in this log" not in report.verdict.hint
    assert all(f.hint == report.verdict.hint for f in report.findings if f.code == "LD502")


def test_an_endless_sampler_stops_at_the_bound_and_says_so() -> None:
    report = probe(Endless(), lengths=LENGTHS, max_batches=300)
    p = report.sampler
    assert p is not None and p.bounded and p.batches == 300 and p.epochs == 1
    assert any("stopped at 300 batches" in n for n in p.notes)
    assert report.verdict.batching == "inconclusive"
    assert "walk two epochs or more" in report.verdict.summary and "log batch_fp" not in report.verdict.summary


def test_a_one_pass_iterator_is_read_once_and_said() -> None:
    report = probe(iter(_walked_batches(Reshuffled(), epochs=1)), lengths=LENGTHS)
    p = report.sampler
    assert p is not None and p.epochs == 1 and any("one-pass iterator" in n for n in p.notes)


def test_without_lengths_only_composition_is_judged() -> None:
    report = probe(SortedOnce())
    p = report.sampler
    assert report.verdict.batching == "static"
    assert p is not None and p.efficiency is None and p.fix is None and p.lengths_source == ""
    assert any("no sample lengths" in n for n in p.notes)


def test_single_indices_are_cut_into_batches_of_the_given_size() -> None:
    class Indices:
        def __iter__(self) -> Iterator[int]:
            return iter(np.random.default_rng().permutation(600).tolist())

    with pytest.raises(ConfigError, match="--batch-size"):
        probe(Indices(), lengths=LENGTHS)
    p = probe(Indices(), lengths=LENGTHS, batch_size=25).sampler
    assert p is not None and p.batch_size == 25 and p.batches == 72


def test_what_is_not_a_batch_of_indices_is_named() -> None:
    with pytest.raises(ConfigError, match="yielded a dict where a batch of sample indices"):
        probe([{"input_ids": [1, 2]}], lengths=LENGTHS)
    with pytest.raises(ConfigError, match="returned int; expected a torch DataLoader"):
        probe(5)
    with pytest.raises(ConfigError, match="sampler drew sample 600, but the lengths"):
        probe([[599, 600]], lengths=LENGTHS)
    with pytest.raises(ConfigError, match="epochs must be an integer >= 1"):
        probe(SortedOnce(), epochs=0)


def test_the_callers_random_streams_are_left_as_they_were() -> None:
    class GlobalShuffle:
        def __iter__(self) -> Iterator[list[int]]:
            order = np.random.permutation(600)
            random.random()
            return iter([order[i : i + 12].tolist() for i in range(0, 600, 12)])

    np.random.seed(123)
    random.seed(123)
    probe(GlobalShuffle(), lengths=LENGTHS)
    after = (np.random.random(), random.random())
    np.random.seed(123)
    random.seed(123)
    assert after == (np.random.random(), random.random())
    first = probe(GlobalShuffle(), lengths=LENGTHS, seed=4).run.table[BATCH_FP].to_list()
    assert probe(GlobalShuffle(), lengths=LENGTHS, seed=4).run.table[BATCH_FP].to_list() == first


def test_the_assertion_helper_fails_a_static_sampler_and_passes_a_reshuffled_one() -> None:
    with pytest.raises(AssertionError, match="static batching"):
        assert_sampler_ok(SortedOnce(), lengths=LENGTHS)
    report = assert_sampler_ok(Reshuffled(), lengths=LENGTHS)
    assert report.verdict.batching == "healthy"
    assert_sampler_ok(probe(SortedOnce(), lengths=LENGTHS), allow=("static",))


def test_an_exception_while_walking_is_the_users_with_their_line() -> None:
    from logdoctor.probing.usercode import UserCodeError

    class BreaksInEpoch2:
        def __init__(self) -> None:
            self.epoch = 0

        def set_epoch(self, epoch: int) -> None:
            self.epoch = epoch

        def __iter__(self) -> Iterator[list[int]]:
            if self.epoch == 1:
                raise ValueError("no second epoch")
            return iter([[0, 1], [2, 3]])

    with pytest.raises(
        UserCodeError,
        match=r"iterating the sampler \(epoch 2\): ValueError: no second epoch at "
        r".*test_probe_walk\.py:\d+ in __iter__",
    ):
        probe(BreaksInEpoch2(), lengths=LENGTHS)


def test_a_lengths_file_is_read_as_buckets_reads_it(tmp_path: object) -> None:
    from pathlib import Path

    path = Path(str(tmp_path)) / "lengths.txt"
    path.write_text("\n".join(str(n) for n in LENGTHS) + "\n")
    p = probe(SortedOnce(), lengths=str(path)).sampler
    assert p is not None and p.lengths_source == f"--lengths {path}" and p.fix is not None


def test_many_samples_are_priced_on_a_uniform_draw_and_the_report_says_so(monkeypatch: pytest.MonkeyPatch) -> None:
    from logdoctor.probing import profile
    from logdoctor.renderers.samplerrows import sampler_facts

    monkeypatch.setattr(profile, "MAX_PRICED", 200)
    report = probe(SortedOnce(), lengths=LENGTHS)
    p = report.sampler
    assert p is not None and p.fix is not None and p.fix.sequences == 200
    assert "Priced on the lengths of 200 of these 600 samples (a uniform draw)" in report.verdict.hint
    assert "priced on a uniform draw of 200 samples" in dict(sampler_facts(p))["the fix"]
