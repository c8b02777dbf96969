"""Prescribe length buckets for token-budget batching and price them (``logdoctor buckets``)."""

from __future__ import annotations

from logdoctor.buckets.estimate import estimate_from_batches
from logdoctor.buckets.lengths import read_lengths
from logdoctor.buckets.plan import BucketPlan, recommend

__all__ = ["BucketPlan", "estimate_from_batches", "read_lengths", "recommend"]
