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
import os
import re
import stat

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


def blocks_backward(f, size, cap, state=None):
    """(data, cut) for each block read from the end of f towards its start: `data` is the block's bytes with
    the carried start of the next line, data[cut + 1:] its complete lines (split them with block_lines only when
    they are wanted).  state["capped"] is set when the cap (bytes, or a callable returning them) stopped the walk
    before the start of the file."""
    pos, carry, total, block = size, b"", 0, 1 << 16
    limit = cap if callable(cap) else (lambda: cap)   # a callable cap may grow as the walk goes on
    while pos > 0:
        c = limit()
        if total >= c:
            if state is not None:
                state["capped"] = True
            return
        n = min(block, pos, c - total)
        pos -= n
        f.seek(pos)
        data = f.read(n) + carry
        total += n
        block = min(block * 2, 1 << 21)
        cut = data.find(b"\n")
        if cut < 0:                   # no line ends in this block: it is all the start of a longer line
            carry = data
            continue
        carry = data[:cut]
        yield data, cut
    if carry.strip():
        yield carry, -1


def block_lines(data, cut):
    """The complete lines of a block, newest first."""
    return [line for line in reversed(data[cut + 1:].split(b"\n")) if line.strip()]


def lines_backward(f, size, cap, state=None):
    """Complete lines from the end of f towards its start (see blocks_backward)."""
    for data, cut in blocks_backward(f, size, cap, state):
        yield from block_lines(data, cut)


def _record(line):
    if b'"user"' not in line and b'"assistant"' not in line:
        return None
    try:
        rec = json.loads(line)
    except (ValueError, RecursionError):   # RecursionError: JSON nested too deep for the parser
        return None
    return rec if isinstance(rec, dict) else None


# Lines parsed whatever the quotes: those that name an output kept in another file (a sub-agent's transcript, a
# persisted output: the CLI writes these keys in this case), and those holding an ANSI colour code, which the
# matcher deletes before comparing and which may split a quote's token in two (JSON writes ESC as \u001b).
RAW_KEYS = (b'"agentId"', b'"persistedOutputPath"', b"Full output saved to", b"u001b")


def _holds(low, groups):
    return any(all(k in low for k in g) for g in groups)


def records_backward(path, cap, state=None, skip=None):
    """Message records from the end of the file backwards.  `skip(data)`, when given, is asked about each block
    before its lines are parsed: it returns None to parse every line, or groups (tuples) of lowercase byte strings;
    then only the lines holding every string of some group are parsed (the others cannot matter to the caller).
    It is asked again, for the rest of a block, when the caller sets state["refilter"]."""
    with open(path, "rb") as f:
        f.seek(0, 2)
        size = f.tell()
        for data, cut in blocks_backward(f, size, cap, state):
            check()
            groups = skip(data) if skip is not None else None
            if groups is not None:
                if not groups:
                    return                # the caller needs nothing more
                low = data.lower()
                groups = [g for g in groups if all(k in low for k in g)]
                if not groups and not any(x in data for x in RAW_KEYS):
                    continue
            for line in block_lines(data, cut):
                if state is not None and state.pop("refilter", False) and skip is not None:
                    groups = skip(data)   # the caller's needs changed inside this block (the turn start)
                    if groups is not None and not groups:
                        return
                if groups is not None and not _holds(line.lower(), groups) and not any(x in line for x in RAW_KEYS):
                    continue
                rec = _record(line)
                if rec is not None:
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
    if _wrote(rec):
        return out                    # Write / Edit: the content is what the assistant wrote, not an output
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


# A probe that could not run shows nothing: the shell's own complaint about the command or its file.
_PROBE_FAILED = re.compile(r"^(?:exit code \d+\s*)?(?:[^\n:]{0,200}: )?(?:[^\n:]{0,200}: )?(?:no such file or directory|"
                           r"command not found|permission denied|is a directory|not a directory|no such process)"
                           r"\s*$", re.I)


def _wrote(rec):
    """A Write / Edit result: what it shows (the content, a `cat -n` snippet of the edit) the assistant wrote."""
    r = rec.get("toolUseResult")
    return isinstance(r, dict) and isinstance(r.get("filePath"), str) and (
        "structuredPatch" in r or r.get("type") in ("create", "update") or "oldString" in r)


def _has_output(text):
    t = text.strip()
    if t.lower() in _EMPTY_RESULTS or t.startswith("<tool_use_error>"):
        return False
    if t.startswith("Exit code") and "\n" not in t:
        return False
    if len(t) < 600 and _PROBE_FAILED.match(t):
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
        self.side = []            # ("agent", agent id) | ("persisted", path): outputs kept outside the transcript


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


_SAVED_TO = "Full output saved to: "


def _side_refs(rec, blocks):
    out = []
    r = rec.get("toolUseResult")
    if isinstance(r, dict):
        if isinstance(r.get("agentId"), str):
            out.append(("agent", r["agentId"]))
        if isinstance(r.get("persistedOutputPath"), str):
            out.append(("persisted", r["persistedOutputPath"]))
    for b in blocks:
        if b.get("type") == "tool_result":
            text = _result_text(b)
            i = text.find(_SAVED_TO, 0, 400)
            if i >= 0:
                out.append(("persisted", text[i + len(_SAVED_TO):].split("\n", 1)[0].strip()))
    return out


