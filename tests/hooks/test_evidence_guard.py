"""The Stop hook, run as Claude Code runs it: the hooks.json command through the shell."""
import json
import os
import shutil
import subprocess
import sys
import time

import pytest
from hookrun import ROOT, decision, hook_command, run_hook
from transcripts import Transcript, stop_payload

CLAIM = "The root cause is a learning rate that is too high."
PROMPT = "why is my loss NaN? the run is in runs/exp1"
LOG = "118:step 1170 loss=nan lr=3.0e-03 grad_norm=nan"


@pytest.fixture
def work(tmp_path):
    return tmp_path


def _unbacked(t=None):
    t = t or Transcript(seed="unbacked")
    t.prompt(PROMPT)
    t.say(CLAIM)
    return t


def _payload(path, msg=CLAIM, active=False, sid="sess-1"):
    return stop_payload(sid, str(path), os.path.dirname(str(path)), msg, active=active)


def _run(work, payload, data="data"):
    rc, out, err = run_hook("Stop", payload, data_dir=str(work / data))
    assert rc == 0, err
    return decision(out), out, err


# ---------------------------------------------------------------- decisions

def test_unbacked_claim_is_blocked_and_routed_to_debug(work):
    path = _unbacked().write(str(work / "t.jsonl"))
    got, out, _ = _run(work, _payload(path))
    assert got == "block"
    reason = json.loads(out)["reason"]
    assert "debug" in reason and "/trainwreck:debug" in reason
    assert len(reason) < 1200
    assert CLAIM in reason                       # the claim, verbatim


def test_backed_claim_is_allowed(work):
    t = Transcript(seed="backed")
    t.prompt(PROMPT)
    t.tool("Bash", {"command": "grep -n nan runs/exp1/train.log"}, LOG)
    msg = "train.log line 118 shows `step 1170 loss=nan lr=3.0e-03`. " + CLAIM
    t.say(msg)
    got, out, _ = _run(work, _payload(t.write(str(work / "t.jsonl")), msg))
    assert got == "allow" and out == ""


def test_fabricated_quote_is_blocked_and_named(work):
    t = Transcript(seed="fab")
    t.prompt(PROMPT)
    t.tool("Bash", {"command": "grep -n nan runs/exp1/train.log"}, LOG)
    msg = "The log shows `step 1180 loss=nan lr=3.0e-03`, so the root cause is the learning rate."
    t.say(msg)
    got, out, _ = _run(work, _payload(t.write(str(work / "t.jsonl")), msg))
    assert got == "block"
    reason = json.loads(out)["reason"]
    assert "step 1180 loss=nan lr=3.0e-03" in reason and "debug" in reason


@pytest.mark.parametrize("prompt,msg", [
    (PROMPT, "Hypothesis: the learning rate is too high. Next probe: grep the log for the first NaN."),
    (PROMPT, "I don't yet know why the loss is NaN; next probe: `grep -n -i nan runs/exp1/train.log`."),
    (PROMPT, "The NaN might be caused by fp16 overflow."),
    (PROMPT, "Is the NaN caused by the learning rate? Let me check the log."),
    ("rename parse() to parse_date()", "I renamed the function because the old name clashed, and the tests pass."),
    ("why does test_config fail?", "The test fails because the fixture path is wrong."),
])
def test_non_claims_pass_without_any_tool(work, prompt, msg):
    t = Transcript(seed="nc")
    t.prompt(prompt)
    t.say(msg)
    got, out, _ = _run(work, _payload(t.write(str(work / "t.jsonl")), msg))
    assert got == "allow" and out == ""


def test_tool_in_previous_turn_does_not_back_this_turn(work):
    t = Transcript(seed="prev")
    t.prompt("show me the log")
    t.tool("Bash", {"command": "tail runs/exp1/train.log"}, LOG)
    t.say("Here it is.")
    t.end_turn()
    _unbacked(t)
    got, _, _ = _run(work, _payload(t.write(str(work / "t.jsonl"))))
    assert got == "block"


# ---------------------------------------------------------------- loop guards

def test_stop_hook_active_never_blocks(work):
    path = _unbacked().write(str(work / "t.jsonl"))
    for _ in range(3):
        got, out, _ = _run(work, _payload(path, active=True))
        assert got == "allow" and out == ""


