"""The evidence guard's decision rules, each pinned by a test that fails when the rule changes:
what counts as a quote source (tool OUTPUTS only: never a tool's input, the user's prompt or the assistant's own
writing), the stop_hook_active guard, and the per-session, per-turn block cap (1 block per turn; any later stop in
the same turn is let through).

Runs `evidence_guard.decide` in-process (fast enough for mutation testing) and, for the loop guards, the real
hooks.json command as well."""
import json
import os

import evidence_guard
import pytest
import quote_match
import transcript_tail
from hookrun import decision, run_hook
from transcripts import Transcript, stop_payload

PROMPT = "why is my loss NaN? the run is in runs/exp1"
CLAIM = "The root cause is a learning rate that is too high."
SMOKE = "python train.py optimizer.lr=3e-3 trainer.max_steps=50 2>&1 | tail -3"
SMOKE_OUT = "step 48 loss=nan grad_norm=inf\nTraining stopped."
# quotes the setting it ran with (only in the tool's INPUT) and the line the run printed (in its OUTPUT)
BACKED = "I reran with `optimizer.lr=3e-3` and got `step 48 loss=nan grad_norm=inf`, so the root cause is the lr."


@pytest.fixture
def data(tmp_path, monkeypatch):
    monkeypatch.setenv("CLAUDE_PLUGIN_DATA", str(tmp_path / "data"))
    return tmp_path


def _decide(tmp_path, t, msg, active=False, sid="sess-1"):
    path = t.write(str(tmp_path / "t.jsonl"))
    return evidence_guard.decide(stop_payload(sid, path, str(tmp_path), msg, active=active))


def _smoke(t=None):
    t = t or Transcript(seed="smoke")
    t.prompt(PROMPT)
    t.tool("Bash", {"command": SMOKE}, SMOKE_OUT)
    return t


def _unbacked(t=None):
    t = t or Transcript(seed="unbacked")
    t.prompt(PROMPT)
    t.say(CLAIM)
    return t


# ---------------------------------------------------------------- quote sources

def test_a_setting_the_reply_says_it_ran_with_is_its_own_action_not_a_quote(data):
    t = _smoke()
    t.say(BACKED)
    assert _decide(data, t, BACKED) is None             # "I reran with `x`": what it did, not what it observed
    msg = BACKED.replace("optimizer.lr=3e-3", "optimizer.lr=5e-3")
    t.say(msg)
    assert _decide(data, t, msg) is None


def test_a_quote_found_only_in_a_tools_input_is_fabricated(data):
    t = Transcript(seed="input-only")
    t.prompt(PROMPT)
    t.tool("Bash", {"command": "grep -n 'step 48 loss=nan grad_norm=inf' runs/exp1/train.log; ls runs/exp1"},
           "config.yaml\ntrain.log")                  # the pattern matched nothing; ls printed two names
    msg = "The log shows `step 48 loss=nan grad_norm=inf`, so the root cause is the lr."
    t.say(msg)
    reason = _decide(data, t, msg)
    assert reason.startswith('trainwreck evidence guard: the reply says "The log shows `step 48 loss=nan '
                             'grad_norm=inf`, so the root cause is the lr." and quotes `step 48 loss=nan '
                             'grad_norm=inf` as evidence, but no tool output of this session printed that text')
    t2 = _smoke(Transcript(seed="output"))
    t2.say(msg)
    assert _decide(data, t2, msg) is None               # the same quote, printed by the run: backed


def test_the_assistants_own_writing_is_not_evidence(data):
    t = Transcript(seed="write")
    t.prompt(PROMPT)
    t.tool("Write", {"file_path": "notes.txt", "content": "step 48 loss=nan grad_norm=inf"},
           "File created successfully at: notes.txt")
    t.tool("Bash", {"command": "ls"}, "notes.txt\nruns")
    msg = "The log shows `step 48 loss=nan grad_norm=inf`, so the root cause is the lr."
    t.say(msg)
    assert "no tool output of this session printed" in (_decide(data, t, msg) or "")


