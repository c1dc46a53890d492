#!/usr/bin/env bash
# The whole test suite on a fresh clone: makes its own venv (.venv, or $TW_VENV), installs the package with
# its test extras (claude-agent-sdk included, which bundles the real Claude Code CLI), runs ruff and pytest.
# Extra arguments go to pytest, e.g.  bash tests/run.sh -k redact
set -euo pipefail
cd "$(dirname "$0")/.."
VENV=${TW_VENV:-.venv}
if [ ! -x "$VENV/bin/python" ]; then
  python3 -m venv "$VENV"
fi
stamp=$(cat pyproject.toml | sha256sum | cut -c1-16)
if [ "$(cat "$VENV/.tw-stamp" 2>/dev/null)" != "$stamp" ]; then
  "$VENV/bin/python" -m pip install -q --disable-pip-version-check -e ".[test]"
  echo "$stamp" > "$VENV/.tw-stamp"
fi
"$VENV/bin/python" -m ruff check --quiet .
exec "$VENV/bin/python" -m pytest "$@"
