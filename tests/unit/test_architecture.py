"""The import graph keeps ARCHITECTURE.md's arrows: no cycles, and no room imports what it must not."""

from __future__ import annotations

import ast
import subprocess
import sys
from collections import defaultdict
from functools import cache
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[2] / "logdoctor"

#: room -> rooms it must never import (directly or through a lazy import inside a function).
NEVER: dict[str, set[str]] = {
    "ingest": {"structure", "detectors", "diagnosis", "renderers", "tail", "pipeline", "cli", "buckets"},
    "structure": {"detectors", "diagnosis", "renderers", "tail", "pipeline", "cli"},
    "detectors": {"diagnosis", "renderers", "tail", "pipeline", "cli", "buckets"},
    "diagnosis": {"renderers", "tail", "pipeline", "cli", "buckets"},
    "renderers": {"ingest", "tail", "pipeline", "cli", "buckets"},
    "tail": {"cli"},
    "bucketing": {"buckets", "diagnosis", "detectors", "pipeline", "cli"},
    # the contracts every stage shares are leaves; config holds the user's field map (ingest.aliases)
    "model": {"ingest", "structure", "detectors", "diagnosis", "renderers", "tail", "pipeline", "cli"},
    "errors": {"ingest", "structure", "detectors", "diagnosis", "renderers", "tail", "pipeline", "cli"},
    "codes": {"ingest", "structure", "detectors", "diagnosis", "renderers", "tail", "pipeline", "cli"},
    "exitcodes": {"ingest", "structure", "detectors", "diagnosis", "renderers", "tail", "pipeline", "cli"},
    "options": {"ingest", "structure", "detectors", "diagnosis", "renderers", "tail", "pipeline", "cli"},
    "config": {"structure", "detectors", "diagnosis", "renderers", "tail", "pipeline", "cli"},
    # the statistics every stage shares (rolling medians, robust scales, ranks, runs, distribution
    # tails): a leaf, numpy and scipy only
    "stats": {
        "model",
        "errors",
        "codes",
        "exitcodes",
        "options",
        "config",
        "ingest",
        "structure",
        "detectors",
        "diagnosis",
        "renderers",
        "tail",
        "pipeline",
        "cli",
        "buckets",
        "bucketing",
        "emit",
    },
}
# vocab/ (what a logged key is: loss, part, evaluation with its direction, lr, counter, rate): a leaf that every
# reader and detector asks, importing nothing of logdoctor
NEVER["vocab"] = {
    "model",
    "errors",
    "codes",
    "exitcodes",
    "options",
    "config",
    "ingest",
    "structure",
    "detectors",
    "diagnosis",
    "renderers",
    "tail",
    "pipeline",
    "cli",
    "buckets",
    "bucketing",
    "emit",
    "stats",
}
# comparison/ (the `compare` command and logdoctor.compare): built on pipeline + diagnosis (+ detectors'
# spectral code, the model and the renderers' report JSON); no stage imports it, and it reaches no stage
# below pipeline
NEVER["comparison"] = {"ingest", "structure", "tail", "cli", "buckets", "bucketing"}
for _room_name in (
    "ingest",
    "structure",
    "detectors",
    "diagnosis",
    "renderers",
    "tail",
    "bucketing",
    "model",
    "errors",
    "codes",
    "exitcodes",
    "config",
    "stats",
):
    NEVER[_room_name].add("comparison")
NEVER["pipeline"] = {"comparison", "cli"}
# probe/ (the `probe` command and its Python API): a source of runs feeding the pipeline; no stage
# imports it, and the sampler profile it adds to a Report is a contract (samplerfacts) every room may read
NEVER["probe"] = {"cli", "cliprobe", "tail", "comparison"}
NEVER["samplerfacts"] = {
    "ingest",
    "structure",
    "detectors",
    "diagnosis",
    "renderers",
    "tail",
    "pipeline",
    "cli",
    "probe",
    "bucketing",
    "buckets",
    "emit",
}
for _room_name in (
    "ingest",
    "structure",
    "detectors",
    "diagnosis",
    "renderers",
    "tail",
    "bucketing",
    "buckets",
    "model",
    "errors",
    "codes",
    "exitcodes",
    "config",
    "pipeline",
    "comparison",
    "emit",
):
    NEVER.setdefault(_room_name, set()).add("probe")