def test_scan_collects_tool_outputs_only(tmp_path):
    t = _smoke()
    t.read("runs/exp1/config.yaml", "optimizer:\n  lr: 3.0e-03\n")
    t.say(BACKED)
    path = t.write(str(tmp_path / "t.jsonl"))
    src = quote_match.Sources()
    turn = transcript_tail.scan(path, src, 1 << 20)
    joined = src.joined
    assert quote_match.normalise(SMOKE) not in joined        # the tool input
    assert "step 48 loss=nan grad_norm=inf" in joined         # the tool output
    assert quote_match.normalise(PROMPT) not in joined        # the user's prompt
    assert "optimizer:" in joined and "runs/exp1/config.yaml" not in joined  # Read: the file content, not its input
    assert turn.found_start and turn.prompt == PROMPT and turn.last_text == BACKED
    texts = [r[1] for r in turn.results]                     # newest first: the transcript is read backwards
    assert len(texts) == 2 and texts[1] == SMOKE_OUT and "2\u2192  lr: 3.0e-03" in texts[0]
    assert all(r[2] for r in turn.results)


def test_a_log_pasted_in_the_prompt_does_not_back_a_quote(data):
    t = Transcript(seed="paste")
    t.prompt(PROMPT + "\n```\nstep 977 loss=nan lr=0.003\n```")
    t.tool("Bash", {"command": "ls runs/exp1"}, "train.log\nconfig.yaml")
    msg = "Your log shows `step 977 loss=nan lr=0.003`. " + CLAIM
    t.say(msg)
    assert "step 977 loss=nan lr=0.003" in (_decide(data, t, msg) or "")   # the user's excerpt, not checked output
    t2 = Transcript(seed="paste2")
    t2.prompt(PROMPT + "\n```\nstep 977 loss=nan lr=0.003\n```")
    t2.tool("Bash", {"command": "grep -n 'loss=nan' runs/exp1/train.log"}, "977:step 977 loss=nan lr=0.003")
    t2.say(msg)
    assert _decide(data, t2, msg) is None               # the same line, printed by grep from the real file


def test_the_tool_must_be_in_this_turn_and_return_output(data):
    t = _smoke()
    t.say("Done.")
    t.end_turn()
    _unbacked(t)                                      # the smoke run was last turn: nothing probed this turn
    assert "no tool in this turn returned output" in (_decide(data, t, CLAIM) or "")
    t2 = Transcript(seed="empty")
    t2.prompt(PROMPT)
    t2.tool("Bash", {"command": "grep -n nan runs/exp1/train.log"}, "(no output)")
    t2.say(CLAIM)
    assert "no tool in this turn returned output" in (_decide(data, t2, CLAIM) or "")


# ---------------------------------------------------------------- stop_hook_active

@pytest.mark.parametrize("active", [True, "true", 1, "yes"])
def test_stop_hook_active_lets_every_stop_through(data, active):
    assert _decide(data, _unbacked(), CLAIM, active=active) is None
    assert _decide(data, _unbacked(), CLAIM, active=False)  # the same reply, not in a stop chain: blocked


@pytest.mark.parametrize("inactive", [False, None, 0, "", "false", "False", "0"])
def test_stop_hook_inactive_values_still_block(data, inactive):
    assert _decide(data, _unbacked(), CLAIM, active=inactive)


def test_stop_hook_active_leaves_the_counter_alone(data):
    t = _unbacked()
    assert _decide(data, _unbacked(), CLAIM, sid="other")   # block 1 of another session
    assert _decide(data, t, CLAIM, active=True) is None        # an active stop neither counts nor blocks
    assert _decide(data, t, CLAIM)                             # so the turn's one block is still there
    assert _decide(data, t, CLAIM) is None                     # the cap


def test_hook_command_never_blocks_when_active(tmp_path):
    path = _unbacked().write(str(tmp_path / "t.jsonl"))
    for active, want in ((True, "allow"), (False, "block"), (True, "allow")):
        rc, out, err = run_hook("Stop", stop_payload("cmd", path, str(tmp_path), CLAIM, active=active),
                                data_dir=str(tmp_path / "d"))
        assert rc == 0 and decision(out) == want, (active, out, err)


# ---------------------------------------------------------------- the per-turn cap: 1 block, then let through

def test_the_cap_is_one_block_per_turn(data):
    assert evidence_guard.MAX_BLOCKS_PER_TURN == 1
    t = _unbacked()
    got = [_decide(data, t, CLAIM) is not None for _ in range(4)]
    assert got == [True, False, False, False]          # the count stays for the turn
    state = data / "data" / "evidence-guard" / "sess-1.json"
    assert json.loads(state.read_text()) == {"turn": transcript_tail.scan(
        str(data / "t.jsonl"), quote_match.Sources(), 1 << 20).start_key, "blocks": 1}


