"""Bucketing maths shared by the diagnosis and the ``buckets`` command: plans, packing, throughput estimates."""
