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
under $CLAUDE_PLUGIN_DATA, or a private 0700 dir under $TMPDIR: guard_state.py), and fails
open: any unexpected input or error, or a decision past its time budget (budget.py), means
exit 0 and no output.  Standard library only; reads the transcript backwards from its end.
"""
import json
import os
import sys

import guard_state

MAX_STDIN = 8 << 20
TRANSCRIPT_CAP = 8 << 20
MAX_BLOCKS_PER_TURN = 2
MAX_QUOTES = 300


def _clear_state(payload):
    store = guard_state.Store(payload)
    store.clear()
    store.close()


def _count_block(payload, turn_key):
    """Record one more block for this turn; False when the cap is already reached."""
    store = guard_state.Store(payload)
    try:
        st = store.read()
        n = st.get("blocks", 0) if st.get("turn") == turn_key else 0
        if not isinstance(n, int) or n >= MAX_BLOCKS_PER_TURN:
            store.clear()
            return False
        store.write({"turn": turn_key, "blocks": n + 1})
        return True
    finally:
        store.close()


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
    """Return a block reason, or None to let the stop through (also when the decision runs out of time)."""
    if _active(payload.get("stop_hook_active")):
        return None
    import budget
    budget.start()
    try:
        return _decide(payload)
    except budget.OutOfTime:
        return None
    finally:
        budget.stop()


def _decide(payload):
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

    checked = [-1]

    def want_earlier():                 # keep reading earlier turns while a quote is unmatched
        # Re-checked only once the sources have grown by a quarter (or at the first prompt): checking at every
        # prompt made thousands of earlier prompts quadratic. Reading on past the point where all were found
        # changes nothing: more sources only find more, and the quotes are checked again at the end.
        if checked[0] >= 0 and sources.size < checked[0] + max(1 << 16, checked[0] >> 2):
            return bool(pending)
        checked[0] = sources.size
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