def test_an_allowed_reply_does_not_reset_the_count_but_a_new_prompt_does(data):
    t = _unbacked()
    assert _decide(data, t, CLAIM)
    ok = "Hypothesis: the learning rate is too high. Next probe: grep the log for the first NaN."
    assert _decide(data, t, ok) is None
    assert _decide(data, t, CLAIM) is None              # still the same turn: its one block is spent
    _unbacked(t)                                        # the user's next prompt: a new turn
    assert [_decide(data, t, CLAIM) is not None for _ in range(2)] == [True, False]


def test_the_cap_counts_per_session_and_per_turn(data):
    t = _unbacked()
    assert [_decide(data, t, CLAIM, sid="a") is not None for _ in range(2)] == [True, False]
    assert _decide(data, t, CLAIM, sid="b")            # another session has its own count
    _unbacked(t)                                       # a new prompt in session a: a new turn, a new count
    assert [_decide(data, t, CLAIM, sid="a") is not None for _ in range(3)] == [True, False, False]


def test_hook_command_blocks_once_then_lets_through(tmp_path):
    path = _unbacked().write(str(tmp_path / "t.jsonl"))
    outs = [run_hook("Stop", stop_payload("cap", path, str(tmp_path), CLAIM), data_dir=str(tmp_path / "d"))[1]
            for _ in range(3)]
    assert [decision(o) for o in outs] == ["block", "allow", "allow"]


# ---------------------------------------------------------------- known bug

@pytest.mark.xfail(strict=True, reason="bug: quote_extract masks inline code before reading double quotes, so a "
                                       "double-quoted log line holding `code` is searched as '… code …' and blocked")
def test_double_quoted_line_with_inline_code_is_found(data):
    t = Transcript(seed="dq")
    t.prompt(PROMPT)
    t.tool("Bash", {"command": "tail -n 1 runs/exp1/train.log"}, "RuntimeError: CUDA error at step 12")
    msg = 'The log says "RuntimeError: `CUDA error` at step 12", so the root cause is the fp16 overflow.'
    t.say(msg)
    assert _decide(data, t, msg) is None


# ---------------------------------------------------------------- the byte caps, at their boundaries

def _main(monkeypatch, raw):
    import io
    import sys

    class _Stdin:
        buffer = io.BytesIO(raw)
    out = io.StringIO()
    monkeypatch.setattr(sys, "stdin", _Stdin)
    monkeypatch.setattr(sys, "stdout", out)
    assert evidence_guard.main() == 0
    return out.getvalue()


def test_stdin_is_read_up_to_8_mib_and_no_further(data, monkeypatch):
    path = _unbacked().write(str(data / "t.jsonl"))
    payload = json.dumps(stop_payload("caps", path, str(data), CLAIM))
    frame = payload[:-1] + ', "pad": "%s"}'
    at_cap = frame % ("x" * ((8 << 20) - len((frame % "").encode())))
    assert len(at_cap.encode()) == 8 << 20
    assert json.loads(_main(monkeypatch, at_cap.encode()))["decision"] == "block"
    over = at_cap[:-2] + 'x"}'
    assert len(over.encode()) == (8 << 20) + 1
    assert _main(monkeypatch, over.encode()) == ""          # one byte over: fail open, nothing read


@pytest.mark.parametrize("pad,want", [((8 << 20) - (64 << 10), "block"), ((8 << 20) + 4096, "allow")])
def test_the_transcript_is_read_back_8_mib(data, pad, want):
    """An unbacked claim whose turn starts just inside the 8 MiB read cap is judged (blocked); just beyond it the
    hook cannot see the turn start and fails open."""
    t = Transcript(seed="cap-%d" % pad)
    t.prompt(PROMPT)
    t.say("Reading the run now. " + "x" * pad)           # one long reply record between the prompt and the claim
    t.say(CLAIM)
    got = _decide(data, t, CLAIM)
    assert (got is not None) == (want == "block")


