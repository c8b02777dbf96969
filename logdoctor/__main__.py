"""Entry point for ``python -m logdoctor``."""

from __future__ import annotations

from logdoctor.cli import main

if __name__ == "__main__":
    main()
