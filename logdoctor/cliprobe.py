"""The ``probe`` command without typer: load the user's target, walk its sampler, report and gate as ``check``."""

from __future__ import annotations

import contextlib
import dataclasses
import sys

from logdoctor import clirun
from logdoctor.errors import ConfigError
from logdoctor.exitcodes import ExitCode, gated_findings, should_fail
from logdoctor.model import Outcome

#: The report formats a probe writes (the figures draw a loss, which a probe has none of).
FORMATS = ("text", "json", "markdown", "github", "junit", "html")


def probe(
    target: str,
    args: list[str] | None,
    options: object,
    fmt: str = "text",
    output: str = "-",
    verbose: int = 0,
    quiet: bool = False,
    fail_on: str | None = None,
    select: list[str] | None = None,
    ignore: list[str] | None = None,
    exit_zero: bool = False,
    config: str | None = None,
) -> int:
    """The ``probe`` command (its options are documented in logdoctor.cli); ``options`` is a
    ``ProbeOptions``. Exit codes as ``check``'s: 1 when a finding is at or above ``--fail-on``."""
    from logdoctor.probing.api import ProbeOptions, diagnose
    from logdoctor.probing.lengths import given_table
    from logdoctor.probing.rngstate import seed_all
    from logdoctor.probing.target import load_target, parse_args, split_target
    from logdoctor.probing.usercode import UserCodeError

    if fmt not in FORMATS:
        raise ConfigError(f"--format: a probe writes {', '.join(FORMATS)} (the figures draw a loss), got {fmt!r}")
    if not isinstance(options, ProbeOptions):
        raise TypeError(f"probe: options must be ProbeOptions, got {type(options).__name__}")
    kwargs = parse_args(args or [])
    cfg = clirun.make_config(config, None, None, select, ignore, fail_on)
    if isinstance(options.lengths, str):  # a lengths file is read before the user's code runs
        options = dataclasses.replace(options, lengths=given_table(options.lengths, options.length_key))
    where, _ = split_target(target)
    bytecode, sys.dont_write_bytecode = sys.dont_write_bytecode, True  # no __pycache__ in the user's folders
    try:
        with contextlib.redirect_stdout(sys.stderr):  # what their code prints stays off the report
            if options.seed is not None:
                seed_all(options.seed)
            report = diagnose(load_target(target, kwargs), target, options, cfg)
    except UserCodeError as err:
        if verbose > 0 and err.frames:
            clirun.say("logdoctor: the traceback in your code (most recent call last):")
            for frame in err.frames:
                for line in frame.rstrip("\n").splitlines():
                    clirun.say(line)
        raise
    finally:
        sys.dont_write_bytecode = bytecode
    failed = should_fail(gated_findings(report), cfg.fail_on)
    outcome = Outcome(path=target, report=report, exit_code=ExitCode.FINDINGS if failed else ExitCode.OK)
    clirun.emit([outcome], fmt, -1 if quiet else verbose, output, [where] if where.endswith(".py") else [], False)
    return ExitCode.OK if exit_zero and failed else outcome.exit_code
