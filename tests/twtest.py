"""Shared test helpers (a uniquely named module: a nested conftest.py would shadow a plain `import conftest`)."""
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
EXAMPLES = os.path.join(ROOT, "examples", "runs")


def run_cli(*args, cwd=None, stdin=None, timeout=120):
    """Run the real CLI as a user would: a fresh interpreter, `python -m trainwreck`."""
    env = dict(os.environ, PYTHONPATH=ROOT)
    return subprocess.run([sys.executable, "-m", "trainwreck", *args], capture_output=True, text=True,
                          cwd=cwd or ROOT, input=stdin, timeout=timeout, env=env)


def diagnose_text(run_dir, name, text):
    """Write one file `name` holding `text` into the run folder and return the diagnosis JSON (engine in-process,
    no probe)."""
    from trainwreck.pipeline import diagnose
    with open(os.path.join(str(run_dir), name), "w", encoding="utf-8") as f:
        f.write(text)
    return diagnose(str(run_dir), probe=False).diagnosis.to_json()
