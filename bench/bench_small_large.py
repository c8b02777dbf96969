"""Issue 33, points 2 and 3: a small log start to exit against the bare import; 1M-record documents' peak RSS.

Usage (from the repository root): ``python bench/bench_small_large.py [--repeat 5] [--records 1000000]
[--code CHECKOUT] [--skip-large]``; prints one JSON document.

Small (point 3): ``analyze`` of fixtures/example.log (590 steps) and of a seeded 400-step canonical
log with batch statistics (bench/data/, git-ignored), text and json, each the best wall of
``--repeat`` fresh processes through bench/child.py (its own wall, CPU, peak RSS), next to the bare
``python -c "import polars, numpy, rich"`` measured in the same run. Targets: <= 0.25 s wall (on a
quiet machine) and <= 1.3x the bare import. A first run writes the checkout's bytecode, as an
installed package has it.

Large (point 2): ``analyze --format json`` of a seeded ``--records``-entry trainer_state.json (HF/TRL
keys, an eval entry every 1000 steps, indented as HF writes it) and of a W&B ``.wandb`` transaction
log of the same records, one fresh process each: peak RSS (target <= 1 GB), wall and CPU.

``--code`` measures another checkout (its logdoctor first on the path: the process runs there), e.g.
an export of the commit before a change. The load average is reported at start and end: on a shared
machine compare CPU seconds and ratios, not wall.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import random
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
DATA = HERE / "data"
sys.path[:0] = [str(HERE), str(ROOT)]

import best  # noqa: E402
from bench_ingest import write_log  # noqa: E402

WALL_TARGET = 0.25
RATIO_TARGET = 1.3
RSS_TARGET_MB = 1024


def trainer_state(path: Path, records: int, seed: int = 7) -> Path:
    """A trainer_state.json of ``records`` training entries (+ an eval entry every 1000), written once."""
    if path.exists():
        return path
    rng = random.Random(seed)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    with tmp.open("w") as fh:
        fh.write(
            f'{{\n  "best_metric": null,\n  "epoch": {records / 1000},\n  "global_step": {records},\n'
            '  "log_history": [\n'
        )
        for s, e in _entries(records, rng):
            body = ",\n".join(f'      "{k}": {json.dumps(v)}' for k, v in e.items())
            fh.write(f"    {{\n{body}\n    }}" + ("\n" if s < 0 else ",\n"))
        fh.write(f'  ],\n  "logging_steps": 1,\n  "max_steps": {records},\n  "num_train_epochs": 1000\n}}\n')
    tmp.rename(path)
    return path


def _entries(records: int, rng: random.Random) -> list[tuple[int, dict[str, float]]]:
    """(step, entry) in logging order; the last one's step negated (no comma after it)."""
    out: list[tuple[int, dict[str, float]]] = []
    for s in range(1, records + 1):
        loss = round(2 + 3 * math.exp(-s / 20000) + rng.gauss(0, 0.05), 4)
        out.append(
            (
                s,
                {
                    "epoch": round(s / 1000, 4),
                    "grad_norm": round(1 + rng.random(), 4),
                    "learning_rate": 3e-4 * (1 - s / records),
                    "loss": loss,
                    "mean_token_accuracy": round(0.5 + rng.random() / 10, 4),
                    "num_tokens": float(s * 4096),
                    "step": s,
                },
            )
        )
        if s % 1000 == 0:
            out.append(
                (
                    s,
                    {
                        "epoch": round(s / 1000, 4),
                        "eval_loss": loss + 0.1,
                        "eval_runtime": 12.5,
                        "eval_samples_per_second": 80.1,
                        "eval_steps_per_second": 5.0,
                        "step": s,
                    },
                )
            )
    out[-1] = (-out[-1][0], out[-1][1])
    return out


def _varint(n: int) -> bytes:
    out = bytearray()
    while True:
        out.append((n & 0x7F) | (0x80 if n > 0x7F else 0))
        n >>= 7
        if not n:
            return bytes(out)


def _ld(num: int, data: bytes) -> bytes:
    return _varint(num << 3 | 2) + _varint(len(data)) + data


def _history_record(step: int, items: dict[str, float]) -> bytes:
    """A Record whose history holds ``items`` (HistoryItem: key 1, value_json 16) and the step."""
    body = b"".join(_ld(1, _ld(1, k.encode()) + _ld(16, json.dumps(v).encode())) for k, v in items.items())
    return _ld(2, body + _ld(2, b"\x08" + _varint(step)))


def _wandb_record(step: int, entry: dict[str, float]) -> bytes:
    """One trainer_state entry as a history record under W&B names (``train/...``, ``eval/...``)."""
    items = {("eval/" + k[5:] if k.startswith("eval_") else f"train/{k}"): v for k, v in entry.items() if k != "step"}
    return _history_record(abs(step), {**items, "train/global_step": abs(step)})


