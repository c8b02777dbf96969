"""Find the user's target (``path/to/train.py:function`` or ``package.module:function``) and call it."""

from __future__ import annotations

import ast
import contextlib
import importlib
import importlib.util
import sys
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from types import ModuleType
from typing import Any

from logdoctor.errors import ConfigError, InputError
from logdoctor.probing.usercode import call

EXPECTED = "path/to/train.py:function or package.module:function"


def parse_args(pairs: Sequence[str]) -> dict[str, Any]:
    """``--arg key=value`` pairs as keyword arguments: a value that reads as a Python literal
    (``8``, ``0.5``, ``True``, ``None``, ``[1, 2]``, ``'x'``) is that value, anything else a string."""
    out: dict[str, Any] = {}
    for pair in pairs:
        key, sep, text = pair.partition("=")
        key = key.strip()
        if not sep or not key.isidentifier():
            raise ConfigError(f"--arg expects key=value with a Python name as key, got {pair!r}")
        try:
            out[key] = ast.literal_eval(text)
        except (ValueError, SyntaxError, MemoryError, RecursionError):
            out[key] = text
    return out


def split_target(target: str) -> tuple[str, str]:
    """(module path or file, attribute name) of ``target``; ConfigError names the expected forms."""
    where, sep, name = target.rpartition(":")
    if not sep or not where or not name.isidentifier():
        raise ConfigError(f"probe target {target!r}: expected {EXPECTED}")
    return where, name


@contextlib.contextmanager
def _importing(folder: Path | None) -> Iterator[None]:
    """While the user's code is imported and run: no bytecode written next to their files, and what
    it prints kept off stdout (a report goes there). Their folder goes first on ``sys.path`` and
    stays there (as ``python train.py`` would have it): their function may import its siblings late."""
    old_bytecode = sys.dont_write_bytecode
    sys.dont_write_bytecode = True
    if folder is not None and str(folder) not in sys.path:
        sys.path.insert(0, str(folder))
    try:
        with contextlib.redirect_stdout(sys.stderr):
            yield
    finally:
        sys.dont_write_bytecode = old_bytecode


def _module_from_file(path: Path) -> ModuleType:
    if not path.is_file():
        raise InputError(f"{path}: no such file (probe target: {EXPECTED})")
    # a name of its own: a user's ``test.py`` or ``data.py`` must not shadow what else is imported
    name = f"_logdoctor_probe_{''.join(c if c.isalnum() else '_' for c in path.stem)}_{abs(hash(path)):x}"
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise InputError(f"{path}: not a Python file (probe target: {EXPECTED})")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # dataclasses and pickling look their module up by name
    loader = spec.loader
    try:
        call(f"importing {path}", lambda: loader.exec_module(module))
    except BaseException:
        sys.modules.pop(name, None)
        raise
    return module


def load_module(where: str) -> ModuleType:
    """The module a target names: a ``.py`` file (or an existing file), else a dotted module name."""
    path = Path(where)
    if where.endswith(".py") or path.is_file():
        with _importing(path.resolve().parent):
            return _module_from_file(path.resolve())
    if not all(part.isidentifier() for part in where.split(".")):
        raise ConfigError(f"probe target {where!r}: expected {EXPECTED}")
    with _importing(Path.cwd()):
        if importlib.util.find_spec(where.split(".")[0]) is None:
            raise InputError(f"probe target: no module named {where!r} (expected {EXPECTED})")
        return call(f"importing {where}", lambda: importlib.import_module(where))


def load_target(target: str, args: Mapping[str, Any] | None = None) -> Any:
    """What ``target`` gives: its function called with ``args`` (keyword arguments), or the
    attribute itself when it is not callable (a module-level DataLoader).

    Raises:
        ConfigError / InputError: the target is malformed, missing or lacks the attribute.
        UserCodeError: the user's code raised while importing or running (file and line named).
    """
    where, name = split_target(target)
    module = load_module(where)
    if not hasattr(module, name):
        found = sorted(
            n
            for n, v in vars(module).items()
            if callable(v) and not n.startswith("_") and getattr(v, "__module__", None) == module.__name__
        )
        raise ConfigError(f"{where} has no {name!r} (it defines: {', '.join(found) or 'no function'})")
    attr = getattr(module, name)
    if not callable(attr):
        if args:
            raise ConfigError(f"{target} is a {type(attr).__name__}, not a function: --arg cannot be passed to it")
        return attr
    kwargs = dict(args or {})
    with _importing(None):
        return call(f"{target}()", lambda: attr(**kwargs))
