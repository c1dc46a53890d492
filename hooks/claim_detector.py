"""Does an assistant message assert the cause of an ML training failure as fact?

Standard library only; this runs inside the Stop hook, where start-up time matters.

analyse(message) -> Analysis with
  claims   sentences that state a cause as fact (unhedged, not a question, not a plan)
  domain   True when the message talks about a training failure (NaN, OOM, loss, NCCL, ...)
  quotes   Quote(text, kind) items the message presents as evidence (see quote_extract)

A sentence is a claim when it names a cause (root cause, caused by, the culprit, Ursache,
la cause, 原因是, ...), or joins a failure to a reason (because, due to, so the loss
diverges, 导致, ...), or is the first sentence under a "Root cause" heading or label, and
it is not hedged (might, likely, hypothesis, unclear, vielleicht, 可能, かもしれ, ...),
not conditional or general ("If ...", "often"), not a question, not a plan ("Let me ...",
"Next probe: ...") and not a report of the assistant's own edit ("I renamed X because ...").
"""
import re

import claim_patterns as P
from claim_vocab import (
    _ACTION_SUBJ,
    ACTION_VERBS,
    V_CAUSAL,
    V_HEDGE,
    V_HEDGE_START,
    V_PLAN,
    V_SYMPTOM,
    V_UNCERTAIN,
    V_WEAK,
    _has,
    _label_kind,
    _starts_with,
    in_domain,
    norm_words,
)
from quote_extract import Quote, _fence_quotes, _inline_quotes, _table_quotes, mask_with_map

# Headings and labels are matched in two steps, a regex whose every quantifier has one way to match, then string
# methods: `(.*?)\s*#*\s*$` (three quantifiers over one run of spaces) is cubic, a 1,500-space heading took 20 s.
_HEADING = re.compile(r"^\s{0,3}(?:(#{1,6})\s+(.*)|\*\*([^*]{1,80})\*\*(.*)|__([^_]{1,80})__(.*))$")
_HEADING_TAILS = ("", ":", "：")


def _heading_title(line):
    """The title of an ATX heading (`## Root cause ##`) or a bold line (`**Root cause:**`), else None."""
    m = _HEADING.match(line)
    if m is None:
        return None
    if m.group(1):                                    # the closing #s and the spaces around them are not the title
        return m.group(2).rstrip().rstrip("#").rstrip()
    title, tail = (m.group(3), m.group(4)) if m.group(3) is not None else (m.group(5), m.group(6))
    return title if tail.strip() in _HEADING_TAILS else None


# "- **Root cause:** text": the indent and the bullet are taken first (greedy, never given back: a label never
# starts with the spaces after a bullet), so the lazy label's only choice is its length, at most 48.
_BULLET = re.compile(r"^(?:[-*+]|\d+[.)])\s+")
_LABEL = re.compile(r"^\**_*([^:：*_`\n]{1,48}?)\**_*\s*[:：]\s*\**_*\s*(.*)$")


def _sentences(body):
    """(masked, original) for each sentence of a line: the masked text (quotes replaced by a placeholder) is
    what is judged; the original, quotes and all, is what a block reason shows."""
    masked, back = mask_with_map(body)
    out, pos = [], 0
    for p in P.SENT_SPLIT.split(masked):
        i = masked.find(p, pos)
        if i < 0:
            i = pos
        pos = i + len(p)
        if p.strip():
            out.append((p, body[back(i):back(pos, True)]))
    return out


def _label_match(line):
    """(label, body) of a `Label: body` line, else None."""
    s = line.lstrip()
    b = _BULLET.match(s)
    m = _LABEL.match(s[b.end():] if b else s)
    if m is None and b is not None:                   # "* **x**: y": the bullet may be the label's own star
        m = _LABEL.match(s)
    return (m.group(1), m.group(2)) if m else None


