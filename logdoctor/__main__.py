"""Entry point for ``python -m logdoctor`` and the ``logdoctor`` console script.

``analyze`` and ``check`` with plain arguments run here without importing typer (``clirun.fast``), and the
collector is off while the command's modules load (``startup``); anything else goes to the typer
app in logdoctor.cli. Every command but ``tail`` keeps the memory it frees for reuse
(logdoctor.allocator).
"""

from __future__ import annotations

import sys


def main() -> int:
    """Run the command line of this process (``sys.argv``); exits with its code."""
    from logdoctor import startup

    startup.begin()  # before any import below (see logdoctor.startup)
    if _command(sys.argv[1:]) != "tail":
        from logdoctor import allocator

        allocator.keep_freed_memory()
    from logdoctor import clirun

    rv = clirun.fast(None)
    if rv is not None:
        return rv
    from logdoctor.cli import main as typer_main

    return typer_main()


def _command(argv: list[str]) -> str | None:
    """The subcommand named by ``argv`` (its first word that is not an option), if any."""
    return next((a for a in argv if not a.startswith("-")), None)


if __name__ == "__main__":
    main()
