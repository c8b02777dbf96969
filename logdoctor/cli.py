"""The command line: parse options, call the pipeline, pick a renderer, return an exit code."""

from __future__ import annotations

import copy
import io
import sys
from pathlib import Path
from typing import Annotated

import typer

from logdoctor import __version__, clicoerce, clirun, startup
from logdoctor.errors import ConfigError
from logdoctor.exitcodes import ExitCode
from logdoctor.model import Severity

clicoerce.install()  # typer's coercion without pydantic where values need none (~70 ms per command)

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
StrideOpt = Annotated[
    str | None,
    typer.Option("--stride", metavar="N", help="Optimizer steps per row, for logs whose rows carry no step."),
]
MemOpt = Annotated[
    str | None,
    typer.Option("--max-memory", help="Memory budget of ingest, e.g. 4G (default: half the free memory)."),
]
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


PathsArg = Annotated[list[str], typer.Argument(help="Training logs: files, globs, directories, or - for stdin.")]
#: the ``--format`` names of ``renderers.RENDERERS`` (spelled out so that ``--help`` imports no renderer,
#: numpy or polars; a test checks they agree)
FORMAT_NAMES = ("text", "json", "markdown", "github", "junit", "png", "svg", "pdf", "html")
FmtOpt = Annotated[str, typer.Option("--format", "-f", help=f"Output: {', '.join(FORMAT_NAMES)}.")]
VerboseOpt = Annotated[int, typer.Option("--verbose", "-v", count=True, help="Per-finding detail.")]
QuietOpt = Annotated[bool, typer.Option("--quiet", "-q", help="Print only the verdict line.")]
ReportsOpt = Annotated[
    bool, typer.Option("--reports", help="With several inputs, print each run's report above the summary.")
]
JobsOpt = Annotated[
    int | None,
    typer.Option(
        "--jobs", "-j", min=1, help="Parallel processes (default: one per 64 MiB of input, up to the idle cores)."
    ),
]
ExecOpt = Annotated[
    str | None,
    typer.Option(
        "--executor",
        help="Analyse each run as a task of: local, dask, ray, dask://ADDRESS or "
        "ray://HOST:PORT; prints the fleet report (-f text, json or html -o FOLDER).",
    ),
]
ConfigOpt = Annotated[
    str | None,
    typer.Option(
        "--config",
        help="Config file (default: nearest logdoctor.toml or [tool.logdoctor] in pyproject.toml).",
    ),
]
SelectOpt = Annotated[list[str] | None, typer.Option("--select", help="Only these codes, prefixes or rule names.")]
IgnoreOpt = Annotated[list[str] | None, typer.Option("--ignore", help="Drop these codes, prefixes or rule names.")]


@app.command()
def analyze(
    paths: PathsArg,
    fmt: FmtOpt = "text",
    output: OutOpt = "-",
    field_map: MapOpt = None,
    steps_per_epoch: SpeOpt = None,
    verbose: VerboseOpt = 0,
    quiet: QuietOpt = False,
    reports: ReportsOpt = False,
    plot: Annotated[str | None, typer.Option("--plot", help="Also draw the figure to FILE (.png/.svg/.pdf).")] = None,
    jobs: JobsOpt = None,
    config: ConfigOpt = None,
    select: SelectOpt = None,
    ignore: IgnoreOpt = None,
    max_memory: MemOpt = None,
    stride: StrideOpt = None,
    executor: ExecOpt = None,
) -> int:
    """Analyse training logs and report what is wrong with each run, with evidence."""
    return clirun.analyze(
        paths,
        fmt,
        output,
        field_map,
        steps_per_epoch,
        verbose,
        quiet,
        reports,
        plot,
        jobs,
        config,
        select,
        ignore,
        max_memory,
        stride,
        executor,
    )


