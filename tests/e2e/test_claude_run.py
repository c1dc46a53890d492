"""The harness that runs the real Claude Code CLI (claude_run.py): isolation, timeouts, result parsing."""
import os

import claude_run
import pytest

needs_cli = pytest.mark.skipif(claude_run.claude_bin() is None, reason=claude_run.SKIP_REASON)
TOY = {".claude-plugin/plugin.json": '{"name": "toy", "version": "0.0.1", "description": "toy"}',
       "skills/hello/SKILL.md": "---\nname: hello\ndescription: Use when testing the harness.\n---\n\n"
                                "# hello TOY-MARKER\n\nArgs: $ARGUMENTS\n"}


def make_plugin(tmp_path):
    root = tmp_path / "plugin"
    for rel, text in TOY.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    return root


def test_claude_bin_honours_an_override(monkeypatch, tmp_path):
    monkeypatch.setenv("CLAUDE_BIN", str(tmp_path / "missing"))
    assert claude_run.claude_bin() is None
    exe = tmp_path / "claude"
    exe.write_text("#!/bin/sh\n")
    exe.chmod(0o755)
    monkeypatch.setenv("CLAUDE_BIN", str(exe))
    assert claude_run.claude_bin() == str(exe)


def test_isolated_env_drops_real_credentials(monkeypatch, tmp_path):
    monkeypatch.setenv("ANTHROPIC_AUTH_TOKEN", "real")
    monkeypatch.setenv("ANTHROPIC_API_KEY", "real")
    monkeypatch.setenv("CLAUDECODE", "1")
    env = claude_run.isolated_env(tmp_path)
    assert "ANTHROPIC_AUTH_TOKEN" not in env and "ANTHROPIC_API_KEY" not in env and "CLAUDECODE" not in env
    assert env["HOME"] == str(tmp_path) and env["CLAUDE_CODE_MAX_RETRIES"] == "0"


def test_workdir_files_must_stay_inside(tmp_path):
    with pytest.raises(ValueError):
        claude_run._write_files(tmp_path, {"../escape.txt": "x"})


@needs_cli
def test_run_is_isolated_and_parsed(tmp_path):
    plugin = make_plugin(tmp_path)
    turns = [{"content": [{"type": "tool_use", "name": "Bash",
                           "input": {"command": "cat runs/exp1/train.log; echo HOME=$HOME", "description": "x"}}]},
             {"expect": "loss=nan", "content": [{"type": "text", "text": "FINISHED"}]}]
    res = claude_run.run_claude(turns, "/toy:hello a b", plugin_dir=plugin, run_dir=tmp_path / "run")
    assert res.rc == 0 and not res.timed_out, res.describe()
    assert res.result_text == "FINISHED" and res.result.get("subtype") == "success"
    assert res.init.get("subtype") == "init" and "toy:hello" in res.init["skills"]
    assert len(res.main_requests) == 2 and res.unserved_turns == [] and res.expect_failures == []
    assert "TOY-MARKER" in res.body_text(0) and "Args: a b" in res.body_text(0)
    out = claude_run.tool_results(res.stream, "Bash")[0]["text"]
    assert "step 120 loss=nan" in out and f"HOME={res.home}" in out
    assert res.home.startswith(str(tmp_path)) and os.path.isdir(res.workdir)
    assert (tmp_path / "run" / "requests.jsonl").is_file() and (tmp_path / "run" / "stream.jsonl").is_file()
    assert all(r["headers"].get("x-api-key", "").endswith("...") for r in res.main_requests)


@needs_cli
def test_timeout_kills_the_cli(tmp_path):
    plugin = make_plugin(tmp_path)
    res = claude_run.run_claude([{"content": [{"type": "text", "text": "x"}]}], "hi", plugin_dir=plugin,
                                timeout=0.05, run_dir=tmp_path / "run")
    assert res.timed_out and res.rc == 124