def _cells(row):
    """The cells of a table row: split at each `|` outside a code span (a quoted log line may hold pipes)."""
    out, cur, tick = [], [], 0
    i, n = 0, len(row)
    while i < n:
        ch = row[i]
        if ch == "`":
            j = i
            while j < n and row[j] == "`":
                j += 1
            run = j - i
            tick = 0 if tick == run else (run if tick == 0 else tick)
            cur.append(row[i:j])
            i = j
            continue
        if ch == "|" and not tick:
            out.append("".join(cur))
            cur = []
        else:
            cur.append(ch)
        i += 1
    out.append("".join(cur))
    if tick:                                          # an unclosed span: GFM splits on every pipe then
        return row.split("|")
    return out


class Analysis:
    def __init__(self):
        self.claims = []
        self.claim_texts = []        # the same sentences as written, quotes and all (for the block reason)
        self.answer = None           # an unhedged reply that explains without a causal phrase: its first sentence
        self.hedged = False          # some sentence of the reply is hedged
        self.readings = []           # precise numbers in the prose (0.3817): a follow-up's citations of earlier output
        self.quotes = []
        self.domain = False


def _is_question(sentence):
    s = sentence.rstrip(" *_)\"'”»」.")
    return s.endswith("?") or s.endswith("？")


def _sentence_state(sentence):
    """(causal, hedged, question_or_plan) for one prose sentence; causal is "strong" (names a
    cause outright), "weak" (a connective next to a failure word) or ""."""
    n = norm_words(sentence)
    raw = sentence.lower()
    causal = "strong" if _has(n, raw, V_CAUSAL) else ""
    if not causal and _has(n, raw, V_SYMPTOM):
        if _has(n, raw, V_WEAK) or P.SINCE.search(raw):
            causal = "weak"
        else:                                         # "lr is too high, so the loss diverges"
            m = P.CONSEQUENCE.search(raw)
            if m:
                after = raw[m.end():]
                causal = "weak" if _has(norm_words(after), after, V_SYMPTOM) else ""
    outer = P.PAREN.sub(" ", sentence)                 # a hedge inside (...) hedges only the aside
    outer = P.COMPOUND.sub(" ", outer)                 # "rarely-seen tokens": the adverb describes, it does not hedge
    outer = P.RELATIVE.split(outer, 1)[0] if causal else outer     # ... and one in ", which ..." too
    hedged = _has(norm_words(outer), outer.lower(), V_HEDGE) or _starts_with(n, raw, V_HEDGE_START)
    other = _is_question(sentence) or _starts_with(n, raw, V_PLAN) or _is_action_report(n)
    return causal, hedged, other


def _is_action_report(norm):
    s = norm.lstrip()
    for subj in _ACTION_SUBJ:
        if s.startswith(subj):
            rest = s[len(subj):].split(" ", 2)
            if rest and rest[0] == "also" and len(rest) > 1:
                rest = rest[1:]
            return bool(rest) and rest[0] in ACTION_VERBS
    return False


def analyse(message, max_chars=200000):
    a = Analysis()
    if not isinstance(message, str) or not message.strip():
        return a
    if len(message) > max_chars:
        message = message[: max_chars - 20000] + "\n" + message[-20000:]
    low_all = message.lower()
    a.domain = in_domain(message)
    sentences = _Walker(a).walk(message.splitlines())
    uncertain = _has(norm_words(message), low_all, V_UNCERTAIN)
    explains = fixes = False
    fix_section = any(sec == "fix" or lab == "fix" for _s, sec, lab, _f, _o in sentences)
    for s, sec, lab, _f, _o in sentences:            # precise readings in the prose (quotes are masked out)
        if sec != "fix" and lab != "fix":
            for m in P.READING.finditer(s):
                approx = bool(m.group(1))
                a.readings.append(Quote(m.group(2), "approx" if approx else "number", "prose"))
    first = None
    for idx, (s, sec, lab, first_under_claim, orig) in enumerate(sentences):
        unknown = P.UNKNOWN_CAUSE.search(s.lower())
        if unknown:
            a.hedged = True           # "the excerpt doesn't say what made it NaN": the reply names no cause
            if not _sentence_state(s[unknown.end():])[0] and "code" not in s[unknown.end():].split():
                continue              # ("Root cause: not investigated yet" is a label that names none; but "the cause
                #                        was not clear at first, but X caused it" goes on to name one)
        causal, hedged, other = _sentence_state(s)
        if causal == "weak" and uncertain:
            causal = ""                               # background in a reply that says it doesn't know
        if sec == "hedge" or lab == "hedge":
            hedged = True
        if hedged and (sec == "fix" or lab == "fix") and not (sec == "hedge" or lab == "hedge") and \
                P.CONDITIONAL.match(s.lower()):
            continue                                  # "if your GPU has no bf16, …": a conditional fix, no doubt
        if not hedged and a.hedged and P.ALTERNATIVE.match(s.lower()):
            hedged = True                             # "One possibility is X. Another is Y.": Y is a candidate too
        if not hedged and idx + 1 < len(sentences) and _meta_hedge(sentences[idx + 1][0]):
            hedged = True
        if other or hedged:
            if hedged:
                a.hedged = True
            continue
        if causal or first_under_claim:
            a.claims.append(" ".join(s.split())[:200])
            a.claim_texts.append(" ".join(orig.split()))
        elif sec != "fix" and lab != "fix":
            explains = explains or _explains(s)
            fixes = fixes or _is_instruction(s)
            if first is None and not _is_instruction(s):
                first = " ".join(orig.split())
    if not a.claims and not a.hedged and not uncertain and first is not None and (explains or fixes or fix_section):
        a.answer = first
    return a