def tool_outputs(rec):
    """(tool result blocks, other output texts) of a user record that carries tool results; None otherwise.
    Only what a tool printed counts: never its input, never text the assistant wrote."""
    blocks = _blocks(rec)
    results = [b for b in blocks if b.get("type") == "tool_result"]
    if not results and "toolUseResult" not in rec:
        return None
    if _wrote(rec):
        return [], [], blocks
    return results, _extra_texts(rec), blocks


def scan(path, sources, cap=8 << 20, want_earlier=lambda: False, anchors=lambda: None, earlier_cap=None):
    """Walk the transcript backwards.  Fills `sources` with tool outputs (never tool inputs, the user's prompts or
    the assistant's own text) and returns a Turn.  The current turn is read whole.  Before its start, records are
    read only while want_earlier() is true (quotes not yet found), and only those that can matter: anchors()
    returns, for each unfound quote, the lowercase words every match of it holds (None: it cannot tell, read them
    all), and only the lines holding all the words of one (or naming an output file, RAW_KEYS) are parsed.  `cap`
    bytes are read at most to find the turn's start (each record parsed); `earlier_cap` (default: cap) in all."""
    turn = Turn()
    last_id = None
    last_done = False
    state = {}
    stop = [False]

    def skip(_data):
        if not turn.found_start:
            return None
        if not want_earlier():
            stop[0] = True
            return ()
        return anchors()

    total_cap = cap if earlier_cap is None else earlier_cap
    for rec in records_backward(path, lambda: total_cap if turn.found_start else cap, state, skip):
        if stop[0]:
            break
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
            outs = tool_outputs(rec)
            if outs is not None:
                results, extra, blocks = outs
                for b in results:
                    text = _result_text(b)
                    sources.add(text)
                    if not turn.found_start:
                        turn.results.append((b.get("tool_use_id"), text, _has_output(text)))
                for x in extra:
                    sources.add(x)
                turn.side.extend(_side_refs(rec, blocks))
            elif not turn.found_start and is_prompt(rec):
                turn.found_start = True
                turn.prompt = "\n".join(b.get("text", "") for b in _blocks(rec)
                                        if b.get("type") == "text" and isinstance(b.get("text"), str))
                turn.start_key = str(rec.get("uuid") or rec.get("promptId") or "")
                if not want_earlier():
                    break
                state["refilter"] = True    # the rest of this block: only the records an unmatched quote needs
    turn.capped = bool(state.get("capped"))
    return turn


_AGENT_ID = re.compile(r"[A-Za-z0-9_-]{1,128}")
SIDE_FILE_CAP = 4 << 20       # bytes read from one sub-agent transcript or persisted output
SIDE_FILES = 32               # files read at most


def _open_inside(path, root):
    """A read-only handle on a regular file under root (no link at the end, resolved path inside root), or None."""
    real = os.path.realpath(path)
    if os.path.commonpath([real, root]) != root:
        return None
    fd = os.open(real, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0))
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None
        f, fd = os.fdopen(fd, "rb"), None
        return f
    finally:
        if fd is not None:
            os.close(fd)


def _read_bounded(f, turn):
    """The whole file when it holds at most SIDE_FILE_CAP bytes; else its first and last halves of that, and the
    turn is marked capped (what sits between is unread: a quote not found may be there)."""
    size = os.fstat(f.fileno()).st_size
    if size <= SIDE_FILE_CAP:
        return f.read(SIDE_FILE_CAP)
    half = SIDE_FILE_CAP // 2
    head = f.read(half)
    f.seek(size - half)
    turn.capped = True
    return head + b"\n" + f.read(half)


def read_side_files(tpath, turn, sources, want_more):
    """Add the outputs kept outside the transcript to `sources`, newest first, while want_more(): a sub-agent's
    tool outputs (its transcript <session>/subagents/agent-<id>.jsonl) and a persisted tool output (the file the
    CLI saved a long output to).  Only files under the session's own folder (the transcript's path without
    .jsonl) are read, each up to SIDE_FILE_CAP bytes (its start and its end when it is longer)."""
    if not tpath.endswith(".jsonl"):
        return
    session = os.path.realpath(tpath[:-6])    # <project>/<session>/: subagents/, tool-results/
    root = session
    seen = set()
    for kind, ref in turn.side:
        if not want_more() or len(seen) >= SIDE_FILES:
            return
        if (kind, ref) in seen:
            continue
        seen.add((kind, ref))
        check()
        try:
            if kind == "agent":
                if not _AGENT_ID.fullmatch(ref):
                    continue
                f = _open_inside(os.path.join(session, "subagents", "agent-%s.jsonl" % ref), root)
                if f is None:
                    continue
                with f:
                    data = _read_bounded(f, turn)
                for line in data.split(b"\n"):
                    rec = _record(line)
                    outs = tool_outputs(rec) if rec is not None and rec.get("type") == "user" else None
                    if outs is not None:
                        for b in outs[0]:
                            sources.add(_result_text(b))
                        for x in outs[1]:
                            sources.add(x)
            else:
                f = _open_inside(ref, root) if os.path.isabs(ref) else None
                if f is None:
                    continue
                with f:
                    sources.add(_read_bounded(f, turn).decode("utf-8", "replace"))
        except (OSError, ValueError):
            continue


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
