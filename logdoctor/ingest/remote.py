"""Remote log files through fsspec (``https://``, ``s3://``, ``gs://``...), streamed, never written."""

from __future__ import annotations

import re
from typing import BinaryIO

from logdoctor.errors import InputError
from logdoctor.ingest.sources import Source, open_stream

_URL = r"^(?P<scheme>[a-z][a-z0-9+.-]*)://"  # any case: compiled on the first name with ``://`` (~0.5 ms)
#: Schemes read through fsspec; each but http(s) needs its own package (s3fs, gcsfs, adlfs...).
SCHEMES = frozenset({"http", "https", "s3", "s3a", "gs", "gcs", "az", "abfs", "abfss", "hf"})
PACKAGES = {
    "s3": "s3fs",
    "s3a": "s3fs",
    "gs": "gcsfs",
    "gcs": "gcsfs",
    "az": "adlfs",
    "abfs": "adlfs",
    "abfss": "adlfs",
    "http": "aiohttp",
    "https": "aiohttp",
    "hf": "huggingface_hub",
}


def scheme_of(name: str) -> str | None:
    """The URL scheme of ``name`` (lower case) when it is a remote file we read, else None."""
    m = re.match(_URL, name, re.IGNORECASE) if "://" in name else None
    return m["scheme"].lower() if m and m["scheme"].lower() in SCHEMES else None


def _open(name: str, scheme: str) -> BinaryIO:
    try:
        import fsspec
    except ImportError:
        raise InputError(f"{name}: remote files need fsspec: pip install 'logdoctor[remote]'") from None
    try:
        fh: BinaryIO = fsspec.open(name, "rb").open()
    except ImportError:
        pkg = PACKAGES.get(scheme, "the fsspec backend")
        raise InputError(f"{name}: {scheme}:// needs {pkg}: pip install {pkg}") from None
    except FileNotFoundError:
        raise InputError(f"{name}: no such remote file") from None
    except IsADirectoryError:
        raise InputError(f"{name}: a remote folder; name a log file") from None
    except PermissionError as err:
        raise InputError(f"{name}: access denied ({err})") from None
    except (OSError, ValueError) as err:
        raise InputError(f"{name}: cannot open ({err})") from None
    except Exception as err:  # aiohttp / botocore errors do not derive from a stdlib base
        if type(err).__module__.split(".")[0] in ("aiohttp", "botocore", "google", "fsspec", "gcsfs", "s3fs"):
            raise InputError(f"{name}: cannot open ({type(err).__name__}: {err})") from None
        raise
    return fh


def open_remote(name: str, limit: int | None = None) -> Source:
    """A Source over a remote file: read whole when within ``limit`` bytes, else kept as a stream
    (the bounded-memory reader takes it from there), as for standard input.

    Raises:
        InputError: fsspec or the scheme's package is missing, the file is missing or unreadable.
    """
    scheme = scheme_of(name)
    if scheme is None:
        raise InputError(f"{name}: not a remote file address")
    fh = _open(name, scheme)
    try:
        src = open_stream(name, fh, limit)
    except OSError as err:
        raise InputError(f"{name}: cannot read ({err})") from None
    if src.stream is None:
        fh.close()
    return src
