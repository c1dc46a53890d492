"""Run the real Claude Code CLI once, offline, against the scripted fake API in ``fakeapi.py``.

    from claude_run import claude_bin, run_claude, SAMPLE_RUN

    if claude_bin() is None: pytest.skip(SKIP_REASON)
    res = run_claude([{"content": [{"type": "text", "text": "hi"}]}], "/trainwreck:diagnose runs/exp1",
                     plugin_dir=REPO)
    res.rc, res.main_requests[0]["body"], res.init["skills"], res.result_text, res.hook_events

The CLI is the one bundled with ``claude-agent-sdk`` for the running interpreter
(``CLAUDE_BIN`` overrides it). Each run is isolated: a fresh HOME, TMPDIR and
CLAUDE_CODE_TMPDIR under a new run directory, the fake API on 127.0.0.1, a fake key,
telemetry / updater / nonessential traffic / retries off, and a hard timeout that
kills the CLI's whole process group. Nothing is read from or written to the real HOME.

Run directory layout (``Result.run_dir``)::

    home/        HOME (transcripts under home/.claude/projects/...)
    work/        the CLI's cwd (``Result.workdir``), holding ``workdir_files``
    tmp/         TMPDIR and CLAUDE_CODE_TMPDIR
    debug/       cli-debug.log
    requests.jsonl stream.jsonl cli.stderr

Run directories are removed when the interpreter exits unless ``TW_E2E_KEEP=1``,
or when the caller passes its own ``run_dir`` (e.g. pytest's ``tmp_path``).
"""
from __future__ import annotations

import atexit
import importlib.util
import json
import os
import shutil
import signal
import subprocess
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

try:  # imported as part of a package
    from . import fakeapi
except ImportError:  # imported with tests/e2e on sys.path
    import sys

    sys.path.insert(0, str(Path(__file__).resolve().parent))
    import fakeapi  # noqa: E402

__all__ = ["SAMPLE_RUN", "SKIP_REASON", "Result", "claude_bin", "cli_command", "isolated_env", "run_claude",
           "tool_results", "tool_uses"]

#: The small failed run the shared harness also puts in the CLI's cwd (used when workdir_files is None).
SAMPLE_RUN = {
    "runs/exp1/train.log": "step 100 loss=2.31 lr=3.0\nstep 110 loss=7.94 lr=3.0\nstep 120 loss=nan lr=3.0\n",
}

SKIP_REASON = ("the Claude Code CLI is not available: install claude-agent-sdk into this interpreter "
               "(it bundles the CLI as claude_agent_sdk/_bundled/claude) or set CLAUDE_BIN")

# Never passed to the CLI: a real account or session must not leak into a test run.
_UNSET = ("ANTHROPIC_AUTH_TOKEN", "ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL", "CLAUDE_CONFIG_DIR",
          "CLAUDE_CODE_USE_BEDROCK", "CLAUDE_CODE_USE_VERTEX", "CLAUDECODE", "CLAUDE_CODE_ENTRYPOINT",
          "CLAUDE_CODE_OAUTH_TOKEN", "CLAUDE_PLUGIN_ROOT", "CLAUDE_PLUGIN_DATA", "CLAUDE_PROJECT_DIR")
_to_remove: list = []


def claude_bin() -> "str | None":
    """Path of the CLI bundled in this interpreter's claude_agent_sdk (or $CLAUDE_BIN), else None."""
    override = os.environ.get("CLAUDE_BIN")
    if override:
        return override if os.path.isfile(override) and os.access(override, os.X_OK) else None
    try:
        spec = importlib.util.find_spec("claude_agent_sdk")
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.origin:
        return None
    path = os.path.join(os.path.dirname(spec.origin), "_bundled", "claude")
    return path if os.path.isfile(path) and os.access(path, os.X_OK) else None