#: the Python API (api, and the results it returns): a face over pipeline, comparison and the renderers,
#: as cli is; no room of the tool imports it (the package root names it, lazily)
FACE = ("api", "results", "compareresult")
for _face in FACE:
    NEVER[_face] = {"cli", "clirun", "tail", "buckets", "executors"}


def _modules() -> dict[str, Path]:
    mods: dict[str, Path] = {}
    for path in PACKAGE.rglob("*.py"):
        parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        mods[".".join(parts)] = path
    return mods


@cache
def _graph() -> dict[str, set[str]]:
    """Module -> logdoctor modules it imports anywhere in its body (lazy imports included); parsed
    once per test process (each of the twenty checks read the whole package again). Read-only."""
    mods = _modules()

    def resolve(name: str) -> str | None:
        while name and name not in mods:
            name = name.rpartition(".")[0]
        return name or None

    edges: dict[str, set[str]] = defaultdict(set)
    for mod, path in mods.items():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            targets: list[str] = []
            if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("logdoctor"):
                targets = [f"{node.module}.{a.name}" for a in node.names]
            elif isinstance(node, ast.Import):
                targets = [a.name for a in node.names if a.name.startswith("logdoctor")]
            for name in targets:
                target = resolve(name)
                if target is not None and target != mod:
                    edges[mod].add(target)
    return edges


def _room(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "logdoctor"


def _cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one node (Tarjan, iterative enough for ~200 nodes)."""
    sys.setrecursionlimit(max(sys.getrecursionlimit(), 10_000))
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in edges.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                found.append(sorted(comp))

    for v in list(edges):
        if v not in index:
            visit(v)
    return found


def test_no_module_import_cycles() -> None:
    assert _cycles(_graph()) == []


def test_no_room_import_cycles() -> None:
    rooms: dict[str, set[str]] = defaultdict(set)
    for a, targets in _graph().items():
        for b in targets:
            if _room(a) != _room(b):
                rooms[_room(a)].add(_room(b))
    assert _cycles(rooms) == []


@pytest.mark.parametrize("room", sorted(NEVER))
def test_room_never_imports(room: str) -> None:
    bad = sorted(
        f"{a} -> {b}" for a, targets in _graph().items() if _room(a) == room for b in targets if _room(b) in NEVER[room]
    )
    assert bad == []


def test_nothing_of_the_tool_imports_the_python_api() -> None:
    bad = sorted(
        f"{a} -> {b}"
        for a, targets in _graph().items()
        if _room(a) not in (*FACE, "logdoctor")
        for b in targets
        if _room(b) in FACE
    )
    assert bad == []
    assert {"logdoctor.api", "logdoctor.results"} <= _graph()["logdoctor"]  # the walker sees the face


def test_emit_imports_nothing_of_the_tool() -> None:
    bad = sorted(
        f"{a} -> {b}" for a, targets in _graph().items() if _room(a) == "emit" for b in targets if _room(b) != "emit"
    )
    assert bad == []


def test_the_graph_sees_lazy_imports() -> None:
    """The walker is not blind: cli imports pipeline only inside functions, and it is found."""
    assert "logdoctor.pipeline" in _graph()["logdoctor.cli"]


def _imported_after(code: str) -> set[str]:
    out = subprocess.run(
        [sys.executable, "-c", f"import sys; {code}; print(' '.join(sorted(sys.modules)))"],
        capture_output=True,
        text=True,
        check=True,
        cwd=PACKAGE.parent,
    )
    return set(out.stdout.split())


def test_emit_line_writer_needs_no_numpy() -> None:
    loaded = _imported_after("from logdoctor.emit.lines import format_line, JsonlWriter")
    assert not {"numpy", "polars", "scipy", "matplotlib"} & {m.split(".")[0] for m in loaded}


def test_emit_package_still_exports_its_helpers() -> None:
    import logdoctor.emit as emit

    assert emit.batch_stats([2, 4])["tokens"] == 6
    assert emit.BATCH_KEYS[0] == "n_seq"
    with pytest.raises(AttributeError):
        _ = emit.nothing_here  # type: ignore[attr-defined]