def test_counter_caps_blocks_per_turn(work):
    path = _unbacked().write(str(work / "t.jsonl"))
    got = [_run(work, _payload(path))[0] for _ in range(3)]
    assert got == ["block", "allow", "allow"]     # once per turn: the count stays until the next prompt


def test_counter_is_per_turn_and_per_session(work):
    t = _unbacked()
    path = t.write(str(work / "t.jsonl"))
    assert [_run(work, _payload(path))[0] for _ in range(2)] == ["block", "allow"]
    assert _run(work, _payload(path, sid="another-session"))[0] == "block"
    _unbacked(t)                                   # a new prompt: a new turn
    t.write(path)
    assert _run(work, _payload(path))[0] == "block"


def test_counter_falls_back_to_a_temp_dir(work):
    path = _unbacked().write(str(work / "t.jsonl"))
    env = {"TMPDIR": str(work / "tmp")}
    os.makedirs(env["TMPDIR"])
    cmd, _ = hook_command("Stop")
    e = dict(os.environ, CLAUDE_PLUGIN_ROOT=ROOT, **env)
    e.pop("CLAUDE_PLUGIN_DATA", None)
    data = json.dumps(_payload(path, sid="tmp-fallback"))
    outs = [subprocess.run(cmd, shell=True, input=data, capture_output=True, text=True, env=e).stdout
            for _ in range(3)]
    assert [decision(o) for o in outs] == ["block", "allow", "allow"]
    assert os.path.isdir(os.path.join(env["TMPDIR"], "trainwreck-hooks"))


# ---------------------------------------------------------------- transcript shapes

def test_partial_last_line_is_skipped(work):
    path = str(work / "t.jsonl")
    _unbacked().write(path)
    with open(path, "a") as f:   # a tool result that is still being written must not count
        f.write('{"type": "user", "message": {"role": "user", "content": [{"type": "tool_result", '
                '"tool_use_id": "toolu_1", "content": "step 1170 lo')
    assert _run(work, _payload(path))[0] == "block"


def test_split_assistant_records_are_joined(work):
    t = Transcript(seed="split")
    t.prompt(PROMPT)
    t.assistant([{"type": "thinking", "thinking": "hmm", "signature": "s"},
                 {"type": "text", "text": "Short answer first."},
                 {"type": "text", "text": CLAIM}])
    path = t.write(str(work / "t.jsonl"))
    got, out, _ = _run(work, _payload(path, msg=None))        # text must come from the transcript
    assert got == "block" and "learning rate" in json.loads(out)["reason"]


def test_isMeta_feedback_is_not_a_turn_start(work):
    t = Transcript(seed="meta")
    t.prompt(PROMPT)
    t.say(CLAIM)
    t.hook_feedback("trainwreck evidence guard: ... /trainwreck:debug")
    t.tool("Bash", {"command": "grep -n nan runs/exp1/train.log"}, LOG)
    msg = "`step 1170 loss=nan` at line 118. " + CLAIM
    t.say(msg)
    assert _run(work, _payload(t.write(str(work / "t.jsonl")), msg))[0] == "allow"
    t2 = Transcript(seed="meta2")
    t2.prompt(PROMPT)
    t2.say(CLAIM)
    t2.hook_feedback("trainwreck evidence guard: ... /trainwreck:debug")
    t2.say(CLAIM)
    assert _run(work, _payload(t2.write(str(work / "t2.jsonl"))))[0] == "block"


def test_only_bookkeeping_tools_do_not_count(work):
    t = Transcript(seed="todo")
    t.prompt(PROMPT)
    t.tool("TodoWrite", {"todos": []}, "Todos have been modified successfully.")
    t.tool("Read", {"file_path": "nope.log"}, "<tool_use_error>File does not exist.</tool_use_error>", is_error=True)
    t.say(CLAIM)
    assert _run(work, _payload(t.write(str(work / "t.jsonl"))))[0] == "block"


def test_reads_only_the_tail_of_a_huge_file(work):
    path = str(work / "t.jsonl")
    with open(path, "wb") as f:
        f.truncate(3 << 30)            # 3 GB sparse: reading it all would take many seconds
    with open(path, "ab") as f:
        f.write(b"\n" + _unbacked().jsonl().encode())
    t0 = time.perf_counter()
    got, _, _ = _run(work, _payload(path))
    assert got == "block"
    assert time.perf_counter() - t0 < 5


