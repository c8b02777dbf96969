"""What the commands share without typer: options into an ``AnalysisConfig``, the analyze and check
runs, the error lines and exit codes, and ``fast``: ``logdoctor analyze|check FILE...`` with at most
``-f``/``-o``, run without importing typer or click (~30 ms of a small log's ~0.35 s start to exit).

``fast`` answers only argument lists whose meaning under click is plain (below); anything else, a
usage error included, is left to the typer app in logdoctor.cli, so help, errors and their exit
codes stay typer's. Both paths run the same ``analyze`` and the same ``guard``.
"""

from __future__ import annotations

import contextlib
import dataclasses
import gc
import os
import sys
import threading
from collections.abc import Callable

from logdoctor import startup
from logdoctor.config import AnalysisConfig
from logdoctor.errors import ConfigError, LogdoctorError
from logdoctor.exitcodes import ExitCode, worst
from logdoctor.model import Outcome, RunResult

#: the commands ``fast`` runs with their defaults for every option but these
_FAST_COMMANDS = ("analyze", "check")
#: the value options ``fast`` reads (click: each takes the next argument as its value)
_FAST_OPTIONS = {"-f": "fmt", "--format": "fmt", "-o": "output", "--output": "output"}


class Done(Exception):
    """A command's own exit (typer.Exit, a usage error already shown): this code, stdout not flushed."""

    def __init__(self, code: int) -> None:
        super().__init__(code)
        self.code = code


def fast_args(args: list[str]) -> dict[str, object] | None:
    """The keyword arguments of ``args`` when they are ``analyze`` or ``check`` then paths and at most
    one each of ``-f/--format X`` and ``-o/--output X`` in any order, every path and value plain
    (not starting with ``-`` unless exactly ``-``); None for anything else."""
    if (
        not args
        or args[0] not in _FAST_COMMANDS
        or any(k.startswith(("_LOGDOCTOR_COMPLETE", "_TYPER_COMPLETE")) for k in os.environ)
    ):
        return None
    paths: list[str] = []
    given: dict[str, str] = {}
    rest = iter(args[1:])
    for arg in rest:
        if arg in _FAST_OPTIONS:
            value = next(rest, None)
            key = _FAST_OPTIONS[arg]
            if value is None or not _plain(value) or key in given:
                return None
            given[key] = value
        elif _plain(arg):
            paths.append(arg)
        else:
            return None
    if not paths:
        return None
    return {"paths": paths, "fmt": given.get("fmt", "text"), "output": given.get("output", "-")}


def _plain(arg: str) -> bool:
    return arg == "-" or not arg.startswith("-")


def fast(argv: list[str] | None) -> int | None:
    """Run ``argv`` (default ``sys.argv[1:]``) here when ``fast_args`` reads it; None: ask typer."""
    args = sys.argv[1:] if argv is None else argv
    kwargs = fast_args(args)
    if kwargs is None:
        return None
    prepare()
    command = analyze if args[0] == "analyze" else check
    return guard(lambda: command(**kwargs), argv)  # type: ignore[arg-type]


def prepare() -> None:
    if os.environ.get("NO_COLOR"):
        os.environ.setdefault("TERM", "dumb")


def guard(call: Callable[[], object], argv: list[str] | None) -> int:
    """Run a command: its errors as one line and an exit code (see ``main`` in logdoctor.cli)."""
    args = sys.argv[1:] if argv is None else argv
    if any("://" in a or "?" in a for a in args):  # URLs: their secrets are redacted wherever quoted
        from logdoctor import sanitize

        sanitize.learn(args)
    try:
        rv = call()
        flush_stdout()  # here, where a full disk is an error, not at exit where it is a traceback
    except Done as done:
        return exit_with(done.code, argv)
    except LogdoctorError as err:
        say(f"logdoctor: error: {err}")
        return exit_with(ExitCode.BAD_INPUT, argv)
    except KeyboardInterrupt:
        say("logdoctor: interrupted")
        return exit_with(130, argv)
    except SystemExit as ex:  # click turns a closed stdout (EPIPE) into a silent exit 1
        if not isinstance(ex.__context__, BrokenPipeError):
            raise
        return closed_pipe(argv)
    except BrokenPipeError:
        return closed_pipe(argv)
    except OSError as err:  # an output the renderers write as they go (tail, echo) failed: ENOSPC, EBADF, EIO
        drop_stdout()
        say(f"logdoctor: error: cannot write output ({err.strerror or err})")
        return exit_with(ExitCode.BAD_INPUT, argv)
    return exit_with(int(rv) if isinstance(rv, int) else ExitCode.OK, argv)


