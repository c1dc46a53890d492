"""The evidence guard and the prompt router inside the real Claude Code CLI (bundled with
claude-agent-sdk), driven by the scripted fake Messages API in tests/e2e/.  Skipped when the
CLI is not installed."""
import json
import os
import sys

import pytest
from hookrun import ROOT

sys.path.insert(0, os.path.join(ROOT, "tests", "e2e"))
import claude_run  # noqa: E402

pytestmark = pytest.mark.skipif(claude_run.claude_bin() is None, reason=claude_run.SKIP_REASON)

UNBACKED = "The root cause is a learning rate that is too high for this model."
GREP = {"type": "tool_use", "name": "Bash",
        "input": {"command": "grep -n -i nan runs/exp1/train.log", "description": "find NaN"}}
BACKED = ("E2E-FINAL: runs/exp1/train.log line 3 shows `step 120 loss=nan lr=3.0`. The root cause is the "
          "learning rate of 3.0: the loss rises before it goes NaN at step 120.")


def text(t):
    return {"type": "text", "text": t}


def run(tmp_path, turns, prompt="why is my loss NaN? the run is in runs/exp1"):
    res = claude_run.run_claude(turns, prompt, plugin_dir=ROOT, run_dir=tmp_path / "run", timeout=120)
    assert res.rc == 0 and not res.timed_out, res.describe()
    return res


def stop_hook_feedback(res):
    """Main requests whose messages carry Stop hook feedback."""
    return [i for i in range(len(res.main_requests)) if "Stop hook" in res.body_text(i)]


def test_unbacked_claim_is_blocked_once_then_backed_claim_ends_the_session(tmp_path):
    res = run(tmp_path, [
        {"content": [text(UNBACKED)]},
        {"expect": "trainwreck evidence guard", "content": [text("Checking the log first."), GREP]},
        {"expect": "loss=nan", "content": [text(BACKED)]},
    ])
    assert len(res.main_requests) == 3, res.describe()
    second = res.body_text(1)
    assert "Stop hook" in second and "/trainwreck:debug" in second and "trainwreck evidence guard" in second
    assert res.expect_failures == [], res.describe()
    assert str(res.result_text).startswith("E2E-FINAL"), res.describe()
    assert "step 120 loss=nan" in claude_run.tool_results(res.stream, "Bash")[0]["text"]


def test_backed_claim_is_not_blocked(tmp_path):
    res = run(tmp_path, [
        {"content": [text("Looking at the log."), GREP]},
        {"expect": "loss=nan", "content": [text(BACKED)]},
    ])
    assert len(res.main_requests) == 2, res.describe()
    assert stop_hook_feedback(res) == []
    assert str(res.result_text).startswith("E2E-FINAL")


def test_fabricated_quote_after_a_probe_is_blocked_and_named(tmp_path):
    fabricated = "The log shows `step 130 loss=nan lr=3.0`, so the root cause is the learning rate."
    res = run(tmp_path, [
        {"content": [text("Looking at the log."), GREP]},
        {"expect": "loss=nan", "content": [text(fabricated)]},
        {"expect": "step 130 loss=nan lr=3.0", "content": [text(BACKED)]},
    ])
    assert len(res.main_requests) == 3, res.describe()
    assert "no tool output of this session printed" in res.body_text(2)
    assert str(res.result_text).startswith("E2E-FINAL")


def test_stop_hook_active_never_loops(tmp_path):
    # The model keeps repeating the unbacked claim: one block, then the second stop
    # (stop_hook_active true) must go through instead of looping up to the CLI's cap.
    res = run(tmp_path, [{"content": [text(UNBACKED)]} for _ in range(6)])
    assert len(res.main_requests) == 2, res.describe()
    assert stop_hook_feedback(res) == [1]
    assert res.result_text == UNBACKED
    responses = [e for e in res.hook_events if e.get("subtype") == "hook_response"
                 and "Stop" in json.dumps(e)]
    assert len(responses) >= 2


def test_router_adds_the_diagnose_pointer_for_a_failed_run(tmp_path):
    res = run(tmp_path, [{"content": [text("PLAIN-OK")]}], prompt="my loss is NaN at step 400, any idea why?")
    body = res.body_text(0)
    assert "/trainwreck:diagnose" in body and "runs/exp1" in body


def test_router_stays_quiet_for_other_prompts(tmp_path):
    res = run(tmp_path, [{"content": [text("PLAIN-OK")]}], prompt="write a haiku about autumn")
    assert res.main_requests and "/trainwreck:diagnose" not in res.body_text(0)
    assert res.result_text == "PLAIN-OK"
