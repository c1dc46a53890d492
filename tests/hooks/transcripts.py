"""Build Claude Code transcripts (JSONL records) in the format CLI 2.1 writes.

Mirrors ../shared/cc-harness/samples/transcript.sample.jsonl: queue-operation records, the
prompt as a `user` record with a string content, `attachment` records, `api-request*`
records, one `assistant` record per content block (blocks of one reply share
`message.id`), `user` records holding `tool_result` blocks plus `toolUseResult`,
`isMeta` hook feedback, `system`/`stop_hook_summary`, `tools-used`, `last-prompt`,
`cost-state`.  Used by the labelled dataset builder and by the unit tests.
"""
import hashlib
import json

VERSION = "2.1.332"


class Transcript:
    def __init__(self, session_id="0b5f3c1e-6f2d-4c55-9a53-3c1f8a7d2e10", cwd="/home/dev/proj", seed="t"):
        self.sid = session_id
        self.cwd = cwd
        self.records = []
        self.parent = None
        self._n = 0
        self._seed = seed
        self._clock = 0
        self.prompt_id = None

    # ---------------------------------------------------------------- helpers
    def _id(self, kind):
        self._n += 1
        h = hashlib.sha1(("%s/%s/%d" % (self._seed, kind, self._n)).encode()).hexdigest()
        return "%s-%s-%s-%s-%s" % (h[:8], h[8:12], h[12:16], h[16:20], h[20:32])

    def _ts(self):
        self._clock += 137
        s, ms = divmod(self._clock, 1000)
        m, s = divmod(s, 60)
        return "2026-11-29T14:%02d:%02d.%03dZ" % (m % 60, s, ms)

    def _common(self):
        return {"userType": "external", "entrypoint": "cli", "cwd": self.cwd, "sessionId": self.sid,
                "version": VERSION, "gitBranch": "main"}

    def _add(self, rec, chain=True):
        self.records.append(rec)
        if chain and "uuid" in rec:
            self.parent = rec["uuid"]
        return rec

    # ---------------------------------------------------------------- records
    def prompt(self, text, attachments=True):
        self._add({"type": "queue-operation", "operation": "enqueue", "timestamp": self._ts(),
                   "sessionId": self.sid, "content": text if isinstance(text, str) else ""}, chain=False)
        self._add({"type": "queue-operation", "operation": "dequeue", "timestamp": self._ts(),
                   "sessionId": self.sid}, chain=False)
        self.prompt_id = self._id("prompt")
        rec = {"parentUuid": self.parent, "isSidechain": False, "promptId": self.prompt_id, "type": "user",
               "message": {"role": "user", "content": text}, "uuid": self._id("u"), "timestamp": self._ts(),
               "permissionMode": "default", "promptSource": "repl", "rowSource": "local"}
        rec.update(self._common())
        self._add(rec)
        if attachments:
            for att in ({"type": "environment", "snapshot": {"workingDirectory": self.cwd, "isGitRepo": True,
                                                             "platform": "linux", "shell": "bash"}},
                        {"type": "model", "identity": {"modelId": "claude-opus-5-5"},
                         "text": "You are powered by the model named Opus 5.5."},
                        {"type": "skill_listing", "content": "- trainwreck:diagnose: Use when a training run "
                         "crashed, hung, went NaN or ran out of memory.\n- trainwreck:debug: ..."},
                        {"type": "date", "date": "2026-11-29"}):
                a = {"parentUuid": self.parent, "isSidechain": False, "attachment": att, "type": "attachment",
                     "uuid": self._id("att"), "timestamp": self._ts()}
                a.update(self._common())
                self._add(a)
        self.api_request()
        return self

    def api_request(self):
        self._add({"type": "api-request-blob", "sessionId": self.sid,
                   "hash": hashlib.sha256(self._id("blob").encode()).hexdigest(),
                   "blob": {"tools": ["Bash", "Read", "Edit", "Skill", "Agent"]}}, chain=False)
        self._add({"type": "api-request", "sessionId": self.sid, "id": self._id("req"),
                   "timestamp": self._ts()}, chain=False)

    def assistant(self, blocks, stop_reason=None, msg_id=None):
        """One reply: a list of blocks, each written as its own record (shared message.id)."""
        mid = msg_id or "msg_" + self._id("m").replace("-", "")[:24]
        has_tool = any(b.get("type") == "tool_use" for b in blocks)
        for b in blocks:
            rec = {"parentUuid": self.parent, "isSidechain": False,
                   "message": {"id": mid, "type": "message", "role": "assistant", "model": "claude-opus-5-5",
                               "content": [b], "stop_reason": stop_reason or ("tool_use" if has_tool else "end_turn"),
                               "stop_sequence": None,
                               "usage": {"input_tokens": 1200, "output_tokens": 80,
                                         "cache_read_input_tokens": 0, "cache_creation_input_tokens": 0}},
                   "requestId": "req_" + mid[4:], "type": "assistant", "uuid": self._id("a"), "timestamp": self._ts()}
            rec.update(self._common())
            self._add(rec)
        return mid

    def say(self, text, thinking=None):
        blocks = []
        if thinking:
            blocks.append({"type": "thinking", "thinking": thinking, "signature": "sig" + self._id("s")[:16]})
        blocks.append({"type": "text", "text": text})
        mid = self.assistant(blocks)
        self._add({"type": "last-prompt", "lastPrompt": "…", "leafUuid": self.parent, "sessionId": self.sid},
                  chain=False)
        return mid

    def tool(self, name, tool_input, output, lead_text=None, is_error=False, stdout=True, thinking=None):
        """An assistant reply that calls one tool, then the user record with its result."""
        tid = "toolu_" + self._id("tool").replace("-", "")[:24]
        blocks = []
        if thinking:
            blocks.append({"type": "thinking", "thinking": thinking, "signature": "sig" + self._id("s")[:16]})
        if lead_text:
            blocks.append({"type": "text", "text": lead_text})
        blocks.append({"type": "tool_use", "id": tid, "name": name, "input": tool_input})
        self.assistant(blocks)
        self._add({"type": "tools-used", "tools": [name], "sessionId": self.sid}, chain=False)
        asst_uuid = self.parent
        content = output
        rec = {"parentUuid": self.parent, "isSidechain": False, "promptId": self.prompt_id, "type": "user",
               "message": {"role": "user", "content": [{"tool_use_id": tid, "type": "tool_result",
                                                        "content": content, "is_error": is_error}]},
               "uuid": self._id("tr"), "timestamp": self._ts(), "sourceToolAssistantUUID": asst_uuid,
               "permissionDecision": "allow"}
        if name == "Bash" and stdout:
            rec["toolUseResult"] = {"stdout": output if isinstance(output, str) else "", "stderr": "",
                                    "interrupted": False, "isImage": False, "noOutputExpected": False}
        elif isinstance(output, str):
            rec["toolUseResult"] = output
        rec.update(self._common())
        self._add(rec)
        self.api_request()
        return tid

    def read(self, path, text, lead_text=None, offset=1):
        """A Read tool call: numbered lines in the tool_result, raw text in toolUseResult.file."""
        numbered = "\n".join("%6d\u2192%s" % (i + offset, line) for i, line in enumerate(text.splitlines()))
        tid = self.tool("Read", {"file_path": path}, numbered, lead_text=lead_text)
        rec = next(r for r in reversed(self.records) if r.get("type") == "user")
        rec["toolUseResult"] = {"type": "text", "file": {
            "filePath": path, "content": text, "numLines": text.count("\n") + 1, "startLine": offset}}
        return tid

    def hook_feedback(self, reason):
        """What the CLI writes after a Stop hook blocked: isMeta user, attachment, summary."""
        rec = {"parentUuid": self.parent, "isSidechain": False, "promptId": self.prompt_id, "type": "user",
               "message": {"role": "user", "content": "Stop hook feedback:\n" + reason}, "isMeta": True,
               "rowSource": "hook", "hookText": True, "uuid": self._id("meta"), "timestamp": self._ts()}
        rec.update(self._common())
        self._add(rec)
        att = {"parentUuid": self.parent, "isSidechain": False, "type": "attachment", "uuid": self._id("att"),
               "attachment": {"type": "hook_blocking_error", "hookName": "Stop", "hookEvent": "Stop",
                              "blockingError": {"blockingError": reason, "command": "sh -c '...' evidence_guard.py"}},
               "timestamp": self._ts()}
        att.update(self._common())
        self._add(att)
        self.stop_summary(errors=[reason])
        self.api_request()

    def stop_summary(self, errors=()):
        rec = {"parentUuid": self.parent, "isSidechain": False, "type": "system", "subtype": "stop_hook_summary",
               "hookCount": 1, "hookInfos": [{"command": "sh -c '...' evidence_guard.py", "durationMs": 41}],
               "hookErrors": list(errors), "preventedContinuation": False, "stopReason": "",
               "hasOutput": bool(errors), "level": "suggestion", "uuid": self._id("sys"), "timestamp": self._ts()}
        rec.update(self._common())
        self._add(rec)

    def skill_expansion(self, text):
        rec = {"parentUuid": self.parent, "isSidechain": False, "type": "user", "isMeta": True,
               "message": {"role": "user", "content": [{"type": "text", "text": text}]},
               "uuid": self._id("skill"), "timestamp": self._ts()}
        rec.update(self._common())
        self._add(rec)

    def end_turn(self):
        self.stop_summary()
        self._add({"type": "cost-state", "sessionId": self.sid, "totalCostUSD": 0.0123,
                   "totalAPIDuration": 4100, "totalDuration": 9300}, chain=False)

    # ---------------------------------------------------------------- output
    def jsonl(self):
        return "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in self.records)

    def write(self, path):
        with open(path, "w", encoding="utf-8") as f:
            f.write(self.jsonl())
        return path


def stop_payload(session_id, transcript_path, cwd, message, active=False):
    return {"session_id": session_id, "transcript_path": transcript_path, "cwd": cwd,
            "prompt_id": "f5b1d0cc-ff17-4b33-9564-172d3bac7ffc", "permission_mode": "default",
            "effort": {"level": "medium"}, "hook_event_name": "Stop", "stop_hook_active": active,
            "last_assistant_message": message, "background_tasks": [], "session_crons": []}


def filler_turns(size_bytes, session_id="filler"):
    """Earlier turns with large tool outputs, as JSONL text of about size_bytes."""
    t = Transcript(session_id=session_id, seed="filler")
    log = "".join("step %d loss=%.4f lr=1.0e-04 grad_norm=%.3f\n" % (i, 2.5 - i * 1e-5, 0.8 + (i % 7) * 0.01)
                  for i in range(4000))
    t.prompt("show me the latest metrics of runs/exp0")
    t.tool("Bash", {"command": "tail -n 4000 runs/exp0/train.log"}, log)
    t.say("Here are the last 4000 steps; loss is still decreasing slowly.")
    t.end_turn()
    block = t.jsonl()
    n = max(1, size_bytes // len(block))
    return block * n