@dataclass
class Result:
    rc: int
    requests: list                      # every request the fake API recorded (dicts with kind, body, ...)
    main_requests: list                 # those with kind == "main" (they carry tools; each took a turn)
    stream: list                        # stream-json events the CLI printed
    init: dict                          # the system/init event ({} when none came)
    result_text: "str | None"           # the final result event's "result" (None when none came)
    home: str                           # the HOME the CLI ran with
    workdir: str                        # the CLI's cwd
    hook_events: list                   # system/hook_* events (needs --include-hook-events, always passed)
    run_dir: str = ""
    stderr: str = ""
    seconds: float = 0.0
    timed_out: bool = False
    unserved_turns: list = field(default_factory=list)   # indexes of scripted turns never served
    argv: list = field(default_factory=list)

    @property
    def result(self) -> dict:
        """The final ``result`` event ({} when none came)."""
        return next((e for e in reversed(self.stream) if e.get("type") == "result"), {})

    @property
    def expect_failures(self) -> list:
        """Requests whose turn had an ``expect`` substring the request did not contain."""
        return [r for r in self.requests if r.get("expect") is not None and not r.get("expect_ok")]

    def body_text(self, index: int = 0) -> str:
        """JSON text of main request ``index``'s messages (where skills, agents and hook output appear)."""
        if not self.main_requests or index >= len(self.main_requests) or index < -len(self.main_requests):
            return ""
        return json.dumps(self.main_requests[index]["body"].get("messages"), ensure_ascii=False)

    def describe(self) -> str:
        """A short account for assertion messages."""
        lines = [f"rc={self.rc} timed_out={self.timed_out} seconds={self.seconds:.1f} "
                 f"requests={len(self.requests)} main={len(self.main_requests)} unserved={self.unserved_turns}",
                 f"run_dir={self.run_dir}", f"result={str(self.result_text)[:300]!r}"]
        if self.stderr.strip():
            lines.append("stderr: " + self.stderr.strip()[-800:])
        return "\n".join(lines)


def tool_uses(stream: list, name: "str | None" = None) -> list:
    """tool_use blocks the model sent, as the CLI echoed them in stream-json (optionally one tool)."""
    out = []
    for ev in stream:
        if ev.get("type") == "assistant":
            for block in ev.get("message", {}).get("content") or []:
                if isinstance(block, dict) and block.get("type") == "tool_use":
                    if name is None or block.get("name") == name:
                        out.append(block)
    return out


def tool_results(stream: list, name: "str | None" = None) -> list:
    """tool_result blocks that went back to the model, with ``text`` (the flattened content) added."""
    names = {b.get("id"): b.get("name") for b in tool_uses(stream)}
    out = []
    for ev in stream:
        if ev.get("type") != "user":
            continue
        content = ev.get("message", {}).get("content")
        for block in content if isinstance(content, list) else []:
            if not isinstance(block, dict) or block.get("type") != "tool_result":
                continue
            if name is not None and names.get(block.get("tool_use_id")) != name:
                continue
            inner = block.get("content")
            if isinstance(inner, list):
                text = "\n".join(x.get("text", "") for x in inner if isinstance(x, dict))
            else:
                text = str(inner or "")
            out.append(dict(block, text=text, tool_name=names.get(block.get("tool_use_id"))))
    return out


def _cleanup() -> None:
    if os.environ.get("TW_E2E_KEEP"):
        return
    for path in _to_remove:
        shutil.rmtree(path, ignore_errors=True)


atexit.register(_cleanup)


def _write_files(root: Path, files: dict) -> None:
    for rel, content in files.items():
        rel_path = Path(rel)
        if rel_path.is_absolute() or ".." in rel_path.parts:
            raise ValueError(f"workdir_files paths must stay inside the workdir: {rel!r}")
        target = root / rel_path
        target.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            target.write_bytes(content)
        else:
            target.write_text(content, encoding="utf-8")


def _read_jsonl(text: str) -> list:
    out = []
    for line in text.splitlines():
        line = line.strip()
        if not line.startswith("{"):
            continue
        try:
            out.append(json.loads(line))
        except ValueError:
            continue
    return out


def _kill_group(proc: subprocess.Popen) -> None:
    try:
        os.killpg(proc.pid, signal.SIGTERM)
    except (ProcessLookupError, PermissionError):
        return
    try:
        proc.wait(timeout=5)
    except subprocess.TimeoutExpired:
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        proc.wait(timeout=5)


def isolated_env(home, tmp=None, extra=None) -> dict:
    """The environment for an isolated CLI run: this process's environment minus the variables that would
    leak a real account or session, with HOME/TMPDIR pointed at ``home``/``tmp`` and nonessential traffic off."""
    env = {k: v for k, v in os.environ.items() if k not in _UNSET}
    tmp = str(tmp or home)
    env.update({
        "HOME": str(home), "TMPDIR": tmp, "CLAUDE_CODE_TMPDIR": tmp,
        "DISABLE_TELEMETRY": "1", "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
        "DISABLE_AUTOUPDATER": "1", "DISABLE_ERROR_REPORTING": "1", "CLAUDE_CODE_MAX_RETRIES": "0",
    })
    env.update(extra or {})
    return env


