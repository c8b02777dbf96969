"""Remote log files through fsspec, served by a local HTTP server on 127.0.0.1."""

from __future__ import annotations

import functools
import gzip
import http.server
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from fixtures.trackers import run_table, write_csv
from logdoctor import pipeline
from logdoctor.cli import main
from logdoctor.ingest.remote import scheme_of

# one worker holds this module's expensive fixture (--dist loadgroup), not each worker its own
pytestmark = pytest.mark.xdist_group("http-site")

pytest.importorskip("fsspec", reason="the [remote] extra is not installed")
pytest.importorskip("aiohttp", reason="the [remote] extra is not installed")


class _Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Path]]:
    root = tmp_path_factory.mktemp("site")
    csv = write_csv(run_table(), root / "static.csv")
    (root / "static.csv.gz").write_bytes(gzip.compress(csv.read_bytes()))
    handler = functools.partial(_Quiet, directory=str(root))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    server.block_on_close = False  # a client's keep-alive connection held server_close ~10 s at teardown
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", root
    finally:
        server.shutdown()
        server.server_close()


def test_schemes() -> None:
    assert scheme_of("https://x/train.log") == "https" and scheme_of("S3://b/k.log") == "s3"
    assert scheme_of("gs://b/k.jsonl") == "gs"
    assert scheme_of("train.log") is None and scheme_of("C:/runs/train.log") is None
    assert scheme_of("mlflow://host:5000/abc") is None


def test_a_remote_csv_reads_like_the_local_one(site: tuple[str, Path]) -> None:
    url, root = site
    local = pipeline.analyze(pipeline.load(str(root / "static.csv")))
    for name in ("static.csv", "static.csv.gz"):
        got = pipeline.analyze(pipeline.load(f"{url}/{name}"))
        assert got.series.steps == local.series.steps and got.series.columns == local.series.columns
        assert got.verdict.batching == local.verdict.batching == "static"


def test_a_large_remote_log_is_streamed(site: tuple[str, Path]) -> None:
    url, root = site
    size = (root / "static.csv").stat().st_size
    run = pipeline.load(f"{url}/static.csv", max_memory=size // 2)  # too big to hold whole
    assert run.n_steps == run_table().height
    assert any("chunk" in n or "block" in n or "stream" in n for n in run.meta.notes), run.meta.notes


def test_missing_remote_file_is_one_line_exit_2(site: tuple[str, Path], capsys: pytest.CaptureFixture[str]) -> None:
    url, _ = site
    assert main(["analyze", f"{url}/nope.log"]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "nope.log" in err
