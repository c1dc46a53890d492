#!/usr/bin/env python3
"""trainwreck init-loss: First logged loss against the expected initial loss, e.g. ln(vocab) for cross-entropy.

Runs with the system python3 and no install: the repository root (the parent of scripts/)
goes first on sys.path, then `trainwreck init-loss` runs with this script's arguments.
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.realpath(__file__))))

from trainwreck.cli import main  # noqa: E402

if __name__ == "__main__":
    sys.exit(main(["init-loss", *sys.argv[1:]]))