def test_only_the_first_300_distinct_quotes_are_checked(data):
    """A reply that pastes a whole log is checked on its first 300 distinct quotes (the rest cannot block)."""
    lines = ["step %d loss=%d.25 lr=3.0e-03" % (i, i) for i in range(301)]
    t = Transcript(seed="q300")
    t.prompt(PROMPT)
    t.tool("Bash", {"command": "cat runs/exp1/train.log"}, "\n".join(lines[:300]))
    fake = "step 999999 loss=nan lr=3.0e-03"
    for where, want_block in ((300, False), (299, True)):
        quoted = lines[:where] + [fake] + lines[where:300]
        msg = "The log shows:\n```\n" + "\n".join(quoted) + "\n```\n\n" + CLAIM
        t.say(msg)
        got = _decide(data, t, msg, sid="q%d" % where)
        assert (got is not None) == want_block, where
        if want_block:
            assert fake in got


@pytest.mark.parametrize("var", ["TMPDIR", "TEMP", "TMP"])
def test_the_counter_lives_in_the_temp_dir_without_plugin_data(tmp_path, monkeypatch, var):
    for v in ("CLAUDE_PLUGIN_DATA", "TMPDIR", "TEMP", "TMP"):
        monkeypatch.delenv(v, raising=False)
    monkeypatch.setenv(var, str(tmp_path / "tmp"))
    t = _unbacked()
    assert _decide(tmp_path, t, CLAIM, sid="tmp-1")
    state = tmp_path / "tmp" / "trainwreck-hooks" / "evidence-guard" / "tmp-1.json"
    assert json.loads(state.read_text())["blocks"] == 1
    assert [_decide(tmp_path, t, CLAIM, sid="tmp-1") is not None for _ in range(2)] == [False, False]


def test_the_counter_file_is_named_after_a_cleaned_session_id(data):
    t = _unbacked()
    assert _decide(data, t, CLAIM, sid="../../etc/pass wd")
    assert [p.name for p in (data / "data" / "evidence-guard").iterdir()] == ["etcpasswd.json"]
    assert _decide(data, t, CLAIM, sid="")
    assert (data / "data" / "evidence-guard" / "nosession.json").exists()


def test_without_any_temp_variable_the_counter_is_under_slash_tmp(tmp_path, monkeypatch):
    for v in ("CLAUDE_PLUGIN_DATA", "TMPDIR", "TEMP", "TMP"):
        monkeypatch.delenv(v, raising=False)
    sid = "tw-test-%d" % os.getpid()
    state = "/tmp/trainwreck-hooks/evidence-guard/%s.json" % sid
    try:
        assert _decide(tmp_path, _unbacked(), CLAIM, sid=sid)
        with open(state, encoding="utf-8") as f:
            assert json.load(f)["blocks"] == 1
    finally:
        if os.path.exists(state):
            os.remove(state)


def test_session_ids_are_kept_to_80_safe_characters(data):
    t = _unbacked()
    assert _decide(data, t, CLAIM, sid="sess-1_a" + "b" * 100)
    assert _decide(data, t, CLAIM, sid="../")            # nothing safe left: the shared fallback name
    names = sorted(p.name for p in (data / "data" / "evidence-guard").iterdir())
    assert names == ["nosession.json", "sess-1_a" + "b" * 72 + ".json"]


def test_the_block_reason_quotes_the_claim_verbatim_and_routes_to_debug(data):
    claim = ("The root cause is   a learning rate of `3e-3` that is far too high for this model size, so the loss "
             "diverges within the first few hundred steps.")
    t = _unbacked(Transcript(seed="long"))
    t.say(claim)
    reason = _decide(data, t, claim)
    assert '("%s")' % " ".join(claim.split()) in reason   # whole, quotes kept, whitespace collapsed
    assert reason.startswith("trainwreck evidence guard: the reply states a cause of the training failure as fact")
    assert "run a probe now" in reason and "in a follow-up, quote verbatim the earlier tool output" in reason
    longer = "The root cause is the learning rate, " + "which is far too high for this model, " * 20 + "clearly."
    t.say(longer)
    assert '("%s…")' % longer[:399] in _decide(data, t, longer, sid="long-2")   # 400 characters at most
    assert "Follow /trainwreck:debug: probe (read the log, run the engine or a command) -> hypothesis -> smoke -> " \
           "controls -> claim, and quote the exact lines you found; or say plainly that it is a hypothesis and name " \
           "the next probe." in reason and reason.endswith("the next probe.")