def analyze(
    paths: list[str],
    fmt: str = "text",
    output: str = "-",
    field_map: list[str] | None = None,
    steps_per_epoch: int | None = None,
    verbose: int = 0,
    quiet: bool = False,
    reports: bool = False,
    plot: str | None = None,
    jobs: int | None = None,
    config: str | None = None,
    select: list[str] | None = None,
    ignore: list[str] | None = None,
    max_memory: str | None = None,
    stride: str | None = None,
    executor: str | None = None,
) -> int:
    """The ``analyze`` command (its options are documented in logdoctor.cli)."""
    from logdoctor import pipeline
    from logdoctor.renderers import get_renderer
    from logdoctor.renderers.output import write_output

    get_renderer(fmt)
    cfg = make_config(config, field_map, steps_per_epoch, select, ignore, max_memory=max_memory, stride=stride)
    if is_fleet(paths, executor):
        results = run_fleet(paths, cfg, jobs, executor, fmt, output)
        return worst(ExitCode.BAD_INPUT if r.error else ExitCode.OK for r in results)
    outcomes = emit(pipeline.analyze_paths(paths, cfg, jobs), fmt, -1 if quiet else verbose, output, paths, reports)
    done = [o.report for o in outcomes if o.report]
    if plot and done:
        from logdoctor.renderers.plots import plot_renderer_for  # plot code only when a plot is asked for

        write_output(plot_renderer_for(plot)().render_many(done), plot, inputs=paths)
    return worst(ExitCode.BAD_INPUT if o.error else ExitCode.OK for o in outcomes)


def check(
    paths: list[str],
    fmt: str = "text",
    output: str = "-",
    fail_on: str | None = None,
    select: list[str] | None = None,
    ignore: list[str] | None = None,
    exit_zero: bool = False,
    jobs: int | None = None,
    config: str | None = None,
    field_map: list[str] | None = None,
    steps_per_epoch: int | None = None,
    verbose: int = 0,
    quiet: bool = False,
    reports: bool = False,
    max_memory: str | None = None,
    stride: str | None = None,
    runs: str = "all",
    executor: str | None = None,
) -> int:
    """The ``check`` command (its options are documented in logdoctor.cli)."""
    from logdoctor import pipeline
    from logdoctor.exitcodes import RUNS_CHOICES
    from logdoctor.renderers import get_renderer

    get_renderer(fmt)
    if runs not in RUNS_CHOICES:
        raise ConfigError(f"--runs: expected one of {', '.join(RUNS_CHOICES)}, got {runs!r}")
    cfg = make_config(config, field_map, steps_per_epoch, select, ignore, fail_on, max_memory, stride)
    cfg = dataclasses.replace(cfg, runs=runs)
    if is_fleet(paths, executor):
        code = worst(ExitCode(r.exit_code) for r in run_fleet(paths, cfg, jobs, executor, fmt, output))
        return ExitCode.OK if exit_zero and code == ExitCode.FINDINGS else code
    outcomes = emit(pipeline.analyze_paths(paths, cfg, jobs), fmt, -1 if quiet else verbose, output, paths, reports)
    code = worst(ExitCode(o.exit_code) for o in outcomes)
    return ExitCode.OK if exit_zero and code == ExitCode.FINDINGS else code


def is_fleet(paths: list[str], executor: str | None) -> bool:
    """The fleet report is asked for (``--executor``), or an input is a fleet address."""
    from logdoctor.ingest.fleet import is_fleet

    return executor is not None or any(is_fleet(p) for p in paths)


def run_fleet(
    paths: list[str], cfg: AnalysisConfig, jobs: int | None, executor: str | None, fmt: str, output: str
) -> list[RunResult]:
    """Analyse a fleet and write its report; errors and skipped files to stderr. Returns the runs
    that count (the skipped ones left out)."""
    from logdoctor.executors import analyze_fleet
    from logdoctor.renderers import fleet
    from logdoctor.renderers.output import write_output

    if fmt not in ("text", "json", "html"):
        raise ConfigError(f"--format: a fleet report is text, json or html, got {fmt!r}")
    pages = fleet.PageWriter(output, inputs=paths) if fmt == "html" else None  # checked before any work
    progress = fleet_progress()

    def done(index: int, result: RunResult) -> RunResult | None:
        if progress is not None:
            progress(index, result)
        return pages.page(index, result) if pages is not None else None

    results = analyze_fleet(paths, cfg, jobs, executor or "local", html=fmt == "html", done=done)
    for r in results:
        if r.error:
            say(
                f"logdoctor: note: skipped {r.error} (found in a directory)"
                if r.skipped
                else f"logdoctor: error: {r.error}"
            )
    if pages is not None:
        pages.index(results)
    results = [r for r in results if not r.skipped]
    if pages is None:
        write_output(
            (fleet.render_fleet_json if fmt == "json" else fleet.render_fleet_text)(results), output, inputs=paths
        )
    return results


