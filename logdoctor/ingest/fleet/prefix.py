"""Every log under an fsspec prefix (``s3://bucket/runs/``) or matching a glob (``s3://bucket/runs/**/train.log``)."""

from __future__ import annotations

import glob
from typing import Any

from logdoctor.errors import InputError
from logdoctor.ingest.fleet.names import looks_like_log
from logdoctor.ingest.limits import MAX_RUNS, within
from logdoctor.ingest.remote import PACKAGES, scheme_of


def is_prefix(name: str) -> bool:
    """True for a remote address that stands for many files: it ends with ``/`` or holds a glob."""
    scheme = scheme_of(name)
    if scheme is None or scheme in ("http", "https"):  # a web server has no listing
        return False
    return name.endswith("/") or glob.has_magic(name.split("://", 1)[1])


def _filesystem(name: str) -> tuple[Any, str]:
    try:
        from fsspec.core import url_to_fs
    except ImportError:
        raise InputError(f"{name}: remote files need fsspec: pip install 'logdoctor[remote]'") from None
    scheme = scheme_of(name) or ""
    try:
        return url_to_fs(name)
    except ImportError:
        pkg = PACKAGES.get(scheme, "the fsspec backend")
        raise InputError(f"{name}: {scheme}:// needs {pkg}: pip install {pkg}") from None


def list_prefix(name: str) -> list[str]:
    """The files a prefix or glob stands for, sorted, as full URLs; a prefix keeps only names that
    look like logs (``looks_like_log``), a glob keeps what it matches.

    Raises:
        InputError: fsspec or the scheme's package is missing, the listing fails, or finds nothing.
    """
    fs, path = _filesystem(name)
    try:
        if glob.has_magic(path):
            found = [p for p in fs.glob(path) if not fs.isdir(p)]
        else:
            found = [p for p in fs.find(path) if looks_like_log(p)]
    except FileNotFoundError:
        raise InputError(f"{name}: no such remote folder") from None
    except PermissionError as err:
        raise InputError(f"{name}: access denied ({err})") from None
    except OSError as err:
        raise InputError(f"{name}: cannot list ({err})") from None
    except Exception as err:  # botocore / gcsfs errors do not derive from a stdlib base
        if type(err).__module__.split(".")[0] in ("aiohttp", "botocore", "google", "fsspec", "gcsfs", "s3fs"):
            raise InputError(f"{name}: cannot list ({type(err).__name__}: {err})") from None
        raise
    if not found:
        raise InputError(f"{name}: matches no file" if glob.has_magic(path) else f"{name}: no logs under this prefix")
    return [fs.unstrip_protocol(p) for p in within(name, sorted(found), MAX_RUNS, "logs under this prefix")]
