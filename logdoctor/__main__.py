"""Entry point for ``python -m logdoctor``."""

from __future__ import annotations

if __name__ == "__main__":
    from logdoctor import startup

    startup.begin()  # before the imports below (see logdoctor.startup)

from logdoctor.cli import main

if __name__ == "__main__":
    main()