def fleet_progress() -> Callable[[int, RunResult], None] | None:
    """On a terminal, a line on stderr counting the runs as they finish (cleared at the end)."""
    if not (sys.stderr is not None and sys.stderr.isatty()):
        return None
    lock, count = threading.Lock(), [0]

    def done(index: int, result: RunResult) -> None:
        with lock:
            count[0] += 1
            with contextlib.suppress(OSError, ValueError):
                sys.stderr.write(f"\rlogdoctor: {count[0]} runs analysed\x1b[K")
                sys.stderr.flush()

    return done


def make_config(
    config: str | None,
    field_map: list[str] | None,
    spe: int | None,
    select: list[str] | None,
    ignore: list[str] | None,
    fail_on: str | None = None,
    max_memory: str | None = None,
    stride: str | None = None,
) -> AnalysisConfig:
    """The command's AnalysisConfig (``configfile.from_options``, as the Python API builds its own);
    a config file passed over is a note on stderr."""
    from logdoctor import configfile

    startup.done()  # every command that reads a log passes here once its modules are loaded
    return configfile.from_options(
        config,
        field_map,
        spe,
        select,
        ignore,
        fail_on,
        max_memory,
        stride,
        note=lambda text: say(f"logdoctor: note: {text}"),
    )


def emit(
    outcomes: list[Outcome], fmt: str, verbosity: int, output: str, paths: list[str], per_run: bool
) -> list[Outcome]:
    """Errors and skipped files to stderr; the reports (and the summary for several inputs) to
    ``output``. Returns the outcomes that count (the skipped ones left out)."""
    from logdoctor.renderers import get_renderer
    from logdoctor.renderers.output import write_output

    for o in outcomes:
        if o.skipped:
            say(f"logdoctor: note: skipped {o.error} (found in a directory)")
    outcomes = [o for o in outcomes if not o.skipped]
    for o in outcomes:
        if o.error:
            say(f"logdoctor: error: {o.error}")
    cls = get_renderer(fmt)
    if len(outcomes) > 1 or any(o.report for o in outcomes) or cls.documents_errors:
        renderer = cls(verbosity=verbosity, color=None if output == "-" else False, per_run=per_run)
        write_output(renderer.render_outcomes(outcomes), output, inputs=paths)
    return outcomes


def closed_pipe(argv: list[str] | None) -> int:
    """The reader went away (`logdoctor check run.log | head`): the output was cut short, and a gate
    whose report nobody read in full must not pass, so exit 2 (one line, no traceback)."""
    drop_stdout()
    say("logdoctor: error: stdout: the reader closed the pipe (output cut short)")
    return exit_with(ExitCode.BAD_INPUT, argv)


def flush_stdout() -> None:
    if sys.stdout is not None:
        sys.stdout.flush()


def drop_stdout() -> None:
    """What is still buffered for stdout goes nowhere: the interpreter's flush at exit would fail
    again and print a traceback."""
    from logdoctor.renderers.output import discard_into

    if sys.stdout is not None:
        with contextlib.suppress(ValueError, OSError):
            discard_into(sys.stdout.fileno())


def say(line: str) -> None:
    """One line to stderr, with what the user's inputs wrote in it shown, not obeyed
    (``sanitize.terminal``, which also leaves no escape sequence for click's ``echo`` to strip, so
    this writes what it wrote); a stderr that cannot be written to (`2>/dev/full`) loses it quietly."""
    from logdoctor import sanitize  # only when there is a line to say (a JSON report needs no html module)

    try:
        if sys.stderr is not None:
            sys.stderr.write(sanitize.terminal(line) + "\n")
            sys.stderr.flush()
    except (OSError, ValueError):
        if sys.stderr is not None:
            with contextlib.suppress(ValueError, OSError):
                from logdoctor.renderers.output import discard_into

                discard_into(sys.stderr.fileno())


def exit_with(code: int, argv: list[str] | None) -> int:
    if argv is None:  # called as the console script
        # Python's last collection at exit walks every object the run made (~0.1 s after a big
        # log); frozen, they are left to the process's end, which frees all memory anyway
        gc.freeze()
        sys.exit(code)
    return code
