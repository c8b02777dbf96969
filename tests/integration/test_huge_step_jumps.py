"""A corrupt step number (step 200000000 in a 300-step log) must not make any analysis allocate
memory in proportion to the step span: analysed under a 3 GB address-space limit, so that a
regression fails with MemoryError here instead of exhausting the machine."""

from __future__ import annotations

import os
import resource
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

REPO = Path(__file__).resolve().parents[2]
JUMPS = (200_000_000, 5_000_000_000, 10**12, 10**17)
_SCRIPT = """
import sys
from logdoctor import pipeline
for path in sys.argv[1:]:
    for budget in (None, 65536):
        report = pipeline.analyze(pipeline.load(path, max_memory=budget))
        print(path, budget, len(report.findings), flush=True)
"""


def _limit() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (3 * 2**30, 3 * 2**30))


@pytest.mark.skipif(not hasattr(resource, "RLIMIT_AS"), reason="no address-space limit here")
def test_huge_step_jumps_stay_within_memory(tmp_path: Path) -> None:
    rng = np.random.default_rng(0)
    paths = []
    for jump in JUMPS:
        loss = 3 + np.exp(-np.arange(300) / 60) + 0.05 * rng.standard_normal(300)
        steps = [*range(1, 300), jump]
        rows = enumerate(zip(steps, loss, strict=True))
        text = "".join(f"step {s} | loss={v:.4f} epoch={i // 50}\n" for i, (s, v) in rows)
        path = tmp_path / f"jump_{jump}.log"
        path.write_text(text)
        paths.append(str(path))
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    proc = subprocess.run(
        [sys.executable, "-c", _SCRIPT, *paths],
        capture_output=True,
        text=True,
        env=env,
        preexec_fn=_limit,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.count("\n") == 2 * len(JUMPS)
