"""The Stop hook under attack (issue 10, found 1 and 5): its state never goes through a planted link, every regex it
holds is linear on generated adversarial strings, and the whole hook decides (or fails open) in under a second on
hostile payloads, run as Claude Code runs it."""
import itertools
import json
import os
import re
import stat
import subprocess
import time

import budget
import claim_detector
import claim_vocab
import evidence_guard
import hostile
import prompt_router
import pytest
import quote_extract
import quote_match
import transcript_tail
from hookrun import ROOT, decision, hook_command
from transcripts import Transcript, stop_payload

CLAIM = "The root cause is a learning rate that is too high."
VICTIM = "precious: must never be overwritten\n"


def _unbacked(sid="s1"):
    t = Transcript(seed="hard")
    t.prompt("why is my loss NaN? the run is in runs/exp1")
    t.say(CLAIM)
    return t


def _hook(payload, tmpdir, timeout=60):
    cmd, _ = hook_command("Stop")
    env = dict(os.environ, CLAUDE_PLUGIN_ROOT=ROOT, TMPDIR=str(tmpdir))
    for v in ("CLAUDE_PLUGIN_DATA", "TEMP", "TMP"):
        env.pop(v, None)
    t = time.monotonic()
    p = subprocess.run(cmd, shell=True, input=json.dumps(payload) if not isinstance(payload, str) else payload,
                       capture_output=True, text=True, env=env, timeout=timeout)
    return p.returncode, p.stdout, p.stderr, time.monotonic() - t


def _payload(tmp_path, sid="s1"):
    path = _unbacked().write(str(tmp_path / "t.jsonl"))
    return stop_payload(sid, path, str(tmp_path), CLAIM)


# ---------------------------------------------------------------- state files (no CLAUDE_PLUGIN_DATA)

def test_the_private_dir_is_created_0700(tmp_path):
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    rc, out, _, _ = _hook(_payload(tmp_path), tmp)
    assert rc == 0 and decision(out) == "block"
    for d in (tmp / "trainwreck-hooks", tmp / "trainwreck-hooks" / "evidence-guard"):
        st = os.lstat(d)
        assert stat.S_ISDIR(st.st_mode) and stat.S_IMODE(st.st_mode) == 0o700 and st.st_uid == os.getuid()
    f = tmp / "trainwreck-hooks" / "evidence-guard" / "s1.json"
    assert stat.S_IMODE(os.lstat(f).st_mode) == 0o600 and json.loads(f.read_text())["blocks"] == 1


def test_an_open_dir_left_by_an_older_version_is_made_private(tmp_path):
    tmp = tmp_path / "tmp"
    (tmp / "trainwreck-hooks" / "evidence-guard").mkdir(parents=True)
    os.chmod(tmp / "trainwreck-hooks", 0o777)
    os.chmod(tmp / "trainwreck-hooks" / "evidence-guard", 0o777)
    _hook(_payload(tmp_path), tmp)
    assert stat.S_IMODE(os.lstat(tmp / "trainwreck-hooks").st_mode) == 0o700
    assert stat.S_IMODE(os.lstat(tmp / "trainwreck-hooks" / "evidence-guard").st_mode) == 0o700


def _victim(tmp_path):
    v = tmp_path / "victim.txt"
    v.write_text(VICTIM)
    return v


def test_a_planted_symlink_at_the_state_path_never_gets_its_target_overwritten(tmp_path):
    tmp = tmp_path / "tmp"
    (tmp / "trainwreck-hooks" / "evidence-guard").mkdir(parents=True)
    victim = _victim(tmp_path)
    state = tmp / "trainwreck-hooks" / "evidence-guard" / "s1.json"
    state.symlink_to(victim)
    outs = [_hook(_payload(tmp_path), tmp) for _ in range(3)]
    assert all(o[0] == 0 for o in outs)
    assert victim.read_text() == VICTIM
    assert [decision(o[1]) for o in outs] == ["block", "allow", "allow"]  # the counter still works, as a file


@pytest.mark.parametrize("planted", ["trainwreck-hooks", "trainwreck-hooks/evidence-guard"])
def test_a_planted_symlinked_dir_is_refused(tmp_path, planted):
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    elsewhere = tmp_path / "elsewhere"
    (elsewhere / "evidence-guard").mkdir(parents=True)
    victim = _victim(tmp_path)
    (elsewhere / "s1.json").symlink_to(victim)
    (elsewhere / "evidence-guard" / "s1.json").symlink_to(victim)
    link = tmp / planted
    link.parent.mkdir(parents=True, exist_ok=True)
    link.symlink_to(elsewhere if planted == "trainwreck-hooks" else elsewhere / "evidence-guard")
    before = sorted(os.listdir(elsewhere)) + sorted(os.listdir(elsewhere / "evidence-guard"))
    rc, out, err, _ = _hook(_payload(tmp_path), tmp)
    assert rc == 0 and decision(out) == "block" and err == ""  # still decides; the counter is off
    assert victim.read_text() == VICTIM
    assert sorted(os.listdir(elsewhere)) + sorted(os.listdir(elsewhere / "evidence-guard")) == before


