"""Issue 33: analyze on the line shapes people's logs have, each against a ``re`` loop for that shape.

``python bench/shapes.py [--steps 1000000] [--repeat 1] [--only megatron,keras]`` writes (once, seeded,
into bench/data/, git-ignored) one log per shape below, then measures in one run, each in a fresh
process (bench/child.py --rusage: wall, CPU, peak RSS of that process alone): ``logdoctor analyze
--format json`` and ``python bench/shapes.py --loop SHAPE PATH``, a plain Python loop that only parses:
one compiled regex per line, the values converted into lists. Prints one JSON document (also
bench/out/shapes_<steps>.json); ``--results JSON...`` writes stored runs into bench/RESULTS.md (its
"Line shapes" section, which ``bench/report.py --readme`` repeats in the README).

``write(shape, path, steps)`` is also what tests/unit/test_text_shapes.py uses at a few hundred steps.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

HERE = Path(__file__).resolve().parent
DATA = HERE / "data"
Lines = Iterator[str]


def _batch(rng: random.Random) -> str:
    lo, hi = rng.randint(40, 600), rng.randint(600, 2048)
    return (
        f"n_seq={rng.randint(8, 16)} tokens={rng.randint(6000, 9000)} len_mean={(lo + hi) / 2:.1f} "
        f"len_min={lo} len_max={hi} pad_frac={rng.random() / 10:.3f}"
    )


def _clock(sec: int) -> str:
    """``HH:MM:SS`` of a second count (the time of day in the timestamped shapes)."""
    return f"{sec // 3600 % 24:02d}:{sec // 60 % 60:02d}:{sec % 60:02d}"


def _loss(rng: random.Random, s: int, steps: int) -> float:
    return 2 + 2 * (1 - s / steps) + 0.2 * rng.random()


def canonical(steps: int, rng: random.Random) -> Lines:
    """bench/run.py's own shape: ``step N/T | loss=... | batch: ...``, a warning and an eval line now and then."""
    for s in range(1, steps + 1):
        yield (
            f"step {s}/{steps} | loss={_loss(rng, s, steps):.4f} acc={rng.random():.4f} lr=3.0e-04 "
            f"grad_norm={rng.random() * 2:.2f} tok/s={rng.randint(20000, 30000)} epoch={s // 5000} | "
            f"batch: {_batch(rng)} batch_fp={rng.getrandbits(32):08x}"
        )
        if s % 1000 == 0:
            yield "WARNING: dataloader worker 3 is slow (information only)"
        if s % 5000 == 0:
            yield f"eval step {s} | val_loss={2 + rng.random():.4f} val_acc=0.41"


def timestamped(steps: int, rng: random.Random) -> Lines:
    """The issue's shape: a timestamp prefix, ``step N/T: loss=... tok/s=... | batch: n_seq=...``."""
    for s in range(1, steps + 1):
        sec = 36000 + s
        yield (
            f"2026-12-03 {_clock(sec)} step {s}/{steps}: "
            f"loss={_loss(rng, s, steps):.4f} acc={rng.random():.4f} lr={3e-4 * (1 - s / steps / 2):.3e} "
            f"tok/s={rng.randint(20000, 30000)} | batch: {_batch(rng)}"
        )


def hf_dicts(steps: int, rng: random.Random) -> Lines:
    """HF Trainer's stdout (``logging_steps=1``): one Python dict a step, no step number; eval dicts."""
    for s in range(1, steps + 1):
        yield (
            f"{{'loss': {_loss(rng, s, steps):.4f}, 'grad_norm': {rng.random() * 3:.6f}, "
            f"'learning_rate': {5e-5 * (1 - s / steps):.6g}, 'epoch': {s / 5000:.2f}}}"
        )
        if s % 5000 == 0:
            yield (
                f"{{'eval_loss': {2 + rng.random():.4f}, 'eval_runtime': 12.3, 'eval_samples_per_second': "
                f"81.2, 'eval_steps_per_second': 10.2, 'epoch': {s / 5000:.2f}}}"
            )


def megatron(steps: int, rng: random.Random) -> Lines:
    """Megatron-LM's training log line (fixed-width counters, ``key: value |``)."""
    for s in range(1, steps + 1):
        yield (
            f" iteration {s:8d}/{steps:8d} | consumed samples: {s * 256:12d} | elapsed time per iteration (ms): "
            f"{800 + rng.random() * 100:.1f} | learning rate: {3e-4 * (1 - s / steps / 2):.3E} | global batch size: "
            f"{256:5d} | lm loss: {_loss(rng, s, steps):.6E} | loss scale: 2048.0 | grad norm: "
            f"{rng.random() * 2:.3f} | number of skipped iterations: {0:3d} | number of nan iterations: {0:3d} |"
        )


