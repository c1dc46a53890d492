#!/usr/bin/env python3
"""trainwreck diagnose: Full diagnosis of a run: classification, causes with evidence, fixes, verification (--json, --md, --out DIR).

Runs with the system python3 and no install: the repository root (the parent of scripts/)
goes first on sys.path, then `trainwreck diagnose` runs with this script's arguments.
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.realpath(__file__))))

from trainwreck.cli import main  # noqa: E402

if __name__ == "__main__":
    sys.exit(main(["diagnose", *sys.argv[1:]]))