def cli_command(args, *, cwd=None, timeout: float = 60) -> subprocess.CompletedProcess:
    """Run ``claude ARGS`` (no model needed: ``plugin validate``, ``plugin details``, ``--version``) with a
    fresh temporary HOME; returns the CompletedProcess (text). Raises RuntimeError when there is no CLI."""
    cli = claude_bin()
    if cli is None:
        raise RuntimeError(SKIP_REASON)
    home = tempfile.mkdtemp(prefix="tw-cli-home-")
    try:
        return subprocess.run([cli, *args], cwd=str(cwd or home), env=isolated_env(home), stdin=subprocess.DEVNULL,
                              capture_output=True, text=True, timeout=timeout)
    finally:
        shutil.rmtree(home, ignore_errors=True)


def run_claude(turns, prompt: str, *, plugin_dir, workdir_files=None, extra_args=(), timeout: float = 120,
               run_dir=None, env=None, permission_args=None) -> Result:
    """Run ``claude -p PROMPT --plugin-dir PLUGIN_DIR`` once against a fake API serving ``turns``.

    turns          a list of turns, or a script dict {turns, exhausted, side} (see fakeapi.py)
    workdir_files  {relative path: str|bytes} written into the CLI's cwd; None writes SAMPLE_RUN, {} nothing
    extra_args     more CLI arguments, appended last
    timeout        seconds before the CLI's process group is killed (then rc is 124 and timed_out is True)
    run_dir        where to put home/, work/, tmp/ and the logs (default: a new temp dir, removed at exit)
    env            extra environment variables for the CLI (applied last)
    permission_args  replaces the default ``--permission-mode dontAsk --allowedTools "Bash Read"``
    Raises RuntimeError when there is no CLI (callers should check claude_bin() and skip first).
    """
    cli = claude_bin()
    if cli is None:
        raise RuntimeError(SKIP_REASON)
    if run_dir is None:
        run_dir = tempfile.mkdtemp(prefix="tw-e2e-")
        _to_remove.append(run_dir)
    run = Path(run_dir).resolve()
    home, work, tmp, debug = run / "home", run / "work", run / "tmp", run / "debug"
    for d in (home, work, tmp, debug):
        d.mkdir(parents=True, exist_ok=True)
    _write_files(work, SAMPLE_RUN if workdir_files is None else workdir_files)

    fake = fakeapi.FakeAnthropic(turns, log_path=str(run / "requests.jsonl"), lifetime=timeout + 60)
    fake.start()
    child_env = isolated_env(home, tmp, {"ANTHROPIC_BASE_URL": fake.base_url,
                                         "ANTHROPIC_API_KEY": "sk-ant-fake-key", **(env or {})})
    perms = list(permission_args) if permission_args is not None else [
        "--permission-mode", "dontAsk", "--allowedTools", "Bash Read"]
    argv = [cli, "-p", prompt, "--plugin-dir", str(Path(plugin_dir).resolve()), *perms,
            "--output-format", "stream-json", "--verbose", "--include-hook-events",
            "--debug-file", str(debug / "cli-debug.log"), *extra_args]

    started = time.monotonic()
    timed_out = False
    try:
        proc = subprocess.Popen(argv, cwd=str(work), env=child_env, stdin=subprocess.DEVNULL,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True)
        try:
            out, err = proc.communicate(timeout=timeout)
            rc = proc.returncode
        except subprocess.TimeoutExpired:
            timed_out = True
            _kill_group(proc)
            out, err = proc.communicate()
            rc = 124
    finally:
        fake.stop()
    seconds = time.monotonic() - started
    stdout = out.decode("utf-8", "replace")
    stderr = err.decode("utf-8", "replace")
    (run / "stream.jsonl").write_text(stdout, encoding="utf-8")
    (run / "cli.stderr").write_text(stderr, encoding="utf-8")

    stream = _read_jsonl(stdout)
    init = next((e for e in stream if e.get("type") == "system" and e.get("subtype") == "init"), {})
    final = next((e for e in reversed(stream) if e.get("type") == "result"), None)
    hooks = [e for e in stream if e.get("type") == "system" and str(e.get("subtype", "")).startswith("hook_")]
    requests = list(fake.requests)
    return Result(
        rc=rc, requests=requests, main_requests=[r for r in requests if r.get("kind") == "main"],
        stream=stream, init=init, result_text=final.get("result") if final else None,
        home=str(home), workdir=str(work), hook_events=hooks, run_dir=str(run), stderr=stderr,
        seconds=seconds, timed_out=timed_out, unserved_turns=fake.unserved, argv=argv,
    )
