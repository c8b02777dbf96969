"""bench/readme_numbers.py: the README's accuracy numbers live in one generated block."""

from __future__ import annotations

from bench import readme_numbers as rn


def test_the_readme_holds_one_generated_block_with_the_table_header() -> None:
    text = rn.README.read_text()
    assert text.count(rn.BEGIN) == 1 and text.count(rn.END) == 1
    held = rn.block_of(text)
    assert held is not None and held.startswith(rn.HEADER)
    # one row per measured set, each with as many cells as the header
    rows = held.splitlines()[2:]
    assert [r.split("|")[1].strip().split(",")[0] for r in rows] == [
        "blind corpus",
        "blind corpus",
        "public logs (bench/realruns)",
    ]
    assert {r.count("|") for r in rows} == {rn.HEADER.splitlines()[0].count("|")}


def test_block_of_ignores_the_stamp_line_and_text_outside_the_markers() -> None:
    table = rn.HEADER + "\n| a | 1 |"
    text = f"before 3/4\n{rn.BEGIN}\n{table}\n\nMeasured 2026-01-01 on commit abc (2 cores).\n{rn.END}\nafter 5/6\n"
    assert rn.block_of(text) == table
    assert rn.block_of(text.replace("2026-01-01", "2027-02-02")) == table
    assert rn.block_of("no markers") is None