def fairseq(steps: int, rng: random.Random) -> Lines:
    """fairseq's ``| key value |`` records (simple format, as its train/valid lines) at every update."""
    for s in range(1, steps + 1):
        loss = _loss(rng, s, steps)
        sec = s // 4
        yield (
            f"2021-05-10 {_clock(sec)} | INFO | train_inner | "
            f"epoch {s // 5000 + 1:03d} | loss {loss:.3f} | nll_loss {loss * 0.95:.3f} | ppl {2**loss:.2f} | "
            f"wps {46000 + rng.random() * 500:.1f} | ups 4.44 | wpb {10400 + rng.random() * 50:.1f} | bsz 422.8 | "
            f"num_updates {s} | lr {5e-4 * min(1, s / 4000):.5g} | gnorm {rng.random() * 2:.3f} | "
            f"train_wall {s // 4} | gb_free 4.6 | wall {s // 4 + 30}"
        )


def marian(steps: int, rng: random.Random) -> Lines:
    """Marian's ``Ep. 1 : Up. 500 : Sen. 435,566 : Cost ... : Time ...s : ... words/s : L.r. ...``."""
    for s in range(1, steps + 1):
        sec = 36000 + s
        yield (
            f"[2019-04-26 {_clock(sec)}] Ep. {s // 5000 + 1} : "
            f"Up. {s} : Sen. {s * 871:,} : Cost {_loss(rng, s, steps):.8f} : Time {1 + rng.random():.2f}s : "
            f"{6800 + rng.random() * 300:.2f} words/s : L.r. {1e-4 * min(1, s / 4000):.4e}"
        )


