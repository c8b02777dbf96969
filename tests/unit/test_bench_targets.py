"""bench/targets.py: each target's direction, and a group measured by its own bench script when present."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path
from types import ModuleType

REPO = Path(__file__).resolve().parents[2]


def _targets() -> ModuleType:
    spec = importlib.util.spec_from_file_location("bench_targets", REPO / "bench" / "targets.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("bench_targets", module)
    spec.loader.exec_module(module)
    return module


def test_every_target_is_met_on_its_side_of_the_limit_only() -> None:
    for t in _targets().TARGETS:
        inside = t.limit * (1.1 if t.op == ">=" else 0.9)
        outside = t.limit * (0.9 if t.op == ">=" else 1.1)
        assert t.met(inside) and not t.met(outside), t.key
        assert t.met(t.limit) == (t.op != "<"), t.key


def test_the_million_group_uses_bench_million_when_the_checkout_has_it(tmp_path: Path) -> None:
    targets = _targets()
    assert targets.source("million", tmp_path) is targets.million  # no script: the built-in one
    doc: dict[str, object] = {"steps": 1_000_000, "cores": 2, "load": 0.5}
    logs = {"text 1M": (0.9, 2.5, 5.0, 900), "emit 1M": (1.2, 2.8, 4.0, 990)}
    for label, (parse, analyze, loop, rss) in logs.items():
        doc[label] = {
            "mb": 190.0,
            "parse": {"wall": parse, "cpu": parse, "rss_mb": rss - 100},
            "analyze": {"wall": analyze, "cpu": analyze, "rss_mb": rss},
            "re_loop": {"wall": loop, "cpu": loop},
            "ratio_wall": analyze / loop,
        }
    (tmp_path / "bench").mkdir()
    (tmp_path / "bench" / "bench_million.py").write_text(f"print({json.dumps(json.dumps(doc))})\n")
    fn = targets.source("million", tmp_path)
    assert fn is targets.million_script
    values, details = fn(tmp_path, 1)
    assert values == {"m1_analyze_s": 2.8, "m1_vs_reloop": 0.7, "m1_parse_s": 1.2, "m1_peak_mb": 990}
    assert set(details) == set(values) and "emit 1M" in details["m1_parse_s"]
