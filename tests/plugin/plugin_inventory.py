"""What the plugin ships, for the plugin tests.

Also puts the e2e harness (tests/e2e) on sys.path and re-exports it as ``claude_run``. (No conftest.py
here on purpose: a second module named ``conftest`` would shadow tests/conftest.py for the tests
that do ``from conftest import ...``.)
"""
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
if str(REPO / "tests" / "e2e") not in sys.path:
    sys.path.insert(0, str(REPO / "tests" / "e2e"))

import claude_run  # noqa: E402, F401  (re-exported for the test modules)

SKILLS = ["diagnose", "debug", "failure-agent", "diagnose-failed-run", "init-loss-check", "overfit-single-batch",
          "grad-flow", "loss-spike-rollback", "activation-recompute"]
AGENTS = ["failure-diagnoser", "root-cause-validator"]
SCRIPTS = {"collect_failure_context.py": "collect", "summarize_traceback.py": "traceback",
           "analyze_loss_curve.py": "curve", "diagnose_run.py": "diagnose", "check_init_loss.py": "init-loss",
           "find_rollback_point.py": "rollback"}


def frontmatter(path):
    """(metadata dict, body) of a SKILL.md or agent file; flat `key: value` frontmatter only."""
    text = Path(path).read_text(encoding="utf-8")
    assert text.startswith("---\n"), f"{path}: no frontmatter"
    head, body = text[4:].split("\n---\n", 1)
    meta = {}
    for line in head.splitlines():
        key, _, value = line.partition(":")
        meta[key.strip()] = value.strip().strip('"')
    return meta, body

