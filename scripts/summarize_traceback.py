#!/usr/bin/env python3
"""trainwreck traceback: Root exception, first failing rank and truncation of the traceback in a log (PATH or - for stdin).

Runs with the system python3 and no install: the repository root (the parent of scripts/)
goes first on sys.path, then `trainwreck traceback` runs with this script's arguments.
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.realpath(__file__))))

from trainwreck.cli import main  # noqa: E402

if __name__ == "__main__":
    sys.exit(main(["traceback", *sys.argv[1:]]))
