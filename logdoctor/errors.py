"""The exception hierarchy: every error we expect derives from LogdoctorError."""

from __future__ import annotations

_MAX_MESSAGE = 400


class LogdoctorError(Exception):
    """Root of all expected errors; the CLI prints ``str(err)`` on one line and exits 2.

    Attributes:
        slug: a short stable identifier of the kind of error (for JSON and tests).
    """

    slug = "error"

    def __init__(self, message: str) -> None:
        # one line, whatever a library's error text embedded (polars quotes whole input chunks)
        message = " ".join(message.split())
        if len(message) > _MAX_MESSAGE:
            message = message[: _MAX_MESSAGE - 1] + "…"
        super().__init__(message)
        self.message = message

    def __str__(self) -> str:
        return self.message


class InputError(LogdoctorError):
    """The input cannot be read: missing, a directory, binary, empty, unreadable."""

    slug = "input"


class ParseError(LogdoctorError):
    """The input was read but holds no recognisable training steps."""

    slug = "parse"


class ConfigError(LogdoctorError):
    """A command-line option or configuration value is invalid."""

    slug = "config"


class OutputError(LogdoctorError):
    """An output cannot be written where it was asked to go."""

    slug = "output"
