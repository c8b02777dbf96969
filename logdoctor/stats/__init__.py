"""Statistics every stage shares: rolling medians, robust scales, ranks, runs and distribution tails (a leaf)."""
