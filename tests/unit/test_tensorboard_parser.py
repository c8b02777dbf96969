"""TensorBoard: sniffed by TFRecord framing, read via the optional extra, clear error without it."""

from __future__ import annotations

import builtins
from pathlib import Path

import pytest

from logdoctor import pipeline
from logdoctor.errors import InputError
from logdoctor.ingest.parsers import sniff
from logdoctor.ingest.parsers.tfrecord import crc32c, frame, looks_like_tfrecord, version_event
from logdoctor.ingest.sources import open_source

TB = Path(__file__).resolve().parents[2] / "fixtures" / "formats" / "tb_run"
EVENTS = next(TB.glob("events.out.tfevents.*"))


def test_crc32c_known_value() -> None:
    assert crc32c(b"123456789") == 0xE3069283


def test_tfrecord_sniff_by_content_not_name(tmp_path: Path) -> None:
    renamed = tmp_path / "whatever.bin"
    renamed.write_bytes(EVENTS.read_bytes())
    assert sniff(open_source(str(renamed))).name == "tensorboard"
    assert sniff(open_source(str(TB))).name == "tensorboard"
    assert looks_like_tfrecord(frame(version_event(1.0)))
    assert not looks_like_tfrecord(b"step 1 loss=2.0\nstep 2 loss=1.9\n")


def test_reads_scalars_from_file_and_folder() -> None:
    import tensorboard  # noqa: F401  # in [dev]: a missing reader fails here, never skips

    for target in (EVENTS, TB):
        run = pipeline.load(str(target))
        assert run.n_steps == 40
        assert run.table["step"][0] == 5
        assert run.table["lr"][0] == pytest.approx(0.0005, rel=1e-6)


def test_missing_extra_names_it(monkeypatch: pytest.MonkeyPatch) -> None:
    real_import = builtins.__import__

    def no_tb(name: str, *args: object, **kwargs: object) -> object:
        if name.startswith("tensorboard"):
            raise ImportError(name)
        return real_import(name, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(builtins, "__import__", no_tb)
    with pytest.raises(InputError, match=r"pip install 'logdoctor\[tensorboard\]'"):
        pipeline.load(str(TB))


def test_keras_style_train_and_validation_folders(tmp_path: Path) -> None:
    import tensorboard  # noqa: F401  # in [dev]: a missing reader fails here, never skips

    from logdoctor.ingest.parsers.tfrecord import scalar_event

    for sub, base in (("train", 1.0), ("validation", 2.0)):
        (tmp_path / sub).mkdir()
        data = frame(version_event(1.0))
        for epoch in range(3):
            data += frame(scalar_event(2.0 + epoch, epoch, "epoch_loss", base - 0.25 * epoch))
        (tmp_path / sub / "events.out.tfevents.1.host.v2").write_bytes(data)
    run = pipeline.load(str(tmp_path))
    assert run.table["step"].to_list() == [0, 1, 2]
    assert run.table["loss"].to_list() == [1.0, 0.75, 0.5]
    assert run.evals["val_epoch_loss"].to_list() == [2.0, 1.75, 1.5]
