"""trainwreck evidence guard: a Claude Code Stop hook.

Blocks the stop, once, when the last assistant message states the cause of an ML
training failure as fact and
  - no tool in the current turn returned output (nothing was probed), or
  - a log line, error message or number it quotes appears in no tool output of the
    session (fabricated or misquoted).
The block reason routes to /trainwreck:debug (probe -> hypothesis -> smoke -> controls
-> claim).  Hedged hypotheses, questions, plans and answers that are not about a
training failure pass.

Never blocks when stop_hook_active is true, blocks at most twice per turn (a counter
under $CLAUDE_PLUGIN_DATA), and fails open: any unexpected input or error means exit 0
and no output.  Standard library only; reads the transcript backwards from its end.
"""
import json
import os
import sys

MAX_STDIN = 8 << 20
TRANSCRIPT_CAP = 8 << 20
MAX_BLOCKS_PER_TURN = 2
MAX_QUOTES = 300


def _state_path(payload):
    base = os.environ.get("CLAUDE_PLUGIN_DATA") or ""
    if not base:
        base = os.environ.get("TMPDIR") or os.environ.get("TEMP") or os.environ.get("TMP") or "/tmp"
        base = os.path.join(base, "trainwreck-hooks")
    sid = "".join(c for c in str(payload.get("session_id") or "nosession") if c.isalnum() or c in "-_")[:80]
    return os.path.join(base, "evidence-guard", (sid or "nosession") + ".json")


def _read_state(path):
    try:
        with open(path, encoding="utf-8") as f:
            st = json.load(f)
        return st if isinstance(st, dict) else {}
    except (OSError, ValueError):
        return {}


def _clear_state(payload):
    try:
        p = _state_path(payload)
        if os.path.exists(p):
            os.remove(p)
    except OSError:
        pass


def _count_block(payload, turn_key):
    """Record one more block for this turn; False when the cap is already reached."""
    path = _state_path(payload)
    st = _read_state(path)
    n = st.get("blocks", 0) if st.get("turn") == turn_key else 0
    if not isinstance(n, int) or n >= MAX_BLOCKS_PER_TURN:
        _clear_state(payload)
        return False
    try:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w", encoding="utf-8") as f:
            json.dump({"turn": turn_key, "blocks": n + 1}, f)
    except OSError:
        pass
    return True


def _short(text, n=90):
    text = " ".join(str(text).split())
    return text if len(text) <= n else text[: n - 1] + "…"


ROUTE = ("Follow /trainwreck:debug: probe (read the log, run the engine or a command) -> hypothesis -> "
         "smoke -> controls -> claim, and quote the exact lines you found; or say plainly that it is a "
         "hypothesis and name the next probe.")


def _unique(quotes, limit=MAX_QUOTES):
    """Distinct quotes, at most `limit` of them (a reply that pastes a whole log is checked on its first lines)."""
    seen, out = set(), []
    for q in quotes:
        if q.text not in seen:
            seen.add(q.text)
            out.append(q)
            if len(out) >= limit:
                break
    return out


def _active(value):
    """stop_hook_active: false only when it says so; anything else (true, odd types) lets the stop through."""
    return value not in (None, False, 0, "", "false", "False", "0")


def decide(payload):
    """Return a block reason, or None to let the stop through."""
    if _active(payload.get("stop_hook_active")):
        return None
    import claim_detector
    msg = payload.get("last_assistant_message")
    analysis = claim_detector.analyse(msg) if isinstance(msg, str) else None
    if analysis is not None and not analysis.claims:
        _clear_state(payload)
        return None
    tpath = payload.get("transcript_path")
    if not isinstance(tpath, str) or not tpath or not os.path.isfile(tpath):
        return None
    import quote_match
    import transcript_tail
    sources = quote_match.Sources()
    pending = _unique(analysis.quotes) if analysis is not None else []

    def want_earlier():                 # keep reading earlier turns while a quote is unmatched
        pending[:] = [q for q in pending if not quote_match.found(q.text, q.kind, sources)]
        return bool(pending)

    turn = transcript_tail.scan(tpath, sources, TRANSCRIPT_CAP, want_earlier)
    if turn.records == 0 or (turn.capped and not turn.found_start):
        return None                     # not enough of the transcript to judge: fail open
    if analysis is None:                # no usable last_assistant_message: take the reply from the transcript
        msg = turn.last_text
        analysis = claim_detector.analyse(msg)
        if not analysis.claims:
            return None
        pending.extend(_unique(analysis.quotes))
        if pending:
            turn = transcript_tail.scan(tpath, sources, TRANSCRIPT_CAP, want_earlier)
    if not analysis.domain and not claim_detector.analyse_domain(msg + "\n" + turn.prompt):
        _clear_state(payload)
        return None                     # a claim, but not about a training failure
    evidence = transcript_tail.evidence_results(turn)
    missing = [q.text for q in _unique(analysis.quotes) if not quote_match.found(q.text, q.kind, sources)]
    if evidence and not missing:
        _clear_state(payload)
        return None
    if not _count_block(payload, turn.start_key):
        return None
    return _reason(analysis.claims[0], evidence, missing)


def _reason(claim, evidence, missing):
    if not evidence:
        return ("trainwreck evidence guard: this reply states a cause of the training failure as fact "
                "(\"%s\") but no tool in this turn returned output that backs it. %s" % (_short(claim), ROUTE))
    shown = ", ".join("`%s`" % _short(m, 80) for m in missing[:2])
    more = " (and %d more)" % (len(missing) - 2) if len(missing) > 2 else ""
    return ("trainwreck evidence guard: the reply quotes %s%s as evidence, but that text appears in no "
            "tool output of this session (fabricated or misquoted?). Re-open the source and quote it "
            "exactly, or drop it. %s" % (shown, more, ROUTE))


def main():
    try:
        raw = sys.stdin.buffer.read(MAX_STDIN + 1)
        if len(raw) > MAX_STDIN:
            return 0
        payload = json.loads(raw.decode("utf-8", "replace"))
        if not isinstance(payload, dict):
            return 0
        reason = decide(payload)
        if reason:
            sys.stdout.write(json.dumps({"decision": "block", "reason": reason}) + "\n")
    except BaseException:  # fail open: never break the user's session
        return 0
    return 0


if __name__ == "__main__":
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    try:
        code = main()
    except BaseException:
        code = 0
    sys.exit(code)
