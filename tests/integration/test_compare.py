"""`logdoctor compare` end to end on the simulator pair (static composition vs bucketed shuffle)."""

from __future__ import annotations

import json
import re
from importlib.resources import files
from pathlib import Path

import jsonschema
import pytest
from referencing import Registry, Resource

from fixtures import gen_compare
from logdoctor.cli import main
from logdoctor.comparison import compare_paths
from tests.conftest import FIXTURES

BASE = str(FIXTURES / "compare_static.log")
CAND = str(FIXTURES / "compare_bucketed.jsonl")
TRUTH = json.loads((FIXTURES / "compare_static.truth.json").read_text())


def validator() -> jsonschema.Draft202012Validator:
    """The shipped compare schema, resolving its references into the shipped report schema."""
    read = files("logdoctor").joinpath
    report = json.loads(read("schema/report.schema.json").read_text())
    schema = json.loads(read("schema/compare.schema.json").read_text())
    registry = Registry().with_resource(report["$id"], Resource.from_contents(report))
    return jsonschema.Draft202012Validator(schema, registry=registry)


@pytest.fixture(scope="module")
def pair_json(tmp_path_factory: pytest.TempPathFactory) -> dict:
    out = tmp_path_factory.mktemp("cmp") / "cmp.json"
    assert main(["compare", BASE, CAND, "-f", "json", "-o", str(out)]) == 0
    return json.loads(out.read_text())


def test_the_simulator_pair_gives_the_known_answer(pair_json: dict) -> None:
    assert pair_json["baseline"]["verdict"]["batching"] == TRUTH["baseline"] == "static"
    assert pair_json["candidate"]["verdict"]["batching"] == TRUTH["candidate"] == "healthy"
    assert "LD502" in {f["code"] for f in pair_json["resolved"]}
    assert pair_json["new"] == []
    assert pair_json["throughput_ratio"] == pytest.approx(TRUTH["throughput_ratio"], rel=0.01)


def test_the_symptom_is_gone_and_quality_is_unchanged_at_matched_tokens(pair_json: dict) -> None:
    power = pair_json["symptoms"]["periodic_power"]
    assert power["baseline"] > 10 and power["candidate"] < 3
    last = pair_json["loss_at_matched"]["tokens"][-1]
    assert last["ci_low"] < TRUTH["loss_offset_at_matched_tokens"] < last["ci_high"]
    pad = pair_json["symptoms"]["padding"]
    assert pad["candidate"] > pad["baseline"]


def test_the_json_follows_the_shipped_schema(pair_json: dict) -> None:
    validator().validate(pair_json)
    assert set(pair_json) == {
        "format_version",
        "baseline",
        "candidate",
        "resolved",
        "new",
        "persisting",
        "throughput_ratio",
        "symptoms",
        "loss_at_matched",
        "like_with_like",
    }


def test_the_schema_rejects_a_document_missing_a_key(pair_json: dict) -> None:
    broken = {k: v for k, v in pair_json.items() if k != "throughput_ratio"}
    assert not validator().is_valid(broken)


def test_several_candidates_give_a_candidates_list(tmp_path: Path) -> None:
    out = tmp_path / "many.json"
    assert main(["compare", BASE, CAND, BASE, "-f", "json", "-o", str(out), "--jobs", "2"]) == 0
    doc = json.loads(out.read_text())
    validator().validate(doc)
    assert [c["candidate"]["verdict"]["batching"] for c in doc["candidates"]] == ["healthy", "static"]
    same = doc["candidates"][1]
    assert same["resolved"] == same["new"] == [] and same["throughput_ratio"] == pytest.approx(1.0)


def test_text_answers_first_then_the_table(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["compare", BASE, CAND]) == 0
    out = capsys.readouterr().out
    lines = out.splitlines()
    answer = " ".join(out.split("\n\n")[0].split())  # the answer is wrapped at 80 columns
    assert answer.startswith("The fix worked: static batch composition → healthy batching, LD502")
    assert "throughput 78% of before" in answer
    assert max(map(len, lines)) <= 80
    assert any(line.startswith("resolved   LD502 static-composition (error)") for line in lines)


def test_the_gate_passes_the_fix_and_fails_a_worse_loss(tmp_path: Path) -> None:
    assert main(["compare", BASE, CAND, "--fail-on-regression", "-o", str(tmp_path / "a.txt")]) == 0
    base, cand = gen_compare.write_pair(tmp_path, offset=0.3)
    assert main(["compare", str(base), str(cand), "-o", str(tmp_path / "b.txt")]) == 0
    assert main(["compare", str(base), str(cand), "--fail-on-regression", "-o", str(tmp_path / "c.txt")]) == 1
    text = (tmp_path / "c.txt").read_text()
    assert text.startswith("Mixed result:") and "regression loss at" in " ".join(text.split())


def test_a_new_warning_kind_fails_the_gate(tmp_path: Path) -> None:
    # the other way round: the static run as the candidate brings LD502 and LD201 back
    assert main(["compare", CAND, BASE, "--fail-on-regression", "-o", str(tmp_path / "r.md"), "-f", "markdown"]) == 1
    assert "**Regression: healthy batching → static batch composition" in (tmp_path / "r.md").read_text()


