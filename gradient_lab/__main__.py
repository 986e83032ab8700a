"""`python -m gradient_lab`: the same as the `gradient-lab` command (cli.py)."""

from __future__ import annotations

import sys

from gradient_lab.cli import main

if __name__ == "__main__":
    sys.exit(main())