def _explains(sentence):
    raw = sentence.lower()
    if P.EXPLAIN.search(raw) or any(w in raw for w in P.EXPLAIN_CJK):
        return True
    n = norm_words(sentence)
    return _has(n, raw, V_CAUSAL) or _has(n, raw, V_WEAK)


def _is_instruction(sentence):
    """An instruction to change a setting ("Lower the LR by 10x."): a fix given without a hedge says what the cause
    was.  Next steps that do not ("Restart from the last checkpoint", "Check the loader") are not instructions."""
    return bool(P.INSTRUCTION.match(sentence.lower()))


def general_question(prompt):
    """True for a question about how things work in general, with nothing of the user's own run in it."""
    if not isinstance(prompt, str) or not prompt.strip():
        return False
    p = " ".join(prompt[:20000].lower().split())
    return bool(P.GENERAL.search(p)) and not P.MINE.search(p) and not P.FAILED.search(p) and \
        _router_says_failure(prompt) is not True


def _router_says_failure(prompt):
    """The prompt router's own test of a failed-run prompt (hooks/prompt_router.py); None when it cannot load."""
    try:
        import prompt_router
    except Exception:  # noqa: BLE001 - the router is optional here
        return None
    return prompt_router.is_failure_prompt(prompt)


def pasted_framework_traceback(prompt):
    """True when the prompt holds a pasted traceback through an ML framework's files."""
    return isinstance(prompt, str) and bool(P.PASTED_FRAME.search(prompt[:20000].lower()))


def asks_about_failure(prompt):
    """True when the user's prompt reports a failed run, asks why something failed, or runs a trainwreck command."""
    if not isinstance(prompt, str) or not prompt.strip():
        return False
    p = " ".join(prompt[:20000].lower().split())
    if "<command-name>/trainwreck:" in p or p.startswith("/trainwreck:"):
        return True
    return any(q in p for q in P.CAUSE_QUESTION) or _router_says_failure(prompt) is True