@app.command()
def check(
    paths: PathsArg,
    fmt: FmtOpt = "text",
    output: OutOpt = "-",
    fail_on: Annotated[str | None, typer.Option("--fail-on", help="info, warning or error (default warning).")] = None,
    select: SelectOpt = None,
    ignore: IgnoreOpt = None,
    exit_zero: Annotated[
        bool, typer.Option("--exit-zero", help="Exit 0 even with findings (input errors stay 2).")
    ] = False,
    jobs: JobsOpt = None,
    config: ConfigOpt = None,
    field_map: MapOpt = None,
    steps_per_epoch: SpeOpt = None,
    verbose: VerboseOpt = 0,
    quiet: QuietOpt = False,
    reports: ReportsOpt = False,
    max_memory: MemOpt = None,
    stride: StrideOpt = None,
    runs: Annotated[
        str, typer.Option("--runs", help="In a log of several appended runs, gate on all of them or only the last.")
    ] = "all",
    executor: ExecOpt = None,
) -> int:
    """CI gate: exit 0 when no finding is at or above --fail-on, 1 when one is, 2 on bad input."""
    return clirun.check(
        paths,
        fmt,
        output,
        fail_on,
        select,
        ignore,
        exit_zero,
        jobs,
        config,
        field_map,
        steps_per_epoch,
        verbose,
        quiet,
        reports,
        max_memory,
        stride,
        runs,
        executor,
    )


@app.command()
def plot(
    path: Annotated[str, typer.Argument(help="Training log (file, directory, or - for stdin).")],
    output: Annotated[str | None, typer.Option("--output", "-o", help="Image file (.png/.svg/.pdf).")] = None,
    field_map: MapOpt = None,
    steps_per_epoch: SpeOpt = None,
    config: ConfigOpt = None,
    max_memory: MemOpt = None,
) -> int:
    """Draw the diagnostic figure of one run (default: <log name>.png in the current directory)."""
    from logdoctor import pipeline
    from logdoctor.renderers.output import write_output
    from logdoctor.renderers.plots import plot_renderer_for

    dest = output or (Path(path).name.split(".")[0] or "logdoctor") + ".png"
    renderer = plot_renderer_for(dest)()
    cfg = clirun.make_config(config, field_map, steps_per_epoch, None, None, max_memory=max_memory)
    run = pipeline.load(
        path, fields=cfg.fields, steps_per_epoch=cfg.steps_per_epoch, max_memory=cfg.max_memory, stride=cfg.stride
    )
    report = pipeline.analyze(run, cfg)
    write_output(renderer.render(report), dest, inputs=[path])
    clirun.say(f"logdoctor: wrote {dest}")
    return ExitCode.OK


@app.command()
def buckets(
    lengths: Annotated[
        str, typer.Argument(help="Sequence lengths: text (one per line), CSV/JSONL/Parquet/Arrow, or -.")
    ],
    token_budget: Annotated[int, typer.Option("--token-budget", help="Padded tokens per batch (count x longest).")],
    n_buckets: Annotated[int | None, typer.Option("--buckets", help="Number of buckets K.")] = None,
    max_padding: Annotated[
        float | None,
        typer.Option(
            "--max-padding",
            help="Fewest buckets with at most this padding fraction (default 0.10).",
        ),
    ] = None,
    max_seq_len: Annotated[
        int | None, typer.Option("--max-seq-len", help="Truncate longer sequences (default: the budget).")
    ] = None,
    column: Annotated[str | None, typer.Option("--column", help="Length column.")] = None,
    fmt: Annotated[str, typer.Option("--format", "-f", help="Output: text or json.")] = "text",
    emit: Annotated[
        str | None, typer.Option("--emit", help="Print code instead: python (a PyTorch batch sampler).")
    ] = None,
    plot: Annotated[str | None, typer.Option("--plot", help="Also write a PNG to FILE.")] = None,
    seed: Annotated[int, typer.Option("--seed", help="Seed of the simulated shuffles.")] = 0,
    output: OutOpt = "-",
) -> int:
    """Recommend length buckets for token-budget batching; price them against random and sorted."""
    from logdoctor.buckets import read_lengths, recommend
    from logdoctor.buckets.console import render_text
    from logdoctor.buckets.report import render_json
    from logdoctor.buckets.sampler import render_sampler
    from logdoctor.renderers.output import write_output

    startup.done()  # the one command that reads input without clirun.make_config (see logdoctor.startup)
    if fmt not in ("text", "json") or emit not in (None, "python"):
        raise ConfigError(f"--format takes text or json, --emit python; got {fmt!r}, {emit!r}")
    values = read_lengths(lengths, column)
    plan = recommend(
        values, token_budget, buckets=n_buckets, max_padding=max_padding, max_seq_len=max_seq_len, seed=seed
    )
    render = render_sampler if emit else render_json if fmt == "json" else render_text
    text = render(plan)
    write_output(text, output, inputs=[lengths])
    if plot:
        from logdoctor.buckets.plot import render_png

        write_output(render_png(plan, values), plot, inputs=[lengths])
    return ExitCode.OK