def test_a_dir_owned_by_someone_else_is_refused(tmp_path):
    if os.getuid() != 0:
        pytest.skip("needs root to hand a directory to another user")
    tmp = tmp_path / "tmp"
    d = tmp / "trainwreck-hooks" / "evidence-guard"
    d.mkdir(parents=True)
    os.chmod(tmp / "trainwreck-hooks", 0o777)
    os.chmod(d, 0o777)
    os.chown(tmp / "trainwreck-hooks", 65534, 65534)
    victim = _victim(tmp_path)
    (d / "s1.json").symlink_to(victim)
    rc, out, _, _ = _hook(_payload(tmp_path), tmp)
    assert rc == 0 and decision(out) == "block"
    assert victim.read_text() == VICTIM and os.path.islink(d / "s1.json")
    assert stat.S_IMODE(os.lstat(tmp / "trainwreck-hooks").st_mode) == 0o777  # not ours: not touched either


# ---------------------------------------------------------------- every regex, adversarial strings

MODULES = [claim_detector, claim_vocab, quote_extract, quote_match, transcript_tail, prompt_router, evidence_guard]
UNITS = [" ", "1", "1 ", "1.", "1,", "1e", "-1", "#", "# ", "*", "**", "_", "__", "a", "a ", "a:", "a=", ":", "=",
         "(", "()", "`", "``", '"', "\t", "a.", "x(", "|", "…", "...", "[", "[.", "。", "é", "\x1b[", "'", "’"]
AFFIXES = ["", "# ", "## ", "**", "- ", "1. ", "`", '"', "lr=", "Root cause"]
ENDS = ["", "\x00", " x", "**"]
N = 2000


def _patterns():
    out = []
    for m in MODULES:
        out += [(m.__name__ + "." + k, v) for k, v in vars(m).items() if isinstance(v, re.Pattern)]
    # the patterns built at run time from a quote: fuzzy numbers, a number, a key=value
    q = "step 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 22 23 24 loss"
    out.append(("quote_match fuzzy (24 numbers)", re.compile(quote_match._fuzzy_pattern(q)[0])))
    out.append(("quote_match kv", re.compile(r"(?<![\w.])['\"]?lr['\"]?\s*[=:]\s*['\"]?(" + quote_match._NUM
                                             + r")(?![\w.])")))
    return out