class _Walker:
    """Walks the Markdown structure of a reply: collects quotes into the Analysis and
    returns prose sentences as (text, section kind, label kind, first under a claim heading)."""

    def __init__(self, analysis):
        self.a = analysis
        self.section = None          # 'claim' | 'hedge' | 'fix' | None: kind of the current heading
        self.claim_pending = False   # the next sentence is the first under a claim heading
        self.prev_prose = ""         # the last prose line: a fenced block's lead-in
        self.prev_fence = None       # how the previous fenced block was read ("and in the config:")
        self.table_head = None       # column headers of the current Markdown table
        self.sentences = []

    def _lead_in(self):
        return "fix" if self.section == "fix" else self.prev_prose

    def walk(self, lines):
        fence = None                 # (lang, lead-in, lines) while inside a fenced block
        indented = False             # inside an indented code block (4 spaces after a blank line, not in a list)
        in_list = False              # the last unindented line was a list item
        for li, line in enumerate(lines):
            stripped = line.strip()
            if fence is None and stripped and line.startswith(("    ", "\t")) and not in_list and (
                    indented or li == 0 or not lines[li - 1].strip()):
                indented = True      # Markdown's indented code block: quoted text, like a fenced block
                _fence_quotes(self.a, "", self._lead_in(), [stripped], None)
                continue
            if stripped:
                indented = False
                if fence is None and not line.startswith((" ", "\t")):
                    in_list = bool(_BULLET.match(stripped))
            if stripped.startswith(("```", "~~~")):
                if fence is None:
                    fence = (stripped.strip("`~ ").lower(), self._lead_in(), [])
                else:
                    self.prev_fence = _fence_quotes(self.a, fence[0], fence[1], fence[2], self.prev_fence)
                    fence = None
            elif fence is not None:
                fence[2].append(line)
            elif not stripped:
                continue
            elif stripped.startswith(">"):            # a Markdown blockquote: quoted text
                _fence_quotes(self.a, "", self._lead_in(), [stripped.lstrip("> ")], None)
            elif stripped.startswith("|"):
                self._table_row(stripped, lines[li + 1].strip() if li + 1 < len(lines) else "")
            else:
                self.table_head = None
                title = _heading_title(line)
                if title is not None:
                    self._heading(title)
                else:
                    self._prose(line)
        if fence is not None and fence[2]:
            _fence_quotes(self.a, fence[0], fence[1], fence[2], self.prev_fence)
        return self.sentences

    def _table_row(self, row, next_row):
        cells = [x.strip() for x in _cells(row.strip().strip("|"))]
        if all(set(x) <= set("-: ") for x in cells):
            return                                    # |---|---|
        if next_row.startswith("|") and set(next_row) <= set("|-: "):
            self.table_head = cells
            return
        _table_quotes(self.a, cells, self.table_head or [], self.section)
        for p, orig in _sentences(" ".join(cells)):
            self.sentences.append((p, self.section, None, False, orig))

    def _heading(self, title):
        self.section = _label_kind(title)
        self.claim_pending = self.section == "claim"
        if self.section == "claim" and ":" in title:  # "## Root cause: fp16 overflow"
            rest = title.split(":", 1)[1].strip()
            if rest:
                self.sentences.append((rest, "claim", None, True, rest))
                self.claim_pending = False
        self.prev_prose = title

    def _prose(self, line):
        label_kind, body = None, line
        m = _label_match(line)
        if m and m[1].strip():
            label_kind = _label_kind(m[0])
            if label_kind:
                body = m[1]
        elif m:                                       # "Root cause:" on its own line
            lk = _label_kind(m[0])
            if lk:
                self.section, self.claim_pending, self.prev_prose = lk, lk == "claim", m[0]
                return
        _inline_quotes(self.a, body, self.section, label_kind)
        for i, (p, orig) in enumerate(_sentences(body)):
            first = (self.claim_pending or label_kind == "claim") and i == 0
            self.sentences.append((p, self.section, label_kind, first, orig))
        self.claim_pending = False
        self.prev_prose = body


_META_HEDGE_STARTS = ("this is a hypothesis", "that is a hypothesis", "this is only a hypothesis",
                      "this is just a hypothesis", "this is my hypothesis", "this is a guess",
                      "this is unverified", "this is not verified", "this is not yet verified",
                      "i haven't verified", "i have not verified", "i haven't confirmed",
                      "i have not confirmed", "not yet verified", "not verified yet", "unverified",
                      "i haven't checked", "i have not checked", "i haven't looked",
                      "das ist eine hypothese", "c'est une hypothèse", "es una hipótesis",
                      "这只是假设", "这是假设", "这是一个假设", "尚未验证", "まだ検証していません", "これは仮説")


def _meta_hedge(sentence):
    s = sentence.strip(" *_-").lower().replace("’", "'")
    return s.startswith(_META_HEDGE_STARTS) or (len(s) < 60 and ("hypothesis" in s or "unverified" in s))


def analyse_domain(text):
    """True when text (e.g. the user's prompt) talks about a training run or its failure."""
    return in_domain(text)
