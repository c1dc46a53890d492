"""Every parser's fuzz target survives a few hundred mutated inputs (the full fuzzing runs via fuzz/run.py)."""
import os
import sys

import pytest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "fuzz"))
from run import loop  # noqa: E402
from targets import TARGETS  # noqa: E402


@pytest.mark.parametrize("name", sorted(TARGETS))
def test_fuzz_target_survives(name):
    n = 60 if name == "run_dir" else 400
    assert loop(name, n, seed=1) == n
