"""Entry point for ``python -m logdoctor`` and the ``logdoctor`` console script.

``analyze`` with plain arguments runs here without importing typer (``clirun.fast``), and the
collector is off while the command's modules load (``startup``); anything else goes to the typer
app in logdoctor.cli.
"""

from __future__ import annotations


def main() -> int:
    """Run the command line of this process (``sys.argv``); exits with its code."""
    from logdoctor import startup

    startup.begin()  # before any import below (see logdoctor.startup)
    from logdoctor import clirun

    rv = clirun.fast(None)
    if rv is not None:
        return rv
    from logdoctor.cli import main as typer_main

    return typer_main()


if __name__ == "__main__":
    main()