@app.command()
def probe(
    target: Annotated[
        str,
        typer.Argument(
            help="path/to/train.py:function or package.module:function returning a DataLoader, a Sampler or "
            "BatchSampler (or (sampler, dataset)), an HF Trainer, a Lightning DataModule or index batches."
        ),
    ],
    arg: Annotated[
        list[str] | None, typer.Option("--arg", help="key=value for the function (Python literals).")
    ] = None,
    epochs: Annotated[int, typer.Option("--epochs", min=1, help="Epochs to walk.")] = 3,
    world_size: Annotated[int, typer.Option("--world-size", min=1, help="Ranks to simulate, as DDP builds them.")] = 1,
    grad_accum: Annotated[
        int | None,
        typer.Option("--grad-accum", min=1, help="Micro-batches per optimizer step (default: the Trainer's, else 1)."),
    ] = None,
    length_key: Annotated[
        str | None,
        typer.Option(
            "--length-key",
            help="Column or sample feature whose len() is the length (default input_ids); "
            "with --lengths, the file's length column.",
        ),
    ] = None,
    lengths: Annotated[str | None, typer.Option("--lengths", help="File of sample lengths, in index order.")] = None,
    batch_size: Annotated[
        int | None, typer.Option("--batch-size", min=1, help="Cut a sampler of single indices into batches of N.")
    ] = None,
    max_batches: Annotated[int, typer.Option("--max-batches", min=1, help="Stop after N batches.")] = 1_000_000,
    set_epoch: Annotated[
        bool, typer.Option("--set-epoch/--no-set-epoch", help="Call set_epoch before each epoch, as training loops do.")
    ] = True,
    seed: Annotated[int | None, typer.Option("--seed", help="Seed the global generators first.")] = None,
    fmt: Annotated[
        str, typer.Option("--format", "-f", help="Output: text, json, markdown, github, junit, html.")
    ] = "text",
    output: OutOpt = "-",
    fail_on: Annotated[str | None, typer.Option("--fail-on", help="info, warning or error (default warning).")] = None,
    select: SelectOpt = None,
    ignore: IgnoreOpt = None,
    exit_zero: Annotated[bool, typer.Option("--exit-zero", help="Exit 0 even with findings.")] = False,
    verbose: VerboseOpt = 0,
    quiet: QuietOpt = False,
    config: ConfigOpt = None,
) -> int:
    """Walk a training pipeline's sampler (batch indices only, no GPU) and diagnose it as `check` does."""
    from logdoctor import cliprobe
    from logdoctor.probing.api import ProbeOptions
    from logdoctor.probing.walk import Settings

    options = ProbeOptions(
        lengths, length_key, world_size, grad_accum, seed, Settings(epochs, max_batches, 1, set_epoch, batch_size)
    )
    return cliprobe.probe(target, arg, options, fmt, output, verbose, quiet, fail_on, select, ignore, exit_zero, config)


