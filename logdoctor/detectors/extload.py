"""Load one compiled function from an installed package's extension file, without importing the package.

A package's ``__init__`` may import far more than the one C function logdoctor needs (ruptures:
scipy.stats and friends, about a second; scipy.ndimage: scipy.special and the array-API layer). The
extension file itself needs only numpy, so it is loaded by its path; None when the package, the file
or the function is not where this version expects them (the caller then takes the package's API).
"""

from __future__ import annotations

import importlib.machinery
import importlib.util
from collections.abc import Callable
from pathlib import Path
from typing import Any


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
