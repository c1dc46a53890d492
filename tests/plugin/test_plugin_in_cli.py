"""The plugin inside the real Claude Code CLI, driven by the scripted fake Messages API.

Every assertion reads what the CLI itself sent to the model (the fake API's request log) or printed
(stream-json), so these tests show what a user's session would actually get.
"""
import json
import os
import re
import shutil
import subprocess
import sys

import pytest
from plugin_inventory import AGENTS, REPO, SKILLS, claude_run, frontmatter

# Skip (with the reason) only when the Claude Code CLI is not installed; CI installs claude-agent-sdk.
pytestmark = pytest.mark.skipif(claude_run.claude_bin() is None, reason=claude_run.SKIP_REASON)

DONE = [{"content": [{"type": "text", "text": "DONE"}]}]


def system_listing(result):
    """Text of the role-`system` messages inside messages[] of the first main request."""
    msgs = result.main_requests[0]["body"]["messages"]
    parts = []
    for m in msgs:
        if m.get("role") == "system":
            content = m["content"]
            parts.append(content if isinstance(content, str)
                         else "\n".join(b.get("text", "") for b in content if isinstance(b, dict)))
    return "\n".join(parts)


def user_text(request):
    """All text the user-side messages of a request carry (slash expansions, tool results)."""
    out = []
    for m in request["body"]["messages"]:
        if m.get("role") != "user":
            continue
        content = m["content"]
        if isinstance(content, str):
            out.append(content)
            continue
        for b in content:
            if b.get("type") == "text":
                out.append(b["text"])
            elif b.get("type") == "tool_result":
                inner = b.get("content")
                out.append(inner if isinstance(inner, str) else "\n".join(x.get("text", "") for x in inner or []))
    return "\n".join(out)


def example_run():
    """An example run shipped with the repo (NaN kind preferred), or None."""
    root = REPO / "examples" / "runs"
    if not root.is_dir():
        return None
    runs = sorted(p for p in root.iterdir() if p.is_dir())
    nan = [p for p in runs if p.name.startswith("nan")]
    return (nan or runs or [None])[0]


def test_skills_and_agents_are_listed_with_descriptions():
    res = claude_run.run_claude(DONE, "hello", plugin_dir=REPO, workdir_files={})
    assert res.rc == 0 and res.main_requests, res.describe()
    for s in SKILLS:
        assert f"trainwreck:{s}" in res.init.get("skills", []), s
    for a in AGENTS:
        assert f"trainwreck:{a}" in res.init.get("agents", []), a
    assert {"name": "trainwreck", "version": "0.1.0"}.items() <= next(
        p for p in res.init["plugins"] if p["name"] == "trainwreck").items()
    listing = system_listing(res)
    for s in SKILLS:
        desc = frontmatter(REPO / "skills" / s / "SKILL.md")[0]["description"]
        assert f"- trainwreck:{s}: {desc}" in listing, s
    for a in AGENTS:
        desc = frontmatter(REPO / "agents" / f"{a}.md")[0]["description"]
        assert f"- trainwreck:{a}: {desc} (Tools: Read, Bash)" in listing, a
    # not in the top-level system prompt: the listings travel as a role-system message
    assert "trainwreck:diagnose" not in json.dumps(res.main_requests[0]["body"].get("system"))


@pytest.mark.parametrize("command", ["/diagnose", "/trainwreck:diagnose"])
def test_slash_diagnose_loads_the_skill_body_with_the_argument(command):
    run = example_run()
    arg = f"examples/runs/{run.name}" if run else "examples/runs/nan-fp16"
    res = claude_run.run_claude(DONE, f"{command} {arg}", plugin_dir=REPO, workdir_files={})
    assert res.rc == 0 and res.main_requests, res.describe()
    text = user_text(res.main_requests[0])
    assert "<command-name>/trainwreck:diagnose</command-name>" in text
    assert f"<command-args>{arg}</command-args>" in text
    assert f"Base directory for this skill: {REPO / 'skills' / 'diagnose'}" in text
    assert "# Diagnose a failed or stalled training run" in text
    # $ARGUMENTS and ${CLAUDE_PLUGIN_ROOT} are substituted; the frontmatter is stripped
    assert f'python3 "{REPO}/scripts/collect_failure_context.py" {arg}' in text
    assert "$ARGUMENTS" not in text and "${CLAUDE_PLUGIN_ROOT}" not in text
    assert "argument-hint:" not in text


def test_skill_tool_loads_a_verification_skill():
    turns = [{"content": [{"type": "tool_use", "name": "Skill",
                           "input": {"skill": "trainwreck:loss-spike-rollback", "args": "runs/exp1"}}]},
             {"expect": "Loss spike: roll back", "content": [{"type": "text", "text": "LOADED"}]}]
    res = claude_run.run_claude(turns, "loss spiked at step 400 in runs/exp1", plugin_dir=REPO)
    assert res.rc == 0 and len(res.main_requests) == 2, res.describe()
    assert not res.expect_failures, res.describe()
    text = user_text(res.main_requests[1])
    assert f'"{REPO}/scripts/find_rollback_point.py" runs/exp1' in text