def test_every_hook_regex_is_linear_on_adversarial_strings():
    assert len(_patterns()) > 25
    slow = []
    for name, rx in _patterns():
        worst = (0.0, None)
        for i, (u, end) in enumerate(itertools.product(UNITS, ENDS)):
            pre = AFFIXES[i % len(AFFIXES)]
            run = u * (N // len(u))
            for s in (pre + run + end, pre + run + "x" + run + end):
                t = time.perf_counter()
                rx.match(s)
                for _i, _m in zip(range(200), rx.finditer(s)):
                    pass
                worst = max(worst, (time.perf_counter() - t, (u, pre, end)))
        if worst[0] > 0.5:  # generous: linear patterns take a few ms on 4,000 characters
            slow.append((name, round(worst[0], 2), worst[1]))
    assert not slow, slow


@pytest.mark.parametrize("n", [1500, 6000])
def test_a_heading_of_spaces_is_read_in_linear_time(n):
    t = time.perf_counter()
    a = claim_detector.analyse("# " + " " * n + "x" + " " * n + "#" + " " * n + "\n" + "- " + " " * n + "y:"
                               + " " * n + "\n" + CLAIM)
    assert time.perf_counter() - t < 0.5 and a.claims


def test_heading_and_label_parsing_is_unchanged_on_ordinary_lines():
    h = claim_detector._heading_title
    assert h("## Root cause ##") == "Root cause" and h("# C# language") == "C# language" and h("# a## ##") == "a##"
    assert h("**Diagnosis:**") == "Diagnosis:" and h("**Root cause**:") == "Root cause" and h("**x** y") is None
    assert h("####### seven") is None and h("    # indented") is None and h("#") is None
    lab = claim_detector._label_match
    assert lab("- **Root cause:** fp16 overflow") == ("Root cause", "fp16 overflow")
    assert lab("1. Diagnosis: NaN at step 120") == ("Diagnosis", "NaN at step 120")
    assert lab("  * **Fix**: lower lr") == ("Fix", "lower lr") and lab("no label here") is None


@pytest.mark.parametrize("k", [20, 28])
def test_a_quote_of_many_numbers_against_digit_runs_is_fast_and_still_exact(k):
    src = quote_match.Sources()
    src.add("1" * 80 + " q zz\n" + "1." * 3000 + " zz")
    quote = " ".join(str(i) for i in range(1, k + 1)) + " zz"
    t = time.perf_counter()
    assert not quote_match.found(quote, "text", src)
    assert time.perf_counter() - t < 0.5
    src.add("the values " + " ".join("%d.04" % i for i in range(1, k + 1)) + " zz")  # rounded: still found
    assert quote_match.found(quote, "text", src)
    assert not quote_match.found("loss 12 zz", "text", _sources("loss 1 2 zz"))  # numbers are never split


def _sources(*texts):
    s = quote_match.Sources()
    for t in texts:
        s.add(t)
    return s


def test_a_quote_is_searched_only_where_its_literal_text_is():
    """24 numbers against 80 KB of spaced digits whose anchor ("zz") occurs once: decided, and in a sliver of the
    budget, because only the window around "zz" can hold a match."""
    src = _sources("1 " * 40000 + "q zz")
    quote = " ".join(str(i) for i in range(1, 25)) + " zz"
    budget.start(seconds=0.15, wall=5.0)
    try:
        assert not quote_match.found(quote, "text", src)  # decided: OutOfTime would have been raised
        src.add("1 " * 40000 + " ".join("%d.04" % i for i in range(1, 25)) + " zz")  # rounded, far in: found
        assert quote_match.found(quote, "text", src)
    finally:
        budget.stop()
    text = "a" * 5000 + "zz" + "a" * 150 + "zz" + "b" * 100000 + "zz" + "c" * 10
    assert list(quote_match._near(text, "zz", 100, 20)) == [(4900, 5022), (5052, 5174), (105054, 105166)]
    dense = "zz " * 100000  # one span, found in a few hundred steps, not one per occurrence
    assert list(quote_match._near(dense, "zz", 1000, 10)) == [(0, len(dense))]


def test_the_budget_fails_open_instead_of_running_on(monkeypatch):
    src = _sources(("1 " * 23 + "zz ") * 20000)  # the anchor everywhere, 23 numbers before each: no shortcut
    budget.start(seconds=0.05, wall=0.5)
    try:
        t = time.perf_counter()
        with pytest.raises(budget.OutOfTime):
            quote_match.found(" ".join(str(i) for i in range(1, 25)) + " zz", "text", src)
        assert time.perf_counter() - t < 1.0
    finally:
        budget.stop()


# ---------------------------------------------------------------- the whole hook on hostile payloads

@pytest.mark.parametrize("case", hostile.HOSTILE, ids=lambda c: c.__name__)
def test_the_hook_decides_or_fails_open_within_a_second_on_hostile_payloads(tmp_path, case):
    p = hostile.payload(str(tmp_path), case)
    rc, out, err, took = _hook(p, tmp_path)
    assert rc == 0 and err == ""
    assert out == "" or decision(out) == "block"
    # in-process CPU time of the decision: the wall time of a shared test machine is not the hook's
    c0 = time.process_time()
    evidence_guard.decide(p)
    assert time.process_time() - c0 < 1.0
    assert took < 10  # far inside Claude Code's 15 s timeout even on a loaded machine


def test_a_quote_of_many_numbers_is_decided_within_the_budget_not_let_through(tmp_path):
    """The outside probe's quote of 24 numbers against runs of digits: the quote is in no tool output, so the
    reply is blocked (it used to run into the budget and fail open)."""
    p = hostile.payload(str(tmp_path), hostile.many_numbers)
    rc, out, err, _took = _hook(p, tmp_path)
    assert rc == 0 and err == "" and decision(out) == "block"
    assert "no tool output of this session printed" in json.loads(out)["reason"]


def test_a_line_nested_too_deep_is_skipped_and_the_rest_still_judged(tmp_path):
    t = _unbacked()
    lines = t.jsonl().splitlines()
    deep = '{"type": "user", "message": ' + "[" * 100000 + "]" * 100000 + "}"
    path = tmp_path / "t.jsonl"
    path.write_text("\n".join(lines[:-1] + [deep] + lines[-1:]) + "\n")
    rc, out, _, _ = _hook(stop_payload("deep", str(path), str(tmp_path), CLAIM), tmp_path)
    assert rc == 0 and decision(out) == "block"


def test_deep_json_on_stdin_fails_open(tmp_path):
    rc, out, err, _ = _hook(hostile.deep_stdin(), tmp_path)
    assert rc == 0 and out == "" and err == ""