def test_runs_that_do_not_overlap_are_not_comparable(tmp_path: Path) -> None:
    late = tmp_path / "late.log"
    late.write_text("".join(f"step {s} | loss={3 - s / 5000:.4f}\n" for s in range(2000, 2200)))
    c = compare_paths(BASE, [str(late)])
    v = c.versus[0]
    assert v.matched == () and v.not_comparable[0] == "steps: the runs do not overlap"
    assert v.throughput_ratio is None


def test_a_shorter_run_in_another_format_is_compared_on_the_overlap(tmp_path: Path) -> None:
    short = tmp_path / "short.jsonl"
    short.write_text("".join(json.loads(x) and x + "\n" for x in Path(CAND).read_text().splitlines()[:300]))
    v = compare_paths(BASE, [str(short)]).versus[0]
    assert [m.at for m in v.on("steps")] == [150, 300]
    assert v.throughput_ratio == pytest.approx(0.78, rel=0.02)


def test_the_plot_is_a_png(tmp_path: Path) -> None:
    fig = tmp_path / "cmp.png"
    assert main(["compare", BASE, CAND, "--plot", str(fig), "-o", str(tmp_path / "t.txt")]) == 0
    assert fig.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and fig.stat().st_size > 20_000


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["compare", BASE, "missing.log"], "missing.log: no such file"),
        (["compare", BASE, CAND, "-f", "junit"], "--format for compare takes text, json, markdown, html"),
        (["compare", BASE, CAND, "--plot", "x.gif"], "--plot takes a .png, .svg or .pdf"),
        (["compare", BASE, str(FIXTURES / "formats" / "*.log")], "names"),
        (["compare", "-", CAND, "-"], "standard input"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(args: list[str], message: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(args) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("logdoctor: error:") and message in err[0]


def test_a_missing_candidate_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["compare", BASE]) == 2
    assert "Traceback" not in capsys.readouterr().err


def test_a_candidate_that_cannot_decide_is_no_fix(tmp_path: Path) -> None:
    short = tmp_path / "short.log"
    # the baseline's own first 40 losses, without the batch statistics: nothing is shown fixed
    lines = [line.split(" lr=")[0] for line in Path(BASE).read_text().splitlines()[:40]]
    short.write_text("".join(re.sub(r"^step (\d+)/\d+", r"step \1", line) + "\n" for line in lines))
    v = compare_paths(BASE, [str(short)]).versus[0]
    assert v.candidate.verdict.batching == "inconclusive"
    assert "LD502" in {r.code for r in v.resolved} and v.outcome == "unchanged"
    # with the plan kept (``step 40/648``), the excerpt also stopped before its plan: a new warning
    short.write_text("".join(line + "\n" for line in lines))
    v = compare_paths(BASE, [str(short)]).versus[0]
    assert "LD016" in {n.code for n in v.new} and v.outcome == "regressed"


def test_an_empty_candidate_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    empty = tmp_path / "empty.log"
    empty.write_text("")
    assert main(["compare", BASE, str(empty)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "empty.log" in err[0]


def test_the_committed_pair_is_what_the_seeded_generator_writes(tmp_path: Path) -> None:
    gen_compare.generate(tmp_path)
    for name in ("compare_static.log", "compare_bucketed.jsonl", "compare_static.truth.json"):
        assert (tmp_path / name).read_bytes() == (FIXTURES / name).read_bytes(), name


def _shifted(tmp_path: Path, scale: float) -> Path:
    """The bundled candidate with every loss multiplied by ``scale`` (another model's loss scale)."""
    import json

    out = tmp_path / "scaled.jsonl"
    with open(CAND, encoding="utf-8") as src, open(out, "w", encoding="utf-8") as dst:
        for line in src:
            rec = json.loads(line)
            if isinstance(rec.get("loss"), float | int):
                rec["loss"] = rec["loss"] * scale
            dst.write(json.dumps(rec) + "\n")
    return out


def test_unrelated_runs_are_refused_unless_forced(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    other = _shifted(tmp_path, 4.0)
    assert main(["compare", BASE, str(other)]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "not comparable: the loss starts at" in err and "--force" in err
    assert main(["compare", BASE, str(other), "--force", "-o", str(tmp_path / "f.txt")]) == 0


def test_a_small_loss_change_is_same_however_significant() -> None:
    from logdoctor.comparison.quality import PRACTICAL
    from logdoctor.comparison.result import Matched

    small = Matched("steps", 100.0, 2.0, 2.005, 0.003, 0.007, PRACTICAL * 2.0)  # +0.005, CI above 0
    assert small.change == "same" and not small.worse and not small.better
    big = Matched("steps", 100.0, 2.0, 2.05, 0.03, 0.07, PRACTICAL * 2.0)
    assert big.change == "worse" and big.worse
    noisy = Matched("steps", 100.0, 2.0, 2.05, -0.03, 0.13, PRACTICAL * 2.0)
    assert noisy.change == "unclear"
    points = compare_paths(BASE, [CAND]).versus[0].matched
    assert all(m.practical == pytest.approx(PRACTICAL * abs(m.baseline)) for m in points)
