"""Fuzz ingest and analysis: ``python bench/fuzz.py --cases 10000 [--seed 0] [--analyze] [--max-memory 64K]``.

``--cli N`` instead runs N cases of the command-line contract (tests/property/fuzzcli.py: any JSON
value, keys that change every line, any TOML beside the log; every command and report format; exit
code, no traceback, well-formed output, nothing written outside -o), the long twin of the seeded run
in tests/property/test_fuzz_cli.py.

Each case is random bytes, random text, or a seeded mutation (fixtures/mutate.py) of a fixture log of
every format under fixtures/. A case passes when ``pipeline.load`` (and with ``--analyze`` also
``pipeline.analyze``) returns normally or raises a LogdoctorError with a one-line message. Anything
else is a crash: its input is saved under bench/out/fuzz/ and the script exits 1.
"""

from __future__ import annotations

import argparse
import collections
import resource
import sys
import tempfile
import time
import traceback
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from fixtures.mutate import mutate  # noqa: E402
from logdoctor import pipeline  # noqa: E402
from logdoctor.errors import LogdoctorError  # noqa: E402
from logdoctor.ingest.memory import parse_size  # noqa: E402

SUFFIXES = {".log", ".jsonl", ".csv", ".json", ".txt", ".tsv", ".gz", ".bz2", ".xz", ".zst", ".out"}


def _seeds() -> list[Path]:
    return sorted(
        p
        for p in (ROOT / "fixtures").rglob("*")
        if p.is_file() and p.suffix in SUFFIXES and not p.name.endswith(".truth.json")
    )


def _case(i: int, rng: np.random.Generator, seeds: list[Path]) -> tuple[str, bytes, str]:
    kind = i % 10 if seeds else i % 2
    if kind == 0:
        return "random-bytes", bytes(rng.integers(0, 256, int(rng.integers(0, 4096)), dtype=np.uint8)), ".log"
    if kind == 1:
        alphabet = np.frombuffer(b"step loss=0123456789.e-+:|,{}[]\"'\n\r\t nan inf acc lr", dtype=np.uint8)
        return "random-text", bytes(rng.choice(alphabet, int(rng.integers(0, 4096)))), ".log"
    base = seeds[int(rng.integers(0, len(seeds)))]
    data = base.read_bytes()[:200_000]
    return f"mutate:{base.name}", mutate(data, rng), base.suffix


def run(cases: int, seed: int, analyze: bool, max_memory: int | None = None) -> int:
    """Run the fuzz campaign; returns the process exit code."""
    rng = np.random.default_rng(seed)
    seeds = _seeds()
    counts: collections.Counter[str] = collections.Counter()
    crashes = 0
    out_dir = ROOT / "bench" / "out" / "fuzz"
    start = time.perf_counter()
    with tempfile.TemporaryDirectory() as tmp:
        for i in range(cases):
            label, data, suffix = _case(i, rng, seeds)
            path = Path(tmp) / f"case{suffix}"
            path.write_bytes(data)
            try:
                run_ = pipeline.load(str(path), max_memory=max_memory)
                if analyze:
                    pipeline.analyze(run_)
                counts["run"] += 1
            except LogdoctorError as err:
                one_line = "\n" not in str(err).strip()
                counts["error" if one_line else "multiline-error"] += 1
                if not one_line:
                    out_dir.mkdir(parents=True, exist_ok=True)
                    (out_dir / f"multiline-{i}{suffix}").write_bytes(data)
                    print(f"MULTI-LINE ERROR case {i} ({label}): {err!r}", file=sys.stderr)
            except Exception:  # a crash is what we are looking for
                crashes += 1
                out_dir.mkdir(parents=True, exist_ok=True)
                (out_dir / f"crash-{i}{suffix}").write_bytes(data)
                print(f"CRASH case {i} ({label}):\n{traceback.format_exc()}", file=sys.stderr)
    took = time.perf_counter() - start
    print(
        f"fuzz: {cases} cases (seed {seed}, analyze={analyze}, max_memory={max_memory}) in {took:.1f}s: "
        f"{counts['run']} parsed, {counts['error']} clean errors, "
        f"{counts['multiline-error']} multi-line errors, {crashes} crashes; {len(seeds)} seed files"
    )
    return 1 if crashes or counts["multiline-error"] else 0


def main() -> int:
    """Parse arguments and run."""
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--cases", type=int, default=10_000)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--analyze", action="store_true", help="also run the full analysis on parsed cases")
    ap.add_argument("--max-memory", help="memory budget, e.g. 64K: most cases are then read in chunks")
    ap.add_argument("--cli", type=int, default=0, metavar="N", help="run N cases of the CLI contract instead")
    ap.add_argument(
        "--as-limit",
        default="6G",
        help="address-space limit: a runaway allocation is then "
        "a MemoryError crash of this case, not an OOM kill of the machine's processes",
    )
    args = ap.parse_args()
    limit = parse_size(args.as_limit)
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    if args.cli:
        return run_cli(args.cli, args.seed)
    budget = parse_size(args.max_memory) if args.max_memory else None
    return run(args.cases, args.seed, args.analyze, budget)


def run_cli(cases: int, seed: int) -> int:
    """``cases`` examples of the CLI contract (hypothesis, seeded); 1 when one breaks it (shrunk,
    printed)."""
    from hypothesis import HealthCheck, given, settings
    from hypothesis import seed as hseed

    from tests.property.fuzzcli import Case, run_case
    from tests.property.fuzzcli import cases as strategy

    @hseed(seed)
    @settings(max_examples=cases, deadline=None, suppress_health_check=list(HealthCheck), database=None)
    @given(case=strategy())
    def campaign(case: Case) -> None:
        run_case(case)

    start = time.perf_counter()
    try:
        campaign()
    except Exception:  # the falsifying example, shrunk: what we are looking for
        traceback.print_exc()
        return 1
    print(f"fuzz --cli: {cases} cases (seed {seed}) kept the contract in {time.perf_counter() - start:.1f}s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
