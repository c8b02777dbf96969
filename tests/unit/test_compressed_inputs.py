"""Compressed inputs are read transparently; corrupt ones fail with one clear InputError."""

from __future__ import annotations

from pathlib import Path

import pytest

from logdoctor import pipeline
from logdoctor.errors import InputError

FORMATS = Path(__file__).resolve().parents[2] / "fixtures" / "formats"


@pytest.mark.parametrize("ext", ["gz", "bz2", "xz", "zst"])
def test_compressed_copy_parses_like_the_original(ext: str) -> None:
    if ext == "zst":
        pytest.importorskip("zstandard")
    plain = pipeline.load(str(FORMATS / "struct_resumed.jsonl"))
    packed = pipeline.load(str(FORMATS / f"struct_compressed.jsonl.{ext}"))
    assert packed.meta.format == "jsonl"
    assert packed.table.equals(plain.table)


def test_truncated_gzip_is_a_clear_input_error() -> None:
    with pytest.raises(InputError, match="gzip data is corrupt or truncated"):
        pipeline.load(str(FORMATS / "struct_truncated.jsonl.gz"))


def test_zstd_without_the_extra_names_it(monkeypatch: pytest.MonkeyPatch) -> None:
    import builtins

    real_import = builtins.__import__

    def no_zstd(name: str, *args: object, **kwargs: object) -> object:
        if name == "zstandard":
            raise ImportError(name)
        return real_import(name, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(builtins, "__import__", no_zstd)
    with pytest.raises(InputError, match=r"logdoctor\[zstd\]"):
        pipeline.load(str(FORMATS / "struct_compressed.jsonl.zst"))


def test_corrupt_gzip_body_is_a_clear_input_error(tmp_path: Path) -> None:
    data = bytearray((FORMATS / "struct_compressed.jsonl.gz").read_bytes())
    data[40:80] = bytes(range(40))  # damage the deflate stream, keep the header
    bad = tmp_path / "bad.jsonl.gz"
    bad.write_bytes(bytes(data))
    with pytest.raises(InputError, match="gzip data is corrupt or truncated"):
        pipeline.load(str(bad))
