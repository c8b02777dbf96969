"""typer's value coercion without pydantic for the values that need none (options left at their
default, plain strings, counts, whole numbers in range).

typer 0.29 coerces every parameter through a pydantic TypeAdapter, built on first use for each
parameter even when its value is the default None: importing pydantic and building ~15 adapters
costs ~70 ms, a third of the bare import of polars + numpy + rich. ``install`` gives each typer
parameter a coercer that returns such values as pydantic would (unchanged, or a list of the given
strings), and hands every other value (a bad number, a path type, an enum...) to typer's own
coercion, built only then, so its error messages stay typer's. Without the typer internals it
expects, ``install`` changes nothing.
"""

from __future__ import annotations

import types
from typing import Any, Union, get_args, get_origin

#: the marker for "no fast answer: ask typer"
_ASK_TYPER = object()


def install() -> bool:
    """Put the fast coercer in front of typer's; returns whether typer had the expected hooks."""
    try:
        from typer import core
        from typer._coercion import build_runtime_param
    except ImportError:
        return False
    cls = getattr(core, "_TyperParameter", None)
    if cls is None or not hasattr(cls, "get_runtime_param") or getattr(cls, "_logdoctor_fast", False):
        return cls is not None and getattr(cls, "_logdoctor_fast", False)

    def get_runtime_param(self: Any) -> Any:
        if self._runtime_param is None:
            self._runtime_param = _FastCoercion(self, build_runtime_param)
        return self._runtime_param

    cls.get_runtime_param = get_runtime_param
    cls._logdoctor_fast = True
    return True


class _FastCoercion:
    """Coerce without pydantic where the answer is the value itself; typer's coercion otherwise."""

    def __init__(self, param: Any, build: Any) -> None:
        self._param = param
        self._build = build
        self._typer: Any = None

    def coerce(self, value: Any, param: Any, ctx: Any) -> Any:
        fast = _fast_value(value, param)
        if fast is not _ASK_TYPER:
            return fast
        if self._typer is None:
            self._typer = self._build(self._param.type_descriptor)
        return self._typer.coerce(value, param=param, ctx=ctx)


def _fast_value(value: Any, param: Any) -> Any:
    """The coerced value when it needs no conversion, else ``_ASK_TYPER``."""
    info = param.type_descriptor.parameter_info
    if getattr(info, "parser", None) is not None or getattr(info, "click_type", None) is not None:
        return _ASK_TYPER
    multi = param.multiple or param.nargs == -1
    if value is None:
        return () if multi else None
    base = _without_none(param.type_descriptor.annotation)
    if multi:
        strings = isinstance(value, (list, tuple)) and all(type(v) is str for v in value)
        return list(value) if strings and get_origin(base) is list and get_args(base) == (str,) else _ASK_TYPER
    if base is str and type(value) is str:
        return value
    if base is not int:
        return _ASK_TYPER
    if type(value) is str and value.isascii() and value.isdigit():
        value = int(value)
    if type(value) is int and (info.min is None or value >= info.min) and (info.max is None or value <= info.max):
        return value
    return _ASK_TYPER


def _without_none(annotation: Any) -> Any:
    """``X`` for ``X | None`` / ``Optional[X]``; the annotation itself otherwise."""
    if get_origin(annotation) in (Union, types.UnionType):
        rest = [a for a in get_args(annotation) if a is not type(None)]
        if len(rest) == 1:
            return rest[0]
    return annotation