@app.command()
def compare(
    baseline: Annotated[str, typer.Argument(help="The run before the change (file, directory, or -).")],
    candidates: Annotated[list[str], typer.Argument(help="The run(s) after the change.")],
    fmt: Annotated[str, typer.Option("--format", "-f", help="Output: text, json, markdown, html.")] = "text",
    output: OutOpt = "-",
    plot: Annotated[str | None, typer.Option("--plot", help="Also draw both runs to FIG (.png/.svg/.pdf).")] = None,
    fail_on_regression: Annotated[
        bool,
        typer.Option("--fail-on-regression", help="Exit 1 on new warnings/errors or a worse loss at matched tokens."),
    ] = False,
    force: Annotated[
        bool, typer.Option("--force", help="Compare runs that do not look like the same experiment.")
    ] = False,
    jobs: JobsOpt = None,
    config: ConfigOpt = None,
    field_map: MapOpt = None,
    steps_per_epoch: SpeOpt = None,
) -> int:
    """Did the fix work, and what did it cost? Compare a baseline run with candidate runs."""
    from logdoctor.comparison import compare_paths
    from logdoctor.comparison.plot import plotter
    from logdoctor.comparison.views import renderer
    from logdoctor.renderers.output import write_output

    render, draw = renderer(fmt), plotter(plot) if plot else None
    cfg = clirun.make_config(config, field_map, steps_per_epoch, None, None)
    comparison = compare_paths(baseline, candidates, cfg, jobs, force=force)
    write_output(render(comparison), output, inputs=[baseline, *candidates])
    if plot and draw:
        write_output(draw(comparison), plot, inputs=[baseline, *candidates])
    return ExitCode.FINDINGS if fail_on_regression and comparison.regressed else ExitCode.OK


# --- formats / parse (ingest) -----------------------------------------------------------------
@app.command()
def formats() -> int:
    """List the log formats logdoctor reads and the field alias table."""
    from logdoctor.ingest.formats import formats_text

    typer.echo(formats_text(), nl=False)
    return ExitCode.OK


@app.command()
def parse(
    path: Annotated[str, typer.Argument(help="Training log (file, directory, or - for stdin).")],
    output: Annotated[str, typer.Option("--output", "-o", help="FILE.parquet|.csv|.jsonl or -.")] = "-",
    field_map: MapOpt = None,
    steps_per_epoch: SpeOpt = None,
    format_in: Annotated[
        str | None, typer.Option("--format-in", help="Force a parser (see `logdoctor formats`).")
    ] = None,
    table_fmt: Annotated[
        str | None, typer.Option("--table-format", help="parquet, csv or jsonl (default: by -o).")
    ] = None,
    config: ConfigOpt = None,
    stride: StrideOpt = None,
) -> int:
    """Write the normalised step table of a log, for your own notebooks."""
    from logdoctor import pipeline
    from logdoctor.renderers.output import write_output
    from logdoctor.renderers.tables import render_table, table_format

    fmt = table_format(output, table_fmt)
    cfg = clirun.make_config(config, field_map, steps_per_epoch, None, None, stride=stride)
    run = pipeline.load(path, fields=cfg.fields, steps_per_epoch=cfg.steps_per_epoch, fmt=format_in, stride=cfg.stride)
    write_output(render_table(run, fmt), output, inputs=[path])
    return ExitCode.OK


