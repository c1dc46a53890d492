"""trainwreck evidence guard: a Claude Code Stop hook.

Blocks the stop, once per turn, when the last assistant message states the cause of an ML
training failure as fact and
  - no tool in the current turn returned output, and the reply quotes no output that a tool
    printed in an earlier turn (the follow-up case), or
  - a log line, error message or number it quotes appears in no tool output of the session
    (fabricated or misquoted).  Only what tools printed is evidence: the Bash/Read output, an
    Agent's report and its sub-agent's own tool outputs, a long output the CLI saved to a file;
    never a tool's input (a grep pattern, a file the assistant wrote) or the user's prompt.
The block reason quotes the claim, says what is unbacked and what would back it, and routes to
/trainwreck:debug (probe -> hypothesis -> smoke -> controls -> claim).  Hedged hypotheses,
questions, plans and answers that are not about a training failure pass.

Never blocks when stop_hook_active is true, blocks at most once per turn (a counter under
$CLAUDE_PLUGIN_DATA, or a private 0700 dir under $TMPDIR: guard_state.py), and fails open: any
unexpected input or error, or a decision past its time budget (budget.py), means exit 0 and no
output.  Standard library only; reads the transcript backwards from its end.
"""
import json
import os
import sys

import guard_state

MAX_STDIN = 8 << 20
TRANSCRIPT_CAP = 8 << 20     # read to find the turn's start, every record parsed
EARLIER_CAP = 16 << 20       # read in all; earlier turns only where an unmatched quote's words are
READINGS_CAP = 2 << 20       # read in all when only prose readings (0.3817) are looked for
MAX_BLOCKS_PER_TURN = 1
MAX_QUOTES = 300


def _count_block(payload, turn_key):
    """Record one more block for this turn; False when the cap is already reached."""
    store = guard_state.Store(payload)
    try:
        st = store.read()
        n = st.get("blocks", 0) if st.get("turn") == turn_key else 0
        if not isinstance(n, int) or n >= MAX_BLOCKS_PER_TURN:
            return False              # kept until the next turn: one block per turn, whatever follows
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
    if analysis is not None and not analysis.claims and not analysis.answer:
        return None
    tpath = payload.get("transcript_path")
    if not isinstance(tpath, str) or not tpath or not os.path.isfile(tpath):
        return None
    import quote_match
    import transcript_tail
    sources = quote_match.Sources()
    pending = _unique(analysis.quotes or analysis.readings) if analysis is not None else []
    checked = [0]

    def want_earlier():                 # keep reading earlier turns while a quote is unmatched
        # Each quote is checked only against the texts added since the last check: linear in what is read, where
        # checking everything again at every step was quadratic in the number of turns.
        if checked[0] < len(sources.texts):
            view = sources.since(checked[0])
            checked[0] = len(sources.texts)
            pending[:] = [q for q in pending if not quote_match.found(q.text, q.kind, view)]
        return bool(pending)

    def anchors():                      # the words a record must hold to match an unmatched quote
        groups = []
        for q in pending:
            g = quote_match.anchor(q.text)
            if g is None:
                return None
            groups.extend(g)
        return groups

    def read():
        # prose readings (no quote) have no words to skip by: they are looked for in the last 2 MB only
        cap = EARLIER_CAP if analysis is None or analysis.quotes else READINGS_CAP
        t = transcript_tail.scan(tpath, sources, TRANSCRIPT_CAP, want_earlier, anchors, cap)
        if want_earlier() and t.side:   # a sub-agent's tool outputs, a long output the CLI saved to a file
            transcript_tail.read_side_files(tpath, t, sources, want_earlier)
        return t

    turn = read()
    if turn.records == 0 or (turn.capped and not turn.found_start):
        return None                     # not enough of the transcript to judge: fail open
    if analysis is None:                # no usable last_assistant_message: take the reply from the transcript
        msg = turn.last_text
        analysis = claim_detector.analyse(msg)
        if not analysis.claims and not analysis.answer:
            return None
        pending.extend(_unique(analysis.quotes or analysis.readings))
        if pending:
            sources = quote_match.Sources()
            checked[0] = 0
            turn = read()
    if not analysis.domain and not claim_detector.analyse_domain(msg + "\n" + turn.prompt) and \
            not claim_detector.pasted_framework_traceback(turn.prompt):
        return None                     # a claim, but not about a training failure
    evidence = transcript_tail.evidence_results(turn)
    # what no view matched is checked once against everything (an ellipsis quote's parts may sit in two outputs)
    missing = [q.text for q in pending if not quote_match.found(q.text, q.kind, sources)]
    if claim_detector.general_question(turn.prompt) and not (evidence and missing):
        return None                     # the answer to a general question: it explains, it diagnoses no run
    if not analysis.claims and not analysis.quotes and not analysis.domain and \
            not claim_detector.asks_about_failure(turn.prompt):
        return None                     # an explaining reply, but not the answer to a failed run or a "why?"
    quotes = _unique(analysis.quotes)
    if not quotes:
        # no quote: its precise prose readings (0.3817) can still show a follow-up rests on earlier output (two at
        # least, every one found); they never make a reply fabricated
        readings = _unique(analysis.readings)
        quotes = readings if len(readings) >= 2 and not missing else []
        missing = []
    if missing and turn.capped:
        return None                     # the quote may sit before the read cap: it cannot be called fabricated
    if not missing and (evidence or quotes):
        # backed: a tool returned output in this turn; or a follow-up that runs no tool but quotes, verbatim, what
        # tools printed in earlier turns
        return None
    if not _count_block(payload, turn.start_key):
        return None
    claim = analysis.claim_texts[0] if analysis.claim_texts else (analysis.claims or [analysis.answer])[0]
    return _reason(claim, evidence, missing)


def _reason(claim, evidence, missing):
    said = _short(claim, 400)
    shown = ", ".join("`%s`" % _short(m, 80) for m in missing[:2])
    more = " (and %d more)" % (len(missing) - 2) if len(missing) > 2 else ""
    if evidence:
        return ("trainwreck evidence guard: the reply says \"%s\" and quotes %s%s as evidence, but no tool "
                "output of this session printed that text (fabricated or misquoted? a command's own text, a "
                "prompt or what the assistant wrote does not count). To back it, re-open the source with a tool "
                "and quote exactly what it prints, or drop the quote and say it is a hypothesis. %s"
                % (said, shown, more, ROUTE))
    printed = (" What it quotes (%s%s) no tool output of this session printed." % (shown, more)) if missing else ""
    return ("trainwreck evidence guard: the reply states a cause of the training failure as fact (\"%s\"), but "
            "no tool in this turn returned output that backs it, and it quotes no output an earlier tool printed.%s "
            "To back it, run a probe now (read the log, run `trainwreck diagnose` or a command) and quote the "
            "lines it prints; or, in a follow-up, quote verbatim the earlier tool output it rests on; or say it "
            "is a hypothesis. %s" % (said, printed, ROUTE))


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