def test_a_misquote_reason_names_two_quotes_and_counts_the_rest(data):
    t = _smoke(Transcript(seed="mis"))
    fakes = ["step %d loss=nan grad_norm=inf lr=3.0e-03 " % (100 + i) + "x" * 90 for i in range(4)]
    msg = "The run printed " + ", ".join("`%s`" % f for f in fakes) + ", so the root cause is the learning rate."
    t.say(msg)
    reason = _decide(data, t, msg)
    assert "`%s`, `%s` (and 2 more) as evidence" % (fakes[0][:79] + "…", fakes[1][:79] + "…") in reason
    msg2 = "The run printed `%s` and `%s`, so the root cause is the learning rate." % (fakes[0], fakes[1])
    t.say(msg2)
    reason = _decide(data, t, msg2, sid="two")
    assert "quotes `%s`, `%s` as evidence" % (fakes[0][:79] + "…", fakes[1][:79] + "…") in reason  # no "(and 0 more)"


# ---------------------------------------------------------------- the decision's other branches

OFF_TOPIC = "The root cause is a typo in the path."     # a claim, with no training words of its own


def test_a_claim_is_judged_in_the_domain_of_the_prompt(data):
    t = Transcript(seed="dom")
    t.prompt(PROMPT)                                    # the prompt is about a NaN loss: the claim is in scope
    t.say(OFF_TOPIC)
    assert "no tool in this turn returned output" in (_decide(data, t, OFF_TOPIC) or "")
    t2 = Transcript(seed="dom2")
    t2.prompt("why does my flask app return 404 on /users?")
    t2.say(OFF_TOPIC)
    assert _decide(data, t2, OFF_TOPIC) is None         # neither reply nor prompt is about training


def test_an_off_topic_claim_neither_blocks_nor_counts(data):
    t2 = Transcript(seed="dom3")
    t2.prompt("why does my flask app return 404 on /users?")
    t2.say(OFF_TOPIC)
    path2 = t2.write(str(data / "t2.jsonl"))
    assert evidence_guard.decide(stop_payload("sess-1", path2, str(data), OFF_TOPIC)) is None
    assert not (data / "data" / "evidence-guard" / "sess-1.json").exists()
    assert _decide(data, _unbacked(), CLAIM)              # the session's training claim still gets its block


def test_a_quote_from_an_earlier_turn_is_found_by_reading_back(data):
    t = Transcript(seed="earlier")
    t.prompt("show me the end of runs/exp1/train.log")
    t.tool("Bash", {"command": "tail -n 2 runs/exp1/train.log"}, "step 1169 loss=2.31\nstep 1170 loss=nan lr=0.003")
    t.say("Here it is.")
    t.end_turn()
    t.prompt(PROMPT)
    t.tool("Bash", {"command": "grep -n clip runs/exp1/config.yaml"}, "12:gradient_clip_val: 0.0")
    msg = "The log shows `step 1170 loss=nan lr=0.003` with `gradient_clip_val: 0.0`. " + CLAIM
    t.say(msg)
    assert _decide(data, t, msg) is None
    msg2 = msg.replace("step 1170", "step 1171")
    t.say(msg2)
    assert "step 1171 loss=nan lr=0.003" in (_decide(data, t, msg2) or "")


@pytest.mark.parametrize("backed", [False, True])
def test_without_last_assistant_message_the_reply_is_read_from_the_transcript(data, backed):
    t = Transcript(seed="nomsg-%s" % backed)
    t.prompt(PROMPT)
    if backed:
        t.tool("Bash", {"command": "grep -n nan runs/exp1/train.log"}, "118:step 1170 loss=nan lr=3.0e-03")
    t.say("Line 118 reads `step 1170 loss=nan lr=3.0e-03`. " + CLAIM if backed else CLAIM)
    got = _decide(data, t, None)
    assert (got is None) == backed
    t.say("Hypothesis: the learning rate. Next probe: grep the log.")
    assert _decide(data, t, None) is None               # the reply read from the transcript is not a claim


def test_without_a_prompt_record_the_whole_transcript_is_the_turn(data):
    t = Transcript(seed="noprompt")
    t.say(CLAIM)                                        # one record: no prompt, no tool
    assert len([r for r in t.records if r.get("type") in ("user", "assistant")]) == 1
    assert _decide(data, t, CLAIM)


@pytest.mark.parametrize("where", ["missing", "dir", "empty-string", "number"])
def test_no_readable_transcript_fails_open(data, where):
    tpath = {"missing": str(data / "nope.jsonl"), "dir": str(data), "empty-string": "", "number": 42}[where]
    payload = stop_payload("fo", "x", str(data), CLAIM)
    payload["transcript_path"] = tpath
    assert evidence_guard.decide(payload) is None