@app.command()
def tail(
    paths: Annotated[list[str] | None, typer.Argument(help="Log files, existing or not.")] = None,
    globs: Annotated[list[str] | None, typer.Option("--glob", help="Follow each file matching ('rank*.log').")] = None,
    fmt: Annotated[str, typer.Option("--format", "-f", help="auto, live, plain, jsonl.")] = "auto",
    from_end: Annotated[bool, typer.Option("--from-end/--from-start", help="Skip what the file holds now.")] = False,
    exit_on: Annotated[str | None, typer.Option("--exit-on", help="Exit 1 at the first warning/error finding.")] = None,
    on_finding: Annotated[
        str | None, typer.Option("--on-finding", help="Run CMD per finding, its JSON on stdin.")
    ] = None,
    poll_interval: Annotated[float, typer.Option("--poll-interval", min=0.01, help="Seconds between polls.")] = 0.5,
    heartbeat: Annotated[float, typer.Option("--heartbeat", min=0.1, help="Seconds between heartbeats.")] = 5.0,
    idle_timeout: Annotated[
        float | None, typer.Option("--idle-timeout", min=0, help="Stop after S s without data.")
    ] = None,
    max_seconds: Annotated[float | None, typer.Option("--max-seconds", min=0, help="Stop after S seconds.")] = None,
    poll: Annotated[bool, typer.Option("--poll", help="Poll even where inotify works.")] = False,
    field_map: MapOpt = None,
    steps_per_epoch: SpeOpt = None,
    config: ConfigOpt = None,
    select: SelectOpt = None,
    ignore: IgnoreOpt = None,
    server_interval: Annotated[
        float, typer.Option("--server-interval", min=0.5, help="Seconds between MLflow server polls.")
    ] = 10.0,
    stride: StrideOpt = None,
) -> int:
    """Follow a live training log and report findings the moment they appear (Ctrl-C stops)."""
    from logdoctor.tail.runner import TailOptions, follow
    from logdoctor.tail.session import SessionOptions
    from logdoctor.tail.views import stdout_renderer

    patterns = [*(paths or []), *(globs or [])]
    if not patterns:
        raise ConfigError("tail needs a log file or --glob PATTERN")
    if exit_on not in (None, "warning", "error"):
        raise ConfigError(f"--exit-on expects warning or error, got {exit_on!r}")
    cfg = clirun.make_config(config, field_map, steps_per_epoch, select, ignore, stride=stride)
    session = SessionOptions(
        fields=cfg.fields,
        steps_per_epoch=cfg.steps_per_epoch,
        select=cfg.select,
        ignore=cfg.ignore,
        options=cfg.options,
        stride=cfg.stride,
    )
    opts = TailOptions(
        patterns=tuple(patterns),
        from_end=from_end,
        poll_interval=poll_interval,
        heartbeat=heartbeat,
        idle_timeout=idle_timeout,
        max_seconds=max_seconds,
        exit_on=Severity.parse(exit_on) if exit_on else None,
        on_finding=on_finding,
        inotify=not poll,
        session=session,
        server_interval=server_interval,
    )
    return follow(opts, stdout_renderer(fmt, effects=bool(on_finding or exit_on)))


def _command_app(args: list[str]) -> typer.Typer:
    """The app with only the command that ``args`` name first, when they name one: typer builds
    every registered command's click parameters from its signature on each run (~40 ms for all of
    them), and a run uses one. Anything else (no command, an option first, an unknown name, whose
    error lists the commands) gets the whole app."""
    from typer.main import get_command_name

    def name(info: typer.models.CommandInfo) -> str:
        return info.name or get_command_name(info.callback.__name__ if info.callback else "")

    picked = [c for c in app.registered_commands if args and name(c) == args[0]]
    if len(picked) != 1:
        return app
    one = copy.copy(app)
    one.registered_commands = picked
    return one


def main(argv: list[str] | None = None) -> int:
    """Run the CLI; returns (and, as a script, exits with) the exit code. ``analyze`` and ``check`` with
    plain arguments run without typer (``clirun.fast``); everything else through the typer app."""
    if argv is None:  # a whole process (the console script): no collections while the command loads
        startup.begin()
    rv = clirun.fast(argv)
    if rv is not None:
        return rv
    clirun.prepare()

    def call() -> object:
        command_app = _command_app(sys.argv[1:] if argv is None else argv)
        try:
            return command_app(args=argv, prog_name="logdoctor", standalone_mode=False)
        except typer.Exit as ex:
            raise clirun.Done(ex.exit_code) from None
        except typer.TyperException as err:  # usage errors: bad option, missing argument
            show = getattr(err, "show", None)
            if callable(show):  # click's usage text quotes the arguments: said through our sanitiser
                buf = io.StringIO()
                show(file=buf)
                for line in buf.getvalue().splitlines():
                    clirun.say(line)
            else:
                clirun.say(f"logdoctor: error: {err}")
            raise clirun.Done(ExitCode.BAD_INPUT) from None
        except typer.Abort:
            clirun.say("logdoctor: interrupted")
            raise clirun.Done(130) from None

    return clirun.guard(call, argv)
