"""Read the end of a Claude Code transcript (JSONL) backwards, one record at a time.

Never reads the whole file: blocks are read from the end towards the start, at most
`cap` bytes in all.  A partial last line (the CLI may still be writing) and any line
that is not a JSON object are skipped.  When the cap is hit the partial first line of
what was read is dropped and the caller works with what it has.

Turn structure (Claude Code 2.1):
  user (prompt, string or text blocks)          <- the turn starts here
  attachment / api-request* / ... records
  assistant (one record per content block, blocks of one reply share message.id)
  user (tool_result blocks, toolUseResult)      <- not a turn start
  user (isMeta, "Stop hook feedback: ...")      <- not a turn start
  system (stop_hook_summary) ...
"""
import json

from budget import check

BOOKKEEPING_TOOLS = {
    "TodoWrite", "Skill", "ToolSearch", "Write", "Edit", "MultiEdit", "NotebookEdit",
    "ExitPlanMode", "EnterPlanMode", "TaskCreate", "TaskUpdate", "TaskList", "TaskGet",
    "TaskStop", "CronCreate", "CronDelete", "CronList", "ScheduleWakeup", "EnterWorktree",
    "ExitWorktree", "SendMessage", "AskUserQuestion", "ListAgents",
}
_NOT_PROMPTS = ("Stop hook feedback:", "<system-reminder>", "[Request interrupted")
_EMPTY_RESULTS = ("", "(no content)", "(no output)", "(bash completed with no output)",
                  "no matches found", "no files found")


def lines_backward(f, size, cap, state=None):
    """Complete lines from the end of f towards its start.  state["capped"] is set when
    the cap stopped the walk before the start of the file."""
    pos, carry, total, block = size, b"", 0, 1 << 16
    while pos > 0:
        if total >= cap:
            if state is not None:
                state["capped"] = True
            return
        n = min(block, pos, cap - total)
        pos -= n
        f.seek(pos)
        chunk = f.read(n)
        total += n
        parts = (chunk + carry).split(b"\n")
        carry = parts[0]
        for line in reversed(parts[1:]):
            if line.strip():
                yield line
        block = min(block * 2, 1 << 21)
    if carry.strip():
        yield carry


def records_backward(path, cap, state=None):
    with open(path, "rb") as f:
        f.seek(0, 2)
        size = f.tell()
        for line in lines_backward(f, size, cap, state):
            if b'"user"' not in line and b'"assistant"' not in line:
                continue
            try:
                rec = json.loads(line)
            except (ValueError, RecursionError):   # RecursionError: JSON nested too deep for the parser
                continue
            if isinstance(rec, dict):
                yield rec


def _blocks(rec):
    msg = rec.get("message")
    content = msg.get("content") if isinstance(msg, dict) else None
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    return [b for b in content if isinstance(b, dict)] if isinstance(content, list) else []


def _result_text(block):
    c = block.get("content")
    if isinstance(c, str):
        return c
    if isinstance(c, list):
        return "\n".join(b.get("text", "") for b in c if isinstance(b, dict) and isinstance(b.get("text"), str))
    return ""


def _extra_texts(rec):
    r = rec.get("toolUseResult")
    out = []
    if isinstance(r, dict):
        for k in ("stdout", "stderr", "content", "output", "result"):
            if isinstance(r.get(k), str):
                out.append(r[k])
        f = r.get("file")
        if isinstance(f, dict) and isinstance(f.get("content"), str):
            out.append(f["content"])
    elif isinstance(r, str):
        out.append(r)
    return out


def _has_output(text):
    t = text.strip()
    if t.lower() in _EMPTY_RESULTS or t.startswith("<tool_use_error>"):
        return False
    if t.startswith("Exit code") and "\n" not in t:
        return False
    return True


class Turn:
    def __init__(self):
        self.found_start = False
        self.start_key = ""
        self.prompt = ""
        self.results = []         # (tool_use_id, text, has_output) in this turn
        self.tool_names = {}      # tool_use_id -> name (this turn and earlier)
        self.last_text = ""       # text of the last assistant reply (all its records)
        self.records = 0
        self.capped = False       # the read cap was hit before the start of the file


def is_prompt(rec):
    """A real user prompt: not a tool result, not hook feedback, not a sidechain record."""
    if rec.get("type") != "user" or rec.get("isMeta") or rec.get("isSidechain"):
        return False
    if rec.get("isCompactSummary") or rec.get("isVisibleInTranscriptOnly") or "toolUseResult" in rec:
        return False
    blocks = _blocks(rec)
    if not blocks or any(b.get("type") == "tool_result" for b in blocks):
        return False
    first = next((b.get("text") for b in blocks if b.get("type") == "text" and isinstance(b.get("text"), str)), "")
    return not first.lstrip().startswith(_NOT_PROMPTS)     # hook feedback written without isMeta


def scan(path, sources, cap=8 << 20, want_earlier=lambda: False):
    """Walk the transcript backwards.  Fills `sources` (tool outputs, tool inputs, prompts)
    and returns a Turn.  After the turn start, keeps reading earlier records only while
    want_earlier() is true (quotes not yet found)."""
    turn = Turn()
    last_id = None
    last_done = False
    state = {}
    for rec in records_backward(path, cap, state):
        turn.records += 1
        if not turn.records & 1023:
            check()
        t = rec.get("type")
        if t == "assistant" and not rec.get("isSidechain"):
            msg = rec.get("message") if isinstance(rec.get("message"), dict) else {}
            mid = msg.get("id")
            texts = []
            for b in _blocks(rec):
                bt = b.get("type")
                if bt == "tool_use" and isinstance(b.get("id"), str):
                    turn.tool_names[b["id"]] = b.get("name") or ""
                    inp = b.get("input")
                    if isinstance(inp, dict):
                        for v in inp.values():
                            if isinstance(v, str):
                                sources.add(v)
                elif bt == "text" and isinstance(b.get("text"), str):
                    texts.append(b["text"])
            if not turn.found_start and not last_done:
                if last_id is None and texts:
                    last_id, turn.last_text = mid, "\n".join(texts)
                elif last_id is not None and mid == last_id and texts:
                    turn.last_text = "\n".join(texts) + "\n" + turn.last_text
                elif last_id is not None and mid != last_id:
                    last_done = True
        elif t == "user":
            blocks = _blocks(rec)
            if any(b.get("type") == "tool_result" for b in blocks) or "toolUseResult" in rec:
                for b in blocks:
                    if b.get("type") == "tool_result":
                        text = _result_text(b)
                        sources.add(text)
                        if not turn.found_start:
                            turn.results.append((b.get("tool_use_id"), text, _has_output(text)))
                for x in _extra_texts(rec):
                    sources.add(x)
            elif is_prompt(rec):
                text = "\n".join(b.get("text", "") for b in blocks
                                 if b.get("type") == "text" and isinstance(b.get("text"), str))
                sources.add(text)
                if not turn.found_start:
                    turn.found_start = True
                    turn.prompt = text
                    turn.start_key = str(rec.get("uuid") or rec.get("promptId") or "")
                    if not want_earlier():
                        break
                elif not want_earlier():
                    break
    turn.capped = bool(state.get("capped"))
    return turn


def evidence_results(turn):
    """Tool results of this turn that returned output from a tool that can show evidence."""
    out = []
    for tid, text, has_output in turn.results:
        if not has_output:
            continue
        if turn.tool_names.get(tid, "") in BOOKKEEPING_TOOLS:
            continue
        out.append(text)
    return out
