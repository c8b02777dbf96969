"""Prescribe length buckets for token-budget batching and price them (``logdoctor buckets``)."""

from __future__ import annotations

from logdoctor.bucketing.estimate import estimate_from_batches
from logdoctor.bucketing.plan import BucketPlan, recommend
from logdoctor.buckets.lengths import read_lengths

__all__ = ["BucketPlan", "estimate_from_batches", "read_lengths", "recommend"]
