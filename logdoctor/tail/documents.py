"""Follow a run written as a whole document (trainer_state.json rewritten at each save, a
TensorBoard or MLflow run folder): each time it changes, read it again with the batch reader."""

from __future__ import annotations

import os
from pathlib import Path

from logdoctor.errors import LogdoctorError
from logdoctor.ingest.aliases import FieldMap
from logdoctor.tail.follower import Chunk

#: Formats that are rewritten (or appended to in a binary container) rather than appended by line.
DOCUMENT_FORMATS = frozenset({"hf_trainer_state", "tensorboard", "mlflow"})


def _signature(path: Path) -> tuple[tuple[str, int, int, int], ...]:
    """What changes when the document is saved again: (name, inode, size, mtime) of the file, or of
    every file of the folder."""
    files = [path] if path.is_file() else sorted(p for p in path.rglob("*") if p.is_file())
    out = []
    for p in files:
        try:
            st = p.stat()
        except OSError:
            continue
        out.append((str(p), st.st_ino, st.st_size, st.st_mtime_ns))
    return tuple(out)


class DocumentFollower:
    """Reads the whole document again when it changed since the last read; a read that fails (the
    trainer is halfway through rewriting it) is tried again at the next change or poll."""

    def __init__(self, path: str, fields: FieldMap | None = None) -> None:
        self.path = path
        self.fields = fields or FieldMap()
        self._sig: tuple[tuple[str, int, int, int], ...] = ()
        self._opened = False

    @property
    def is_open(self) -> bool:
        return self._opened

    @property
    def describe(self) -> str:
        """What is followed, for the first notice."""
        return "a document rewritten as the run goes: read again at each save"

    def head(self, n: int = 0) -> bytes:
        return b""

    def read(self) -> Chunk:
        """The document as saved now, when it changed (no bytes: ``run`` holds it)."""
        p = Path(self.path)
        if not p.exists():
            return Chunk(b"")
        sig = _signature(p)
        if sig == self._sig:
            return Chunk(b"")
        from logdoctor import pipeline  # the batch reader: the same Run as `analyze`

        try:
            run = pipeline.load(self.path, fields=self.fields)
        except LogdoctorError:
            return Chunk(b"")  # half-written, or no step yet: look again at the next change
        self._sig, self._opened = sig, True
        return Chunk(b"", run=run)

    def close(self) -> None:
        self._opened = False


def document_format(path: str) -> str | None:
    """The whole-document format of ``path`` (a file or a run folder), or None."""
    from logdoctor.ingest.parsers import sniff
    from logdoctor.ingest.sources import Source, open_source

    p = Path(path)
    try:
        if p.is_dir():
            source = Source(name=path, path=p, is_dir=True)
        elif p.is_file() and os.path.getsize(p) > 0:
            source = open_source(path)
        else:
            return None
        name = sniff(source).name
    except (LogdoctorError, OSError):
        return None
    return name if name in DOCUMENT_FORMATS else None
