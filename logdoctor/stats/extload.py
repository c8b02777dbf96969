"""Load one compiled function from an installed package's extension file, without importing the package.

A package's ``__init__`` may import far more than the one C function logdoctor needs (ruptures:
scipy.stats and friends, about a second; scipy.ndimage: scipy.special and the array-API layer). The
extension file itself needs only numpy, so it is loaded by its path; None when the package, the file
or the function is not where this version expects them, or when the function fails a check of its
signature and behaviour on a tiny known input (the caller then takes the package's public API).
"""

from __future__ import annotations

import importlib.machinery
import importlib.util
from collections.abc import Callable
from pathlib import Path
from typing import Any


def guarded_function(module: str, attr: str, check: Callable[[Callable[..., Any]], bool]) -> Callable[..., Any] | None:
    """``module.attr`` loaded from its file when ``check(fn)`` holds, else None.

    A private compiled function has no promise of stability: another release may take other
    arguments, return another layout or change its meaning. ``check`` calls it once on a tiny
    input whose answer is known and says whether the answer is that one; any exception it raises
    (a changed signature gives TypeError, SystemError, ValueError... depending on the binding)
    counts as a failed check. The callers cache the result, so the check runs once per process.
    """
    fn = compiled_function(module, attr)
    if fn is None:
        return None
    try:
        ok = bool(check(fn))
    except Exception:  # any failure of an unknown binding means: do not use it
        return None
    return fn if ok else None


def compiled_function(module: str, attr: str) -> Callable[..., Any] | None:
    """``module.attr`` (``module`` the dotted name of a C extension) loaded from its file alone."""
    package, *inner, stem = module.split(".")
    spec = importlib.util.find_spec(package)  # locates the package without executing it
    if spec is None or spec.origin is None:
        return None
    folder = Path(spec.origin).parent.joinpath(*inner)
    for suffix in importlib.machinery.EXTENSION_SUFFIXES:
        path = folder / f"{stem}{suffix}"
        if not path.is_file():
            continue
        try:
            loader = importlib.machinery.ExtensionFileLoader(module, str(path))
            ext_spec = importlib.util.spec_from_file_location(module, path, loader=loader)
            if ext_spec is None:
                return None
            loaded = importlib.util.module_from_spec(ext_spec)
            loader.exec_module(loaded)
            return getattr(loaded, attr, None)
        except (ImportError, OSError):
            return None
    return None