def wandb_log(path: Path, records: int, seed: int = 7) -> Path:
    """A ``.wandb`` transaction log of the trainer_state records (``train/`` and ``eval/`` names), written once."""
    if path.exists():
        return path
    from tests.wandb_support import write_log as frame  # the LevelDB block framing the tests write

    path.parent.mkdir(parents=True, exist_ok=True)
    out = frame(_wandb_record(s, e) for s, e in _entries(records, random.Random(seed)))
    tmp = path.with_suffix(".tmp")
    tmp.write_bytes(out)
    tmp.rename(path)
    return path


def _row(r: dict[str, float], bare: dict[str, float] | None = None) -> dict[str, float]:
    row = {"wall": round(r["wall"], 3), "cpu": round(r["cpu"], 3), "rss_mb": round(r["rss_mb"])}
    if bare:
        row |= {"ratio_wall": round(r["wall"] / bare["wall"], 2), "ratio_cpu": round(r["cpu"] / bare["cpu"], 2)}
    return row


def small(code: Path, repeat: int) -> dict[str, object]:
    """Point 3: analyze of small logs against the bare import, best of ``repeat`` fresh processes each."""
    canonical = DATA / "canonical_400.log"
    if not canonical.exists():
        write_log(canonical, 400)
    logs = {"example.log (590 steps)": ROOT / "fixtures" / "example.log", "400-step canonical": canonical}
    py = [sys.executable]
    best.best_of([*py, "-m", "logdoctor", "analyze", str(canonical), "-o", best.sink()], 1, code)  # bytecode
    bare = best.best_of([*py, "-c", "import polars, numpy, rich"], repeat, code)
    rows = []
    for label, path in logs.items():
        for fmt in ("text", "json"):
            r = best.best_of([*py, "-m", "logdoctor", "analyze", str(path), "-f", fmt, "-o", best.sink()], repeat, code)
            rows.append({"input": label, "format": fmt, **_row(r, bare)})
    worst = {k: max(float(r[k]) for r in rows) for k in ("wall", "ratio_wall", "ratio_cpu")}  # type: ignore[arg-type]
    return {
        "bare_import": _row(bare),
        "rows": rows,
        "worst": worst,
        "met_wall": worst["wall"] <= WALL_TARGET,
        "met_ratio_wall": worst["ratio_wall"] <= RATIO_TARGET,
        "met_ratio_cpu": worst["ratio_cpu"] <= RATIO_TARGET,
    }


def large(code: Path, records: int) -> list[dict[str, object]]:
    """Point 2: peak RSS of analyze on the 1M-record documents (one fresh process each)."""
    inputs = {
        f"trainer_state.json, {records} entries": trainer_state(DATA / f"trainer_state_{records}.json", records),
        f".wandb history, {records} records": wandb_log(DATA / f"wandb_{records}" / "run-bench.wandb", records),
    }
    rows = []
    for label, path in inputs.items():
        r = best.best_of(
            [sys.executable, "-m", "logdoctor", "analyze", str(path), "-f", "json", "-o", best.sink()], 1, code
        )
        rows.append(
            {
                "input": label,
                "file_mb": round(path.stat().st_size / 1e6),
                **_row(r),
                "met_rss": r["rss_mb"] <= RSS_TARGET_MB,
            }
        )
    return rows


def ratio_line(doc: dict[str, object]) -> str:
    """One line for the log of a sitting: each small row's CPU ratio to the bare import, the worst, the load."""
    small_doc = doc["small"]
    assert isinstance(small_doc, dict)
    rows = " ".join(f"{r['input'].split(' ')[0]}/{r['format']} {r['ratio_cpu']}x" for r in small_doc["rows"])
    worst = small_doc["worst"]
    return (
        f"point 3, {doc['code']}: CPU ratio to the bare import ({small_doc['bare_import']['cpu']} s): {rows}; "
        f"worst {max(float(r['ratio_cpu']) for r in small_doc['rows'])}x (target {RATIO_TARGET}x), "
        f"worst wall {worst['wall']} s (target {WALL_TARGET} s); load {doc['load_start']} -> {doc['load_end']}"
    )


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=5, help="fresh runs of each small command; the best wall is kept")
    ap.add_argument("--records", type=int, default=1_000_000, help="entries of the large documents")
    ap.add_argument("--code", type=Path, default=ROOT, help="checkout to measure (the processes run there)")
    ap.add_argument("--skip-large", action="store_true", help="only the small logs")
    args = ap.parse_args()
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)  # the bytecode an installed package has
    doc: dict[str, object] = {
        "code": str(args.code),
        "time": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "cores": os.cpu_count(),
        "load_start": [round(x, 2) for x in os.getloadavg()],
    }
    doc["small"] = small(args.code, args.repeat)
    if not args.skip_large:
        doc["large"] = large(args.code, args.records)
    doc["load_end"] = [round(x, 2) for x in os.getloadavg()]
    print(json.dumps(doc, indent=1))
    print(ratio_line(doc), file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
