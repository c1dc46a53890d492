"""Property-based tests for the Stop hook's parsers: the backward transcript reader and the quote extractor."""
import io
import json

import claim_detector
import quote_match
import transcript_tail
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from transcripts import Transcript

_line = st.binary(max_size=60).map(lambda b: b.replace(b"\n", b""))


@given(st.lists(st.tuples(_line, st.integers(0, 70_000)), max_size=12), st.booleans())
@settings(max_examples=60, deadline=None)
def test_lines_backward_gives_the_files_lines_in_reverse(parts, trailing_newline):
    """Whatever the block boundaries (lines up to 70 KB straddle the first 64 KB block), every non-blank line
    comes back once, whole, newest first."""
    lines = [b + b"x" * pad for b, pad in parts]
    data = b"\n".join(lines) + (b"\n" if trailing_newline else b"")
    got = list(transcript_tail.lines_backward(io.BytesIO(data), len(data), 1 << 30))
    assert got == [ln for ln in lines if ln.strip()][::-1]


@given(st.lists(st.binary(min_size=1, max_size=40).map(lambda b: b.replace(b"\n", b"") + b"."), min_size=1,
                max_size=200), st.integers(1, 4000))
@settings(max_examples=80, deadline=None)
def test_a_capped_read_gives_whole_lines_from_the_end_only(lines, cap):
    data = b"\n".join(lines) + b"\n"
    state = {}
    got = list(transcript_tail.lines_backward(io.BytesIO(data), len(data), cap, state))
    assert got == [ln for ln in lines if ln.strip()][::-1][:len(got)]  # a prefix of the reversed lines
    assert sum(len(g) + 1 for g in got) <= cap + 1
    assert bool(state.get("capped")) == (cap < len(data))


_words = st.text(alphabet="abcdefgh 0123456789=.:_-", min_size=1, max_size=30).map(str.strip).filter(bool)


@given(ops=st.lists(st.tuples(st.sampled_from(["prompt", "tool", "empty_tool", "say"]), _words), min_size=1,
                    max_size=12))
@settings(max_examples=60, deadline=None)
def test_scan_finds_the_last_prompt_and_only_this_turns_results(ops, tmp_path_factory):
    """A model of the turn: the last real prompt starts it; the tool results after it are this turn's (newest
    first), each flagged by whether it holds output; every output and prompt of the session is a quote source."""
    assume(ops[0][0] == "prompt" or any(o == "prompt" for o, _ in ops))
    t = Transcript(seed="prop")
    results, prompt, outputs = [], None, []
    for op, text in ops:
        if op == "prompt":
            t.prompt("prompt " + text)
            results, prompt = [], "prompt " + text
        elif prompt is None:
            continue
        elif op == "tool":
            t.tool("Bash", {"command": "echo " + text}, "out " + text)
            results.append(("out " + text, True))
            outputs.append("out " + text)
        elif op == "empty_tool":
            t.tool("Bash", {"command": "true"}, "(no output)")
            results.append(("(no output)", False))
        else:
            t.say("reply " + text)
    path = str(tmp_path_factory.mktemp("t") / "t.jsonl")
    t.write(path)
    src = quote_match.Sources()
    turn = transcript_tail.scan(path, src, 1 << 20, want_earlier=lambda: True)
    assert turn.found_start and turn.prompt == prompt
    assert [(r[1], r[2]) for r in turn.results] == results[::-1]
    assert transcript_tail.evidence_results(turn) == [r for r, ok in results[::-1] if ok]
    for o in outputs:
        assert quote_match.normalise(o) in src.joined


_log = st.sampled_from(["step {} loss=nan lr=3.0e-03", "RuntimeError: CUDA error at step {}",
                        "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate {} MiB",
                        "grad_norm={}.5 loss_scale=65536", "[rank{}] NCCL watchdog timeout after 1800000 ms"])


@given(_log, st.integers(0, 10 ** 6), st.sampled_from(["The log shows `{}`", "train.log line 9: `{}`",
                                                        "```\n{}\n```", "> {}", "It printed `{}`"]))
@settings(max_examples=120, deadline=None)
def test_a_quoted_log_line_is_extracted_and_found_only_where_it_was_printed(template, n, frame):
    line = template.format(n)
    msg = "We found the problem.\n" + frame.format(line) + "\n\nThe root cause is the learning rate, so the loss is NaN."
    a = claim_detector.analyse(msg)
    assert a.claims and a.domain
    assert [q.text for q in a.quotes if q.kind == "text"] == [line]
    here, elsewhere = quote_match.Sources(), quote_match.Sources()
    here.add("some output\n" + line + "\nmore")
    elsewhere.add("some output\n" + template.format(n + 1) + "\nmore")   # one number changed: not the same line
    assert quote_match.found(line, "text", here)
    assert not quote_match.found(line, "text", elsewhere)


@given(st.text(max_size=300))
@settings(max_examples=200, deadline=None)
def test_every_quote_comes_from_the_message(msg):
    a = claim_detector.analyse(msg)
    src = quote_match.Sources()
    src.add(msg)
    assert isinstance(a.domain, bool)
    for q in a.quotes:
        assert q.kind in ("number", "text", "approx") and q.origin in ("inline", "dquote", "fence")
        if q.origin == "dquote" and "`" in msg:
            continue  # known bug, xfail in test_guard_contract.py: inline code inside "…" is masked first
        assert quote_match.found(q.text, q.kind, src), q


def test_records_backward_skips_what_is_not_a_message(tmp_path):
    p = tmp_path / "t.jsonl"
    recs = [{"type": "user", "n": 1}, "not an object", {"type": "system"}, {"type": "assistant", "n": 2}]
    p.write_text("\n".join(json.dumps(r) for r in recs) + '\n{"type": "user", "partial')
    assert [r["n"] for r in transcript_tail.records_backward(str(p), 1 << 20)] == [2, 1]