def keras(steps: int, rng: random.Random) -> Lines:
    """Keras ``fit(verbose=1)`` redirected to a file: ``Epoch i/E`` then one progress line a batch."""
    per, epochs = 10_000, max(1, steps // 10_000)
    per = steps // epochs
    for e in range(1, epochs + 1):
        yield f"Epoch {e}/{epochs}"
        for b in range(1, per + 1):
            done = 30 * b // per
            bar = "=" * done + ("" if done == 30 else ">" + "." * (29 - done))
            s = (e - 1) * per + b
            tail = f" - val_loss: {2 + rng.random():.4f} - val_accuracy: 0.4615" if b == per else ""
            eta = f"{b // 100}s {7}ms/step" if b == per else f"ETA: {(per - b) // 100}s"
            yield (
                f"{b:5d}/{per} [{bar}] - {eta} - loss: {_loss(rng, s, steps):.4f} - accuracy: {rng.random():.4f}{tail}"
            )


def jsonl_nested(steps: int, rng: random.Random) -> Lines:
    """JSON lines with the batch statistics in a nested object."""
    for s in range(1, steps + 1):
        lo, hi = rng.randint(40, 600), rng.randint(600, 2048)
        yield (
            f'{{"step": {s}, "train": {{"loss": {_loss(rng, s, steps):.4f}, "lr": 0.0003, '
            f'"grad_norm": {rng.random() * 2:.3f}}}, "batch": {{"n_seq": {rng.randint(8, 16)}, '
            f'"tokens": {rng.randint(6000, 9000)}, "len_mean": {(lo + hi) / 2:.1f}, "len_min": {lo}, '
            f'"len_max": {hi}, "pad_frac": {rng.random() / 10:.3f}}}}}'
        )


def nanogpt(steps: int, rng: random.Random) -> Lines:
    """nanoGPT's ``iter N: loss X, time Yms, mfu Z%``."""
    for s in range(1, steps + 1):
        loss, ms, mfu = _loss(rng, s, steps), 90 + rng.random() * 10, 30 + rng.random()
        yield f"iter {s}: loss {loss:.4f}, time {ms:.2f}ms, mfu {mfu:.2f}%"


SHAPES: dict[str, Callable[[int, random.Random], Lines]] = {
    f.__name__: f for f in (canonical, timestamped, hf_dicts, megatron, fairseq, marian, keras, jsonl_nested, nanogpt)
}
SUFFIX = {"jsonl_nested": ".jsonl"}

_F = r"([-+]?[\d.]+(?:[eE][-+]?\d+)?)"
#: Per shape: the regex a user would write for its step lines, and which groups hold numbers.
LOOPS: dict[str, str] = {
    "canonical": (
        rf"^step (\d+)/(\d+) \| loss={_F} acc={_F} lr={_F} grad_norm={_F} tok/s={_F} epoch={_F} \| batch: "
        rf"n_seq={_F} tokens={_F} len_mean={_F} len_min={_F} len_max={_F} pad_frac={_F} batch_fp=(\w+)"
    ),
    "timestamped": (
        rf"^\S+ \S+ step (\d+)/(\d+): loss={_F} acc={_F} lr={_F} tok/s={_F} \| batch: n_seq={_F} tokens={_F} "
        rf"len_mean={_F} len_min={_F} len_max={_F} pad_frac={_F}"
    ),
    "hf_dicts": rf"^\{{'loss': {_F}, 'grad_norm': {_F}, 'learning_rate': {_F}, 'epoch': {_F}\}}",
    "megatron": (
        rf"^ iteration +(\d+)/ *(\d+) \| consumed samples: +(\d+) \| elapsed time per iteration \(ms\): {_F} \| "
        rf"learning rate: {_F} \| global batch size: +(\d+) \| lm loss: {_F} \| loss scale: {_F} \| "
        rf"grad norm: {_F} \| number of skipped iterations: +(\d+) \| number of nan iterations: +(\d+) \|"
    ),
    "fairseq": (
        rf"\| train_inner \| epoch (\d+) \| loss {_F} \| nll_loss {_F} \| ppl {_F} \| wps {_F} \| ups {_F} \| "
        rf"wpb {_F} \| bsz {_F} \| num_updates (\d+) \| lr {_F} \| gnorm {_F} \| train_wall {_F} \| "
        rf"gb_free {_F} \| wall {_F}"
    ),
    "marian": (rf"Ep\. (\d+) : Up\. (\d+) : Sen\. ([\d,]+) : Cost {_F} : Time {_F}s : {_F} words/s : L\.r\. {_F}"),
    "keras": rf"^ *(\d+)/(\d+) \[[=>.]*\] - .*? - loss: {_F} - accuracy: {_F}",
    "jsonl_nested": (
        rf'^\{{"step": (\d+), "train": \{{"loss": {_F}, "lr": {_F}, "grad_norm": {_F}\}}, "batch": '
        rf'\{{"n_seq": (\d+), "tokens": (\d+), "len_mean": {_F}, "len_min": (\d+), "len_max": (\d+), '
        rf'"pad_frac": {_F}\}}\}}'
    ),
    "nanogpt": rf"^iter (\d+): loss {_F}, time {_F}ms, mfu {_F}%",
}


def write(shape: str, path: Path, steps: int, seed: int = 33) -> Path:
    """Write ``steps`` steps of ``shape`` to ``path`` (seeded)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    part = path.with_name(path.name + ".part")  # a benchmark never reads a half-written log
    with part.open("w", encoding="utf-8") as fh:
        fh.writelines(line + "\n" for line in SHAPES[shape](steps, random.Random(seed)))
    part.replace(path)
    return path


def data_path(shape: str, steps: int) -> Path:
    """Where the benchmark keeps ``shape``'s log of ``steps`` steps (written when missing)."""
    path = DATA / f"shape_{shape}_{steps}{SUFFIX.get(shape, '.log')}"
    return path if path.exists() else write(shape, path, steps)


def re_loop(shape: str, path: Path) -> int:
    """The baseline: match each line with the shape's compiled regex; numbers into one list per group."""
    pattern = re.compile(LOOPS[shape])
    cols: list[list[object]] = [[] for _ in range(pattern.groups)]
    text = {"canonical": {pattern.groups - 1}}.get(shape, set())
    with path.open(encoding="utf-8", errors="replace") as fh:
        for line in fh:
            m = pattern.search(line)
            if m is None:
                continue
            for i, v in enumerate(m.groups()):
                cols[i].append(v if i in text else float(v.replace(",", "")))
    return len(cols[0])


def _measure(cmd: list[str], repeat: int) -> dict[str, float]:
    from best import best_of

    return {k: round(v, 3) for k, v in best_of(cmd, repeat).items() if k in ("wall", "cpu", "rss_mb")}


def bench(shapes: list[str], steps: int, repeat: int) -> dict[str, object]:
    """Measure analyze and the re loop on each shape's log, in this one run."""
    from best import sink

    doc: dict[str, object] = {
        "steps": steps,
        "cores": os.cpu_count(),
        "load": [round(os.getloadavg()[0], 2)],
        "started": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "shapes": {},
    }
    for shape in shapes:
        path = data_path(shape, steps)
        analyze = _measure(
            [sys.executable, "-m", "logdoctor", "analyze", str(path), "--format", "json", "-o", sink()], repeat
        )
        loop = _measure([sys.executable, __file__, "--loop", shape, str(path)], repeat)
        doc["shapes"][shape] = {  # type: ignore[index]
            "mb": round(path.stat().st_size / 1e6, 1),
            "analyze": analyze,
            "re_loop": loop,
            "ratio_wall": round(analyze["wall"] / loop["wall"], 3),
            "ratio_cpu": round(analyze["cpu"] / loop["cpu"], 3),
        }
        print(shape, json.dumps(doc["shapes"][shape]), file=sys.stderr)  # type: ignore[index]
    doc["load"].append(round(os.getloadavg()[0], 2))  # type: ignore[attr-defined]
    return doc


SECTION_BEGIN = "<!-- shapes: generated by `python bench/shapes.py --results` from bench/out/shapes_*.json -->"
SECTION_END = "<!-- /shapes -->"
TITLE = "## Line shapes: analyze vs a plain `re` loop written for each shape (issue 33)"


def markdown(docs: list[dict[str, object]]) -> str:
    """The RESULTS.md section for some runs' documents (one table row per shape and size)."""
    rows = [
        "Each size measured by `python bench/shapes.py --steps N` in one run: for every shape, `logdoctor analyze "
        "--format json` and a Python loop matching that shape's compiled regex per line (values into lists, "
        "nothing else), each one fresh process (wall and CPU seconds, start-up included; ratio = logdoctor / re loop).",
        "",
        "| shape | steps | MB | logdoctor wall s | logdoctor cpu s | re loop wall s | re loop cpu s | ratio wall "
        "| ratio cpu | <= 1.0x both | measured (UTC, cores, load average start-end) |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for doc in docs:
        load: list[float] = doc["load"]  # type: ignore[assignment]
        when = f"{doc['started']}, {doc['cores']} cores, load {load[0]}-{load[-1]}"
        for shape, r in doc["shapes"].items():  # type: ignore[attr-defined]
            a, lp = r["analyze"], r["re_loop"]
            met = "met" if r["ratio_wall"] <= 1 and r["ratio_cpu"] <= 1 else "**not met**"
            rows.append(
                f"| {shape} | {doc['steps']:,} | {r['mb']} | {a['wall']:.2f} | {a['cpu']:.2f} | {lp['wall']:.2f} | "
                f"{lp['cpu']:.2f} | {r['ratio_wall']:.2f}x | {r['ratio_cpu']:.2f}x | {met} | {when} |"
            )
    return "\n".join(rows)


def write_section(results: Path, docs: list[dict[str, object]]) -> None:
    """Put the section into ``results`` (replacing the previous one; first time: after run.py's
    hand-written-notes line, so that run.py keeps it)."""
    text = results.read_text(encoding="utf-8")
    block = "\n".join([SECTION_BEGIN, TITLE, "", markdown(docs), SECTION_END])
    if SECTION_BEGIN in text:
        start, end = text.index(SECTION_BEGIN), text.index(SECTION_END) + len(SECTION_END)
        text = text[:start] + block + text[end:]
    else:
        keep = "<!-- hand-written notes below this line are kept when run.py rewrites the file -->"
        at = text.index(keep) + len(keep) if keep in text else len(text)
        text = text[:at] + "\n\n" + block + "\n" + text[at:]
    results.write_text(text, encoding="utf-8")


def main() -> int:
    """``--loop SHAPE PATH`` (the baseline, measured) or the benchmark."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--loop", nargs=2, metavar=("SHAPE", "PATH"))
    ap.add_argument("--steps", type=int, default=1_000_000)
    ap.add_argument("--repeat", type=int, default=1)
    ap.add_argument("--only", default=",".join(SHAPES))
    ap.add_argument("--results", nargs="+", metavar="JSON", help="write stored runs into bench/RESULTS.md")
    args = ap.parse_args()
    if args.loop:
        print(re_loop(args.loop[0], Path(args.loop[1])))
        return 0
    if args.results:
        write_section(HERE / "RESULTS.md", [json.loads(Path(p).read_text()) for p in args.results])
        return 0
    sys.path[:0] = [str(HERE), str(HERE.parent)]
    doc = bench(args.only.split(","), args.steps, args.repeat)
    (HERE / "out").mkdir(exist_ok=True)
    (HERE / "out" / f"shapes_{args.steps}.json").write_text(json.dumps(doc, indent=2) + "\n")
    print(json.dumps(doc, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
