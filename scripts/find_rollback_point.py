#!/usr/bin/env python3
"""trainwreck rollback: Last complete checkpoint before the onset of a loss spike or NaN.

Runs with the system python3 and no install: the repository root (the parent of scripts/)
goes first on sys.path, then `trainwreck rollback` runs with this script's arguments.
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.realpath(__file__))))

from trainwreck.cli import main  # noqa: E402

if __name__ == "__main__":
    sys.exit(main(["rollback", *sys.argv[1:]]))
