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


# ---------------------------------------------------------------- the plugin's own flows (issue 11)

AGENT = "You are failure-diagnoser"          # the first words of agents/failure-diagnoser.md: routes sub-agent turns
TOOLS = ["--permission-mode", "dontAsk", "--allowedTools", "Bash Read Agent Skill"]


def run_in(run_dir, turns, prompt, extra=(), files=None):
    res = claude_run.run_claude(turns, prompt, plugin_dir=ROOT, run_dir=run_dir, timeout=120, extra_args=list(extra),
                                permission_args=TOOLS, workdir_files=files)
    assert res.rc == 0 and not res.timed_out, res.describe()
    return res


def test_a_follow_up_that_quotes_the_previous_turns_output_is_allowed(tmp_path):
    cat = {"type": "tool_use", "name": "Bash", "input": {"command": "cat runs/exp1/train.log", "description": "log"}}
    first = run_in(tmp_path / "run", [
        {"content": [text("Looking at the log."), cat]},
        {"expect": "loss=nan", "content": [text("The first NaN is at step 120: `step 120 loss=nan lr=3.0`.")]},
    ], "why is my loss NaN? the run is in runs/exp1")
    assert stop_hook_feedback(first) == []
    sid = first.init["session_id"]
    follow = ("The root cause is the learning rate of 3.0: the loss climbs (`step 110 loss=7.94 lr=3.0`) and then "
              "goes NaN (`step 120 loss=nan lr=3.0`).")
    res = run_in(tmp_path / "run", [{"content": [text(follow)]}], "ok, so what is the root cause?",
                 extra=["--resume", sid], files={})
    assert len(res.main_requests) == 1 and stop_hook_feedback(res) == [], res.describe()
    assert res.result_text == follow
    # the same follow-up with a reading no tool ever printed is blocked, once
    made_up = follow.replace("step 110 loss=7.94", "step 110 loss=9.12")
    res = run_in(tmp_path / "run", [{"content": [text(made_up)]}, {"content": [text(made_up)]}],
                 "and again, the root cause?", extra=["--resume", sid], files={})
    assert len(res.main_requests) == 2 and "step 110 loss=9.12" in res.body_text(1), res.describe()


def test_diagnose_delegating_to_the_failure_diagnoser_is_allowed(tmp_path):
    quote = "step 120 loss=nan lr=3.0"
    res = run_in(tmp_path / "run", [
        {"unless": AGENT, "content": [{"type": "tool_use", "name": "Agent", "input": {
            "description": "Diagnose run", "prompt": "Diagnose runs/exp1 and report the first failure.",
            "subagent_type": "trainwreck:failure-diagnoser", "run_in_background": False}}]},
        {"when": AGENT, "content": [{"type": "tool_use", "name": "Bash", "input": {
            "command": "grep -n -i nan runs/exp1/train.log", "description": "find NaN"}}]},
        {"when": AGENT, "expect": "loss=nan", "content": [text("First NaN at step 120 (train.log line 3).")]},
        {"unless": AGENT, "content": [text("E2E-FINAL: the sub-agent found `%s` at train.log line 3. The root cause "
                                           "is the learning rate of 3.0, far above a stable value." % quote)]},
    ], "/trainwreck:diagnose runs/exp1")
    assert stop_hook_feedback(res) == [], res.describe()
    assert str(res.result_text).startswith("E2E-FINAL")
    assert res.unserved_turns == [], res.describe()


def test_an_unbacked_declarative_claim_is_blocked_once(tmp_path):
    bare = ("It's your warmup: with no warmup the first updates at lr 3.0 push the weights out of range, and the "
            "loss never recovers. Set warmup_steps=500.")
    res = run(tmp_path, [{"content": [text(bare)]} for _ in range(4)])
    assert len(res.main_requests) == 2, res.describe()
    assert stop_hook_feedback(res) == [1]
    fb = res.body_text(1)
    assert "It's your warmup" in fb and "/trainwreck:debug" in fb
    assert res.result_text == bare


def test_a_quote_found_only_in_a_tools_input_is_blocked(tmp_path):
    pattern = "RuntimeError: CUDA error: an illegal memory access was encountered"
    res = run(tmp_path, [
        {"content": [text("Searching."), {"type": "tool_use", "name": "Bash", "input": {
            "command": "grep -n '%s' runs/exp1/train.log; ls runs/exp1" % pattern, "description": "search"}}]},
        {"expect": "train.log", "content": [text("The log shows `%s`, so the kernel crashed and the loss is "
                                                 "garbage." % pattern)]},
        {"content": [text(BACKED)]},
    ])
    assert len(res.main_requests) == 3, res.describe()
    assert "no tool output of this session printed" in res.body_text(2)
    assert str(res.result_text).startswith("E2E-FINAL")
