"""Hostile Stop-hook inputs, generated (nothing here is a real transcript): each case is a transcript plus the
payload Claude Code would send, built so that one piece of the hook does its worst work. Shared by
tests/hooks/test_hook_hostile.py (each case under 1 s, the hook failing open or deciding) and
bench/hook_latency.py (the worst case as a ratio to a plain payload).

The shapes are the outside probe's (issue 10): a 1,500-space heading, a quote of 20+ numbers against runs of
digits, a huge transcript line, deep JSON; and what the same reading finds next to them: a label line of spaces,
thousands of prompt records behind an unmatched quote (the reader re-checks its quotes at every prompt), hundreds
of distinct unmatched quotes against megabytes of tool output, runs of backticks.
"""
import os

from transcripts import Transcript, stop_payload

PROMPT = "why is my loss NaN? the run is in runs/exp1"
CLAIM = "The root cause is a learning rate that is too high, so the loss went NaN at step 120."
LOG = "3:step 120 loss=nan lr=3.0"
NUMBERS = " ".join(str(i) for i in range(1, 25))  # a quote of 24 numbers


def _plain(t):
    t.prompt(PROMPT)
    t.tool("Bash", {"command": "grep -n nan runs/exp1/train.log"}, LOG)
    return t


def _write_raw(path, lines):
    with open(path, "w", encoding="utf-8") as f:
        for line in lines:
            f.write(line + "\n")
    return path


def plain(d):
    """The reference: a backed claim on a small session."""
    t = _plain(Transcript(seed="plain"))
    msg = "The log shows `step 120 loss=nan lr=3.0`. " + CLAIM
    t.say(msg)
    return t.write(os.path.join(d, "plain.jsonl")), msg


def heading_spaces(d):
    t = _plain(Transcript(seed="heading"))
    msg = "# " + " " * 1500 + "x\n" + "##" + " " * 1500 + "#" + " " * 1500 + "!\n" + CLAIM
    t.say(msg)
    return t.write(os.path.join(d, "heading.jsonl")), msg


def label_spaces(d):
    t = _plain(Transcript(seed="label"))
    msg = "- " + " " * 3000 + "x" + " " * 3000 + "\n" + " " * 3000 + "Root cause" + " " * 3000 + "\n" + CLAIM
    t.say(msg)
    return t.write(os.path.join(d, "label.jsonl")), msg


def many_numbers(d):
    """A quote of 24 numbers; the tool output holds the quote's anchor and long runs of digits and of spaced ones."""
    t = Transcript(seed="numbers")
    t.prompt(PROMPT)
    out = "1" * 60 + " q zz\n" + "1 " * 40000 + "q zz\n" + "1." * 20000 + " zz\n" + "1,1 " * 10000 + "zz"
    t.tool("Bash", {"command": "cat runs/exp1/train.log"}, out)
    msg = "The log shows `%s zz`, so the root cause is the learning rate." % NUMBERS
    t.say(msg)
    return t.write(os.path.join(d, "numbers.jsonl")), msg


def huge_line(d):
    """One tool result of 12 MB on one line: more than the reader's 8 MB cap."""
    t = _plain(Transcript(seed="huge"))
    t.tool("Bash", {"command": "cat big.log"}, "x" * (12 << 20))
    msg = "The log shows `step 130 loss=nan lr=3.0`. " + CLAIM
    t.say(msg)
    return t.write(os.path.join(d, "huge.jsonl")), msg


def deep_json(d):
    """A transcript line nested 200,000 deep (json.loads raises RecursionError, not ValueError) before the turn."""
    t = _plain(Transcript(seed="deep"))
    msg = "The log shows `step 120 loss=nan lr=3.0`. " + CLAIM
    t.say(msg)
    lines = t.jsonl().splitlines()
    deep = '{"type": "user", "message": ' + "[" * 200000 + "]" * 200000 + "}"
    return _write_raw(os.path.join(d, "deep.jsonl"), lines[:-1] + [deep] + lines[-1:]), msg


def many_prompts(d):
    """20,000 earlier prompts, 60 KB of tool output each tenth, and a quote found nowhere: the reader re-checks
    its pending quotes at every prompt it passes."""
    t = Transcript(seed="prompts")
    for i in range(20000):
        t.prompt("p%d loss is nan at step %d" % (i, i), attachments=False)
        if i % 10 == 0:
            t.tool("Bash", {"command": "tail train.log"}, "step 1 loss=2.3 lr 1 2 3\n" * 2500)
    t.prompt(PROMPT)
    t.tool("Bash", {"command": "grep -n nan runs/exp1/train.log"}, LOG)
    msg = "The log shows `step 130 loss=nan lr=3.0 1 2 3 4 5 6`. " + CLAIM
    t.say(msg)
    return t.write(os.path.join(d, "prompts.jsonl")), msg


def many_quotes(d):
    """300 distinct quotes found nowhere, each with numbers, against 6 MB of tool output of the same shape."""
    t = Transcript(seed="quotes")
    t.prompt(PROMPT)
    t.tool("Bash", {"command": "cat train.log"}, "step 1 loss=2.3 lr=0.1 grad 4.5\n" * 190000)
    quotes = " ".join("`step %d loss=%d.5 lr=0.%d grad %d`" % (i, i, i, i) for i in range(1000, 1400))
    msg = "The log shows %s. %s" % (quotes, CLAIM)
    t.say(msg)
    return t.write(os.path.join(d, "quotes.jsonl")), msg


def backticks(d):
    t = _plain(Transcript(seed="ticks"))
    msg = "`" * 3000 + "x" + "``a" * 3000 + "\n" + '"' * 3000 + "\n" + CLAIM
    t.say(msg)
    return t.write(os.path.join(d, "ticks.jsonl")), msg


HOSTILE = [heading_spaces, label_spaces, many_numbers, huge_line, deep_json, many_prompts, many_quotes, backticks]


def payload(d, case, sid="hostile"):
    path, msg = case(d)
    return stop_payload(sid, path, d, msg)


def deep_stdin():
    """The hook's own stdin nested 200,000 deep."""
    return '{"session_id": "s", "x": ' + "[" * 200000 + "]" * 200000 + "}"