def test_main_prints_one_json_line_or_nothing_and_always_exits_0(data, monkeypatch):
    path = _unbacked().write(str(data / "t.jsonl"))
    payload = stop_payload("main", path, str(data), CLAIM + " ZZBYTEZZ")
    raw = json.dumps(payload).encode().replace(b"ZZBYTEZZ", b"\xff")   # an invalid UTF-8 byte in the message
    out = _main(monkeypatch, raw)
    assert out.endswith("}\n") and out.count("\n") == 1
    obj = json.loads(out)
    assert set(obj) == {"decision", "reason"} and obj["decision"] == "block" and "/trainwreck:debug" in obj["reason"]
    for bad in (b"[1, 2]", b"{not json", b"", b'"text"', b"null"):
        assert _main(monkeypatch, bad) == ""


def test_a_prompt_of_one_training_word_puts_the_claim_in_scope(data):
    t = Transcript(seed="oneword")
    t.prompt("loss?")
    t.say(OFF_TOPIC)
    assert _decide(data, t, OFF_TOPIC)


def test_a_claim_of_exactly_90_characters_is_quoted_whole(data):
    claim = "The root cause is a learning rate of 3e-3, too high for fp16, so the loss goes NaN at step"
    claim = claim + "x" * (90 - len(claim))
    assert len(claim) == 90
    t = _unbacked(Transcript(seed="c90"))
    t.say(claim)
    assert '("%s")' % claim in _decide(data, t, claim)


def test_three_misquotes_are_two_named_and_one_counted(data):
    t = _smoke(Transcript(seed="mis3"))
    fakes = ["step %d loss=nan grad_norm=inf" % (200 + i) for i in range(3)]
    msg = "The run printed " + ", ".join("`%s`" % f for f in fakes) + ", so the root cause is the learning rate."
    t.say(msg)
    assert "`%s`, `%s` (and 1 more) as evidence" % (fakes[0], fakes[1]) in _decide(data, t, msg)


def test_reading_stops_at_the_turn_start_once_every_quote_is_found(data, monkeypatch):
    """The transcript is read back past this turn only while a quote is unmatched (README: "searches back to the
    8 MB cap only while some quote is still unmatched")."""
    t = Transcript(seed="stop")
    for i in range(5):                                  # five earlier turns the hook need not read
        t.prompt("show step %d" % i)
        t.tool("Bash", {"command": "sed -n %dp train.log" % i}, "step %d loss=2.3" % i)
        t.say("Here.")
        t.end_turn()
    _smoke(t)
    t.say(BACKED)
    read = []
    real = transcript_tail._record

    def counting(line):                                 # the lines parsed as records
        read.append(line)
        return real(line)
    monkeypatch.setattr(transcript_tail, "_record", counting)
    assert _decide(data, t, BACKED) is None
    assert not any(b"show step" in line for line in read)
    read.clear()
    msg = "Step 0 printed `step 0 loss=2.3`, and `step 48 loss=nan grad_norm=inf` now. " + CLAIM
    t.say(msg)
    assert _decide(data, t, msg) is None                # the unmatched quote sends it back to the first turn
    assert any(b"step 0 loss=2.3" in line for line in read)
    # earlier turns are parsed only where a record holds the unmatched quote's words ("step", "loss"): the
    # prompts ("show step 0") and the commands are skipped unparsed
    assert not any(b"show step" in line or b"sed -n" in line for line in read)


# ---------------------------------------------------------------- outputs kept outside the transcript; follow-ups

def _with_result(t, extra):
    """Give the last tool result record of t extra toolUseResult fields (the CLI's Agent / persisted shapes)."""
    rec = [r for r in t.records if r.get("type") == "user" and isinstance(r["message"]["content"], list)][-1]
    old = rec.get("toolUseResult")
    rec["toolUseResult"] = dict(old if isinstance(old, dict) else {}, **extra)


