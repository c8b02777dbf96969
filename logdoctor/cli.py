"""The command line: parse options, call the pipeline, pick a renderer, return an exit code."""

from __future__ import annotations

import os
import sys
from typing import Annotated

import typer

from logdoctor import __version__, pipeline
from logdoctor.aliases import FieldMap
from logdoctor.config import AnalysisConfig
from logdoctor.errors import ConfigError, LogdoctorError
from logdoctor.exitcodes import ExitCode
from logdoctor.model import Severity
from logdoctor.renderers import RENDERERS, get_renderer
from logdoctor.renderers.output import write_output

app = typer.Typer(
    name="logdoctor",
    help="Diagnose ML training logs: spikes, periodicity, regime changes and bad batching.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
)

MapOpt = Annotated[
    list[str] | None,
    typer.Option("--map", help="Field override canonical=source, e.g. len_mean=avg_tokens_per_seq."),
]
SpeOpt = Annotated[int | None, typer.Option("--steps-per-epoch", min=1, help="Steps in one epoch.")]
OutOpt = Annotated[str, typer.Option("--output", "-o", help="Write to FILE instead of stdout ('-').")]


def _version(value: bool) -> None:
    if value:
        typer.echo(f"logdoctor {__version__}")
        raise typer.Exit(0)


@app.callback()
def _root(
    version: Annotated[
        bool, typer.Option("--version", callback=_version, is_eager=True, help="Show the version and exit.")
    ] = False,
) -> None:
    """Diagnose ML training logs: spikes, periodicity, regime changes and bad batching."""


@app.command()
def analyze(
    path: Annotated[str, typer.Argument(help="Training log (file, directory, or - for stdin).")],
    fmt: Annotated[str, typer.Option("--format", "-f", help=f"Output: {', '.join(RENDERERS)}.")] = "text",
    output: OutOpt = "-",
    field_map: MapOpt = None,
    steps_per_epoch: SpeOpt = None,
    verbose: Annotated[int, typer.Option("--verbose", "-v", count=True, help="More detail.")] = 0,
) -> int:
    """Analyse one training log and report what is wrong with the run, with evidence."""
    renderer = get_renderer(fmt)(verbosity=verbose)
    fields = FieldMap.parse(field_map or [])
    run = pipeline.load(path, fields=fields, steps_per_epoch=steps_per_epoch)
    report = pipeline.analyze(run, AnalysisConfig(fields=fields, steps_per_epoch=steps_per_epoch))
    write_output(renderer.render(report), output, inputs=[path])
    return ExitCode.OK


@app.command()
def tail(
    paths: Annotated[list[str] | None, typer.Argument(help="Log files, existing or not.")] = None,
    globs: Annotated[
        list[str] | None, typer.Option("--glob", help="Follow each file matching ('rank*.log').")
    ] = None,
    fmt: Annotated[str, typer.Option("--format", "-f", help="auto, live, plain, jsonl.")] = "auto",
    from_end: Annotated[
        bool, typer.Option("--from-end/--from-start", help="Skip what the file holds now.")
    ] = False,
    exit_on: Annotated[
        str | None, typer.Option("--exit-on", help="Exit 1 at the first warning/error finding.")
    ] = None,
    on_finding: Annotated[
        str | None, typer.Option("--on-finding", help="Run CMD per finding, its JSON on stdin.")
    ] = None,
    poll_interval: Annotated[
        float, typer.Option("--poll-interval", min=0.01, help="Seconds between polls.")
    ] = 0.5,
    heartbeat: Annotated[
        float, typer.Option("--heartbeat", min=0.1, help="Seconds between heartbeats.")
    ] = 5.0,
    idle_timeout: Annotated[
        float | None, typer.Option("--idle-timeout", min=0, help="Stop after S s without data.")
    ] = None,
    max_seconds: Annotated[
        float | None, typer.Option("--max-seconds", min=0, help="Stop after S seconds.")
    ] = None,
    poll: Annotated[bool, typer.Option("--poll", help="Poll even where inotify works.")] = False,
    field_map: MapOpt = None,
    steps_per_epoch: SpeOpt = None,
) -> int:
    """Follow a live training log and report findings the moment they appear (Ctrl-C stops)."""
    from logdoctor.renderers.stream import stream_renderer
    from logdoctor.tail.runner import TailOptions, follow
    from logdoctor.tail.session import SessionOptions

    patterns = [*(paths or []), *(globs or [])]
    if not patterns:
        raise ConfigError("tail needs a log file or --glob PATTERN")
    if exit_on not in (None, "warning", "error"):
        raise ConfigError(f"--exit-on expects warning or error, got {exit_on!r}")
    fields = FieldMap.parse(field_map or [])
    opts = TailOptions(
        patterns=tuple(patterns), from_end=from_end, poll_interval=poll_interval,
        heartbeat=heartbeat, idle_timeout=idle_timeout, max_seconds=max_seconds,
        exit_on=Severity.parse(exit_on) if exit_on else None, on_finding=on_finding,
        inotify=not poll, session=SessionOptions(fields=fields, steps_per_epoch=steps_per_epoch),
    )
    return follow(opts, stream_renderer(fmt))


def main(argv: list[str] | None = None) -> int:
    """Run the CLI; returns (and, as a script, exits with) the exit code."""
    if os.environ.get("NO_COLOR"):
        os.environ.setdefault("TERM", "dumb")
    try:
        rv = app(args=argv, prog_name="logdoctor", standalone_mode=False)
    except LogdoctorError as err:
        typer.echo(f"logdoctor: error: {err}", err=True)
        return _exit(ExitCode.BAD_INPUT, argv)
    except typer.Exit as ex:
        return _exit(ex.exit_code, argv)
    except typer.TyperException as err:  # usage errors: bad option, missing argument
        show = getattr(err, "show", None)
        if callable(show):
            show()
        else:
            typer.echo(f"logdoctor: error: {err}", err=True)
        return _exit(ExitCode.BAD_INPUT, argv)
    except (typer.Abort, KeyboardInterrupt):
        typer.echo("logdoctor: interrupted", err=True)
        return _exit(130, argv)
    except BrokenPipeError:
        # the reader went away (`logdoctor analyze big.log | head`): not an error
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return _exit(ExitCode.OK, argv)
    return _exit(int(rv) if isinstance(rv, int) else ExitCode.OK, argv)


def _exit(code: int, argv: list[str] | None) -> int:
    if argv is None:  # called as the console script
        sys.exit(code)
    return code