def test_scripted_model_runs_the_skill_script_and_gets_the_real_output(tmp_path):
    """The model follows the diagnose skill: Bash runs collect_failure_context.py with system python3;
    the engine's real output (the NaN it finds) is what goes back to the model."""
    run = example_run()
    if run is not None:
        files = {f"runs/exp1/{p.relative_to(run)}": p.read_bytes() for p in run.rglob("*") if p.is_file()}
    else:
        files = {"runs/exp1/train.log": "step 100 loss=2.31 lr=3.0\nstep 110 loss=7.94 lr=3.0\n"
                                        "step 120 loss=nan lr=3.0\n"}
    command = f'python3 "{REPO}/scripts/collect_failure_context.py" runs/exp1'
    turns = [{"expect": "collect_failure_context.py",
              "content": [{"type": "text", "text": "Collecting the evidence first."},
                          {"type": "tool_use", "name": "Bash",
                           "input": {"command": command, "description": "collect evidence"}}]},
             {"content": [{"type": "text", "text": "[HYPOTHESIS] lr 3.0 is too high; next: rerun with lr 0.3."}]}]
    res = claude_run.run_claude(turns, "/trainwreck:diagnose runs/exp1", plugin_dir=REPO, workdir_files=files)
    assert res.rc == 0 and len(res.main_requests) == 2, res.describe()
    assert not res.expect_failures, "the skill body did not reach the model"
    results = claude_run.tool_results(res.stream, "Bash")
    assert len(results) == 1, res.describe()
    out = results[0]["text"]
    assert not results[0].get("is_error"), out
    assert "nan" in out.lower(), out
    # the same text went back to the model in the next request
    assert out.strip()[:200] in user_text(res.main_requests[1])
    # and it is the engine's real output: running the script directly gives the same lines
    direct = subprocess.run([sys.executable, str(REPO / "scripts" / "collect_failure_context.py"), "runs/exp1"],
                            cwd=res.workdir, capture_output=True, text=True, timeout=60)
    assert direct.returncode == 0, direct.stderr
    lines = [line for line in direct.stdout.splitlines() if line.strip()][:5]
    assert lines and all(line.strip() in out for line in lines), (direct.stdout[:500], out[:500])


def test_failure_diagnoser_agent_starts_with_read_only_tools():
    marker = "You are failure-diagnoser"
    turns = [{"unless": marker,
              "content": [{"type": "tool_use", "name": "Agent",
                           "input": {"description": "Diagnose run", "prompt": "Diagnose runs/exp1.",
                                     "subagent_type": "trainwreck:failure-diagnoser",
                                     "run_in_background": False}}]},
             {"when": marker, "content": [{"type": "tool_use", "name": "Bash",
                                           "input": {"command": "grep -n -i nan runs/exp1/train.log",
                                                     "description": "find NaN"}}]},
             {"when": marker, "expect": "loss=nan",
              "content": [{"type": "text", "text": '```json\n{"classification": "NaN"}\n```'}]},
             {"unless": marker, "expect": "classification", "content": [{"type": "text", "text": "MAIN-DONE"}]}]
    res = claude_run.run_claude(turns, "my run in runs/exp1 went NaN", plugin_dir=REPO)
    assert res.rc == 0 and res.result_text == "MAIN-DONE", res.describe()
    assert not res.expect_failures and not res.unserved_turns, res.describe()
    sub = [r for r in res.main_requests if marker in json.dumps(r["body"].get("system"))]
    assert len(sub) == 2
    for r in sub:
        assert sorted(t["name"] for t in r["body"]["tools"]) == ["Bash", "Read"]
        # ${CLAUDE_PLUGIN_ROOT} in the agent body is resolved to this checkout
        assert f"{REPO}/scripts/diagnose_run.py" in json.dumps(r["body"]["system"])
    main = [r for r in res.main_requests if r not in sub]
    assert "Agent" in {t["name"] for t in main[0]["body"]["tools"]}


def test_plugin_validate_strict_directory_profile(tmp_path):
    proc = claude_run.cli_command(["plugin", "validate", "--json", "--strict", "--profile", "directory", str(REPO)])
    report = json.loads(proc.stdout)
    assert proc.returncode == 0 and report["success"], proc.stdout[-2000:]
    assert report["manifest"]["errors"] == [] and report["manifest"]["warnings"] == []
    assert report["directory"]["findings"] == [] and report["directory"]["failure"] is None

    # With marketplace.json present the CLI validates the marketplace; validate the plugin itself too,
    # from a copy without it, so the skills and agents are checked and listed.
    copy = tmp_path / "trainwreck"
    for part in (".claude-plugin", "skills", "agents", "hooks", "scripts", "reference", "README.md", "LICENSE"):
        src = REPO / part
        if src.is_dir():
            shutil.copytree(src, copy / part, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
        elif src.is_file():
            shutil.copy2(src, copy / part)
    (copy / ".claude-plugin" / "marketplace.json").unlink()
    proc = claude_run.cli_command(["plugin", "validate", "--json", "--strict", "--profile", "directory", str(copy)])
    report = json.loads(proc.stdout)
    assert proc.returncode == 0 and report["success"], proc.stdout[-2000:]
    assert report["manifest"]["type"] == "plugin"
    assert sorted(report["provides"]["skills"]) == sorted(f"trainwreck:{s}" for s in SKILLS)
    assert sorted(report["provides"]["agents"]) == sorted(f"trainwreck:{a}" for a in AGENTS)
    assert report["directory"]["findings"] == []


def test_always_on_context_cost_is_at_most_600_tokens():
    proc = claude_run.cli_command(["--plugin-dir", str(REPO), "plugin", "details", "trainwreck"])
    assert proc.returncode == 0, proc.stderr
    m = re.search(r"Always-on:\s*~([\d,]+) tok", proc.stdout)
    assert m, proc.stdout
    tokens = int(m.group(1).replace(",", ""))
    print(f"always-on context cost: ~{tokens} tokens")
    assert tokens <= 600, proc.stdout
    inventory = proc.stdout
    assert "Skills (9)" in inventory and "Agents (2)" in inventory
    if os.environ.get("TW_SHOW_DETAILS"):
        print(inventory)