def test_turn_start_beyond_the_cap_fails_open(work):
    path = str(work / "t.jsonl")
    t = Transcript(seed="cap")
    t.prompt(PROMPT)
    t.tool("Bash", {"command": "cat big.log"}, "step 1 loss=2.3\n" * 700000)   # one 11 MB record
    t.say(CLAIM)
    t.write(path)
    assert _run(work, _payload(path))[0] == "allow"


# ---------------------------------------------------------------- fail open

@pytest.mark.parametrize("stdin", [
    "", "{not json", "[1, 2, 3]", "null", '"a string"', "\xff\xfe garbage",
    '{"stop_hook_active": "yes", "last_assistant_message": "The root cause is the lr."}',
    '{"transcript_path": 42, "last_assistant_message": "The root cause is the lr."}',
    '{"transcript_path": ["x"], "last_assistant_message": {"text": "The root cause is the lr."}}',
])
def test_fail_open_on_bad_stdin(work, stdin):
    rc, out, err = run_hook("Stop", stdin, data_dir=str(work / "d"))
    assert rc == 0 and out == "" and "Traceback" not in err


def test_fail_open_on_missing_or_odd_transcripts(work):
    cases = [str(work / "missing.jsonl"), str(work)]
    binary = work / "bin.jsonl"
    binary.write_bytes(os.urandom(200000))
    empty = work / "empty.jsonl"
    empty.write_bytes(b"")
    cases += [str(binary), str(empty)]
    for p in cases:
        rc, out, err = run_hook("Stop", _payload(p), data_dir=str(work / "d"))
        assert rc == 0 and out == "", p


def test_fail_open_on_huge_stdin(work):
    payload = _payload(str(work / "x.jsonl"), msg="The root cause is the lr. " * 400000)   # ~10 MB
    rc, out, _ = run_hook("Stop", payload, data_dir=str(work / "d"))
    assert rc == 0 and out == ""


def test_fail_open_when_data_dir_is_unwritable(work):
    path = _unbacked().write(str(work / "t.jsonl"))
    blocker = work / "file-not-dir"
    blocker.write_text("x")
    rc, out, _ = run_hook("Stop", _payload(path), data_dir=str(blocker))
    assert rc == 0 and decision(out) == "block"     # the decision still stands; the counter is best effort


# ---------------------------------------------------------------- the hooks.json command

def test_hooks_json_shape():
    spec = json.load(open(os.path.join(ROOT, "hooks", "hooks.json")))
    for event in ("Stop", "UserPromptSubmit"):
        cmd, timeout = hook_command(event)
        assert '"${CLAUDE_PLUGIN_ROOT}/hooks/' in cmd
        assert "python3" in cmd and "python" in cmd and "py -3" in cmd
        assert timeout
    assert hook_command("UserPromptSubmit")[1] == 5
    assert "plugin.json" not in json.dumps(spec)


def test_shim_uses_python_when_python3_is_missing(work):
    real = os.path.realpath(sys.executable)                  # the interpreter binary, not a pyenv shim
    bindir = work / "bin"
    bindir.mkdir()
    os.symlink(real, bindir / "python")
    for tool in ("sh", "dash", "bash"):
        p = shutil.which(tool)
        if p:
            os.symlink(p, bindir / tool)
    path = _unbacked().write(str(work / "t.jsonl"))
    rc, out, err = run_hook("Stop", _payload(path), data_dir=str(work / "d"), env_extra={"PATH": str(bindir)})
    assert rc == 0 and decision(out) == "block", err


def test_shim_exits_quietly_without_any_python(work):
    bindir = work / "empty-bin"
    bindir.mkdir()
    os.symlink(shutil.which("sh"), bindir / "sh")           # a shell, but no python at all
    path = _unbacked().write(str(work / "t.jsonl"))
    cmd, _ = hook_command("Stop")
    env = {"PATH": str(bindir), "CLAUDE_PLUGIN_ROOT": ROOT}
    p = subprocess.run(["/bin/sh", "-c", cmd], input=json.dumps(_payload(path)), capture_output=True, text=True, env=env)
    assert p.returncode == 0 and p.stdout == ""


def test_scripts_need_no_execute_bit():
    for name in ("evidence_guard.py", "prompt_router.py"):
        cmd, _ = hook_command("Stop" if name.startswith("evidence") else "UserPromptSubmit")
        assert name in cmd and not cmd.lstrip().startswith('"${CLAUDE_PLUGIN_ROOT}')