def test_a_quote_from_the_sub_agents_own_tool_output_backs_the_parent(data):
    t = Transcript(seed="agent")
    t.prompt("/trainwreck:diagnose runs/exp1")
    t.tool("Agent", {"subagent_type": "trainwreck:failure-diagnoser", "prompt": "Diagnose runs/exp1"},
           [{"type": "text", "text": "First NaN at step 120."}])
    _with_result(t, {"status": "completed", "agentId": "a1b2c3"})
    msg = "The sub-agent found `step 120 loss=nan lr=3.0`, so the root cause is the learning rate."
    t.say(msg)
    path = t.write(str(data / "t.jsonl"))
    assert "step 120 loss=nan lr=3.0" in (_decide(data, t, msg) or "")        # no sub-agent file: not found
    side = data / "t" / "subagents"
    side.mkdir(parents=True)
    sub = Transcript(seed="sub")
    sub.prompt("Diagnose runs/exp1")
    sub.tool("Bash", {"command": "grep -n nan runs/exp1/train.log"}, "3:step 120 loss=nan lr=3.0")
    sub.write(str(side / "agent-a1b2c3.jsonl"))
    assert evidence_guard.decide(stop_payload("sess-agent", path, str(data), msg)) is None
    sub2 = Transcript(seed="sub2")                                            # its input alone backs nothing
    sub2.prompt("Diagnose runs/exp1")
    sub2.tool("Bash", {"command": "grep -n 'step 120 loss=nan lr=3.0' runs/exp1/train.log"}, "(no output)")
    sub2.write(str(side / "agent-a1b2c3.jsonl"))
    assert evidence_guard.decide(stop_payload("sess-agent2", path, str(data), msg))


def test_a_quote_past_the_preview_of_a_persisted_output_is_found_in_the_saved_file(data):
    saved = data / "t" / "tool-results" / "b1.txt"
    saved.parent.mkdir(parents=True)
    saved.write_text("".join("step %d loss=2.%03d\n" % (i, i % 1000) for i in range(5000)) + "step 5000 loss=nan\n")
    t = Transcript(seed="persisted")
    t.prompt(PROMPT)
    t.tool("Bash", {"command": "cat runs/exp1/train.log"},
           "<persisted-output>\nOutput too large (90KB). Full output saved to: %s\n\nPreview (first 2KB):\nstep 0 "
           "loss=2.000\n</persisted-output>" % saved)
    _with_result(t, {"persistedOutputPath": str(saved)})
    msg = "The log ends with `step 5000 loss=nan`, so the root cause is the learning rate."
    t.say(msg)
    assert _decide(data, t, msg) is None
    outside = data / "elsewhere.txt"                                          # a path outside the session: not read
    outside.write_text("step 5000 loss=nan\n")
    t2 = Transcript(seed="persisted2")
    t2.prompt(PROMPT)
    t2.tool("Bash", {"command": "cat x"}, "<persisted-output>\nFull output saved to: %s\n</persisted-output>" % outside)
    _with_result(t2, {"persistedOutputPath": str(outside)})
    t2.say(msg)
    assert _decide(data, t2, msg, sid="p2")


def test_a_follow_up_without_a_tool_must_quote_earlier_tool_output(data):
    t = _smoke()
    t.say("The smoke run printed `step 48 loss=nan grad_norm=inf`.")
    t.end_turn()
    t.prompt("ok, so what is the root cause?")
    quoted = "The root cause is the lr: the smoke run printed `step 48 loss=nan grad_norm=inf`."
    t.say(quoted)
    assert _decide(data, t, quoted) is None                                   # quotes what a tool printed earlier
    bare = "The root cause is the lr, far too high for this model."
    t.say(bare)
    assert "quotes no output an earlier tool printed" in (_decide(data, t, bare, sid="f2") or "")
    wrong = quoted.replace("step 48", "step 49")
    t.say(wrong)
    assert "step 49 loss=nan grad_norm=inf" in (_decide(data, t, wrong, sid="f3") or "")


def test_a_quote_still_unmatched_at_the_earlier_turns_cap_lets_the_stop_through(data, monkeypatch):
    """Past EARLIER_CAP the quote may sit further back: it cannot be called fabricated (a false block is worse)."""
    t = Transcript(seed="earlier-cap")
    for i in range(40):
        t.prompt("show step %d" % i)
        t.tool("Bash", {"command": "sed -n %dp train.log" % i}, ("step %d loss=2.3 " % i) + "x" * 4000)
        t.say("Here.")
        t.end_turn()
    _smoke(t)
    msg = "Earlier the run printed `step 999 loss=nan grad_norm=inf`, so the root cause is the lr."
    t.say(msg)
    assert _decide(data, t, msg)                                  # the whole transcript read: not found, blocked
    monkeypatch.setattr(evidence_guard, "EARLIER_CAP", 64 << 10)
    assert _decide(data, t, msg, sid="capped") is None            # 64 KB read: it may be earlier, let through
