"""Which pieces of an assistant message are quoted evidence?

Quoted text is read from inline code, fenced blocks, Markdown blockquotes and tables, and
double quotes.  A quote counts as evidence (and must be found in a tool's output) when
it looks like a log line, an error message, a key=value reading or a number, and is not
a proposal (a fix, a command to run, an expected value), a negation ("never calls `x`"),
a code identifier, a short code snippet or a formula.
"""
import re

from claim_vocab import (
    CODE_LANGS,
    PROPOSAL,
    SHELL_STARTS,
    V_EVIDENCE,
    V_GENNUM,
    V_LOG_STRONG,
    V_LOG_WEAK,
    V_NEGATION,
    V_PROPOSAL,
    _has,
    _label_kind,
    _prep,
    norm_words,
)

_NUMBER = re.compile(r"(?<![\w.])[-+]?(?:\d[\d,]*(?:\.\d+)?|\.\d+)(?:[eE][-+]?\d+)?(?![\w])")


_KV = re.compile(r"^[A-Za-z_][\w./\-\[\]()]*\s*[=:]\s*[-+]?(?:[\d.]+(?:[eE][-+]?\d+)?%?|nan|inf|-inf|true|false|null|none)[,;]?$", re.I)


_CALL = re.compile(r"[\w\]]\(")


_KV_NUM = re.compile(r"[\w)\]]\s*=\s*[-+]?\d")


_EXPR = re.compile(r"^[\w\s().*/+\-^=<>%,\[\]×÷≈~]+$")


_OPS = re.compile(r"\s[*/+^×÷]\s|\s[*/+^×÷]|==|<=|>=|\*\*|\d[×x]\d")
_NUM_UNIT = re.compile(r"^[-+]?\d[\d,.]*(?:e[-+]?\d+)?\s?(?:%|[kmgtp]i?b|[kmgtp]b/s|ms|s|sec|secs|min|mins|h|"
                       r"hours?|x|it/s|s/it|tokens?|steps?|ranks?|gpus?|epochs?|k|m)$", re.I)
_FILE_LINE = re.compile(r"\.(?:py|log|ya?ml|json|jsonl|txt|cpp|cc|cu|cuh|h|hpp|csv|md|sh|toml|cfg|ini|out|err|ipynb)"
                        r"\s*:\s*\d", re.I)


# A code span: a whole run of backticks (atomic: the lookahead's group cannot be given back, and a run is never
# entered in its middle), at most 2,000 characters, the same run closing it. `(`+)(.+?)\1` was quadratic on a line
# of backtick pairs: every backtick opened a span of every length, each scanned to the line's end.
_INLINE = re.compile(r"(?<!`)(?=(`+))\1(.{1,2000}?)\1(?!`)")


_DQUOTE = re.compile(r"\"([^\"\n]{3,300})\"|“([^”\n]{3,300})”|„([^“”\n]{3,300})[“”]|«\s?([^»\n]{3,300}?)\s?»|「([^」\n]{3,300})」|『([^』\n]{3,300})』")


# A message line as loggers and exceptions print it: `UserWarning: ...`, `torch.OutOfMemoryError: ...`,
# `NCCL WARN ...`, `ERROR: ...`, `Traceback (most recent call last):`.
_MESSAGE = re.compile(r"^(?:[\w.]*(?:Error|Exception|Warning|Interrupt|Exit)\b|(?:NCCL\s+)?(?:WARN(?:ING)?|ERROR|FATAL|"
                      r"CRITICAL)\b|Traceback\b|\[rank\d+\])")


_INTERVAL = re.compile(r"^[\[(][^\[\]()]{1,60},[^\[\]()]{1,60}[\])]$")
_ASSIGNED_CALL = re.compile(r"^[\w.]+\((?:[-+\d.e]{1,12}|[a-z])\)\s*=\s*\S{1,20}$")   # log(0) = -inf, not len(tok)=3


_SEEN = re.compile(r"\b(?:shows|showed|says|said|printed|prints|reads|reported|contains|logged|got)\b")
_ERROR_CODE = re.compile(r"^[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)*_(?:STATUS|ERROR|FAILED|FAILURE|EXHAUSTED|TIMEOUT|INVALID|"
                         r"ILLEGAL|FAULT|UNAVAILABLE|ABORTED)(?:_[A-Z0-9]+)*$|^[A-Z]+_(?:STATUS|ERROR)_[A-Z0-9_]+$")
_FRAME_CUE = re.compile(r"\b(?:traceback|stack|frame|frames|raised in|thrown in|crashed in|bottoms out)\b")
_FRAME_NAME = re.compile(r"^[A-Za-z_][\w.]{7,}(?:\(\))?$")


# A hyphenated compound is one word: "all-reduce" holds no proposal verb, "re-run" is one (\b: one start per word,
# linear on long runs)
_HYPHENATED = re.compile(r"\b\w+(?:-\w+)+")
_HYPHENATED_PROPOSALS = frozenset(w for w in PROPOSAL if "-" in w)


class Quote:
    __slots__ = ("text", "kind", "origin")

    def __init__(self, text, kind, origin):
        self.text, self.kind, self.origin = text, kind, origin

    def __repr__(self):
        return "Quote(%r, %s, %s)" % (self.text, self.kind, self.origin)


def _mask_inline(line):
    return _INLINE.sub(lambda m: " code ", line)


def _mask_quotes(line):
    return _DQUOTE.sub(lambda m: " quote ", _mask_inline(line))


def _sub_segments(rx, repl, text):
    """rx.sub(repl, text), and the segments (new start, old start, old end or None for literal text)."""
    out, segs, pos, npos = [], [], 0, 0
    for m in rx.finditer(text):
        if m.start() > pos:
            segs.append((npos, pos, None))
            out.append(text[pos:m.start()])
            npos += m.start() - pos
        r = repl(m) if callable(repl) else repl
        segs.append((npos, m.start(), m.end()))
        out.append(r)
        npos += len(r)
        pos = m.end()
    segs.append((npos, pos, None))
    out.append(text[pos:])
    return "".join(out), segs


def _back(segs, i, end):
    lo, hi = 0, len(segs) - 1                          # the last segment starting at or before i
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if segs[mid][0] <= i:
            lo = mid
        else:
            hi = mid - 1
    new, old, old_end = segs[lo]
    if old_end is None:
        return old + (i - new)
    return old_end if end and i > new else old      # inside a placeholder: the whole quoted span


def _code_placeholder(m):
    """A code span that closes a sentence of its own (`… before timing out.` One rank …) keeps the full stop, so the
    sentence after it is judged on its own."""
    inner, rest = m.group(2).rstrip(), m.string[m.end():m.end() + 3]
    return " code. " if inner[-1:] in ".!?" and rest[:1] == " " and rest[1:2].isupper() else " code "


def mask_with_map(line):
    """(_mask_quotes(line), back): back(i, end) maps a position in the masked text to one in `line`, so that a
    sentence found in the masked text can be shown as it was written, quotes and all."""
    m1, s1 = _sub_segments(_INLINE, _code_placeholder, line)
    m2, s2 = _sub_segments(_DQUOTE, " quote ", m1)
    return m2, lambda i, end=False: _back(s1, _back(s2, i, end), end)


def _quote_kind(text, origin, context):
    """Return 'number' | 'text' when the quote should be found in tool output, else None."""
    t = " ".join(text.split())
    t = t.strip(" ,;")
    if len(t) < 2:
        return None
    n = norm_words(context)
    ctx_raw = context.lower()
    cue = _SEEN.search(" ".join(ctx_raw.split()[-3:]))
    plain = _HYPHENATED.sub(lambda m: m.group(0) if m.group(0).lower() in _HYPHENATED_PROPOSALS else " ", context)
    if _has(norm_words(plain), plain.lower(), V_PROPOSAL) and not cue:  # "the log shows `x`": shown, whatever came before
        return None
    tail = " " + " ".join(n.split()[-3:]) + " "
    if _has(tail, ctx_raw[-12:], V_NEGATION):
        return None
    low = t.lower()
    if origin == "fence" and t.startswith(("$ ", "> ", ">>> ", "+", "- ", "# ")):
        return None
    if t.startswith(("~", "≈")) and _NUMBER.fullmatch(t[1:].strip().rstrip("%")):
        return "approx"                               # `~0.348`: a reading, rounded (checked with 5 % slack)
    if t.startswith(SHELL_STARTS) or t.startswith(("~", "≈", "about ", "approx", "--")):
        return None                                   # a command or a flag, or an approximate figure
    if _INTERVAL.match(t) or _ASSIGNED_CALL.match(t):
        return None                                   # notation: `[0, n_classes)`, `log(0) = -inf`
    if _NUMBER.fullmatch(t.rstrip("%")):
        return None if _has(n, ctx_raw, V_GENNUM) else "number"
    if _NUM_UNIT.match(t):                            # `30 GB`, `600 ms`: a figure with a unit
        return None if _has(n, ctx_raw, V_GENNUM) else "text"
    tn = norm_words(t)
    has_num = bool(_NUMBER.search(t))
    strong = _has(tn, low, V_LOG_STRONG) or bool(_MESSAGE.match(t) and " " in t) or \
        bool(" " in t and _ERROR_CODE.match(t.split(None, 1)[0]))  # `CUBLAS_STATUS_ALLOC_FAILED when calling …`
    if " " not in t:
        if _FILE_LINE.search(t):
            return None                               # a place, not a quote: train.py:88
        if _KV.match(t) or _ERROR_CODE.match(t):
            return "text"                             # a reading, or a status code: CUBLAS_STATUS_EXECUTION_FAILED
        if _FRAME_CUE.search(context.lower()) and _FRAME_NAME.match(t):
            return "text"                             # "the traceback bottoms out in `flash_attn_varlen_func`"
        return None
    if origin == "dquote":
        return "text" if (strong or has_num or _KV.match(t)) and len(tn.split()) >= 2 else None
    if t.startswith(("import ", "from ", "def ", "return ", "class ", "with ", "for ", "if ", "assert ")):
        return None
    if not strong and _CALL.search(t) and len(t.split()) <= 5 and not _KV_NUM.search(t):
        return None                                   # a short code snippet: clip_grad_norm_(p, 1.0)
    if not strong and _EXPR.match(t) and _OPS.search(t):
        return None                                   # a formula: 3 * (nc + 5)
    if strong or has_num or _KV.match(t):
        return "text"
    if _has(tn, low, V_LOG_WEAK) and ("=" in t or ":" in t):
        return "text"
    return None


def _context(text, pos, fix):
    """The words before a quote that decide whether it is evidence; 'fix' when it is a proposal."""
    ctx = _sentence_before(text, pos)
    if fix:
        clause = text[max(0, pos - 80):pos]
        if not _has(norm_words(clause), clause.lower(), V_EVIDENCE) or _has(norm_words(ctx), ctx.lower(), V_PROPOSAL):
            return "fix"
    return ctx


def _inline_quotes(a, body, section, label_kind):
    fix = section == "fix" or label_kind == "fix"
    for m in _INLINE.finditer(body):
        ctx = _context(body, m.start(), fix)
        kind = _quote_kind(m.group(2), "inline", ctx)
        if kind:
            a.quotes.append(Quote(m.group(2).strip(), kind, "inline"))
    masked = _mask_inline(body)
    for m in _DQUOTE.finditer(masked):
        txt = next(g for g in m.groups() if g is not None)
        ctx = _context(masked, m.start(), fix)
        kind = _quote_kind(txt, "dquote", ctx)
        if kind:
            a.quotes.append(Quote(txt.strip(), kind, "dquote"))


def _sentence_before(line, pos):
    """The words of the current clause before position pos (about ten words).  A clause that
    follows "Fix:" or "Set it to:" keeps that label, so the quote reads as a proposal."""
    head = line[max(0, pos - 120):pos]
    cut = max(head.rfind(". "), head.rfind("; "), head.rfind("。"), head.rfind("! "), head.rfind("? "))
    head = head[cut + 1:] if cut >= 0 else head
    tick = head.rfind("`")
    if tick >= 0 and len(head[tick + 1:].split()) >= 3:
        head = head[tick + 1:]      # "… `x`, and the same second `y`": y's own words, not x's ("set `a` to `b`" keeps set)
    colon = max(head.rfind(": "), head.rfind("："), head.rfind(" — "), head.rfind(" - "))
    if colon >= 0:
        label = head[:colon]
        label_words = " ".join(label.split()[-4:])
        n = norm_words(label_words)
        if _label_kind(label_words) == "fix" or _has(n, label_words.lower(), V_PROPOSAL):
            head = label_words + " " + head[colon + 1:]
        else:
            head = head[colon + 1:].lstrip("：—- ")
    words = head.split()
    if len(words) > 10:
        head = " ".join(words[-10:])
    return head[-40:] if " " not in head.strip() else head


_LOG_LANGS = {"", "text", "txt", "log", "logs", "console", "output", "stdout", "stderr", "plaintext", "shell-session",
              "pytb", "traceback"}


_CONTINUE = ("and ", "also ", "plus ", "then ", "und ", "et ", "y ", "以及", "还有")


def _fence_quotes(a, lang, ctx, lines, prev):
    """Collect quotes from a fenced block (or a blockquote line).  Returns True when the
    block was read as evidence, False when it was a proposal, None when undecided."""
    lang = lang.split()[0] if lang else ""
    if lang in ("diff", "patch"):
        return False
    n = norm_words(ctx)
    low = ctx.lower()
    cue = _has(n, low, V_EVIDENCE)
    if ctx == "fix" or (_has(n, low, V_PROPOSAL) and not cue):
        return False
    if not cue and prev is not None and low.strip().startswith(_CONTINUE):
        if not prev:
            return False
        cue = True
    if not cue and lang not in _LOG_LANGS:
        return None                    # code or config with no lead-in: an example, not a quote
    for line in lines:
        t = line.strip()
        if not t or set(t) <= set("-=_*#|+.: ─│┌┐└┘├┤"):
            continue
        kind = _quote_kind(t, "fence", "")
        if not kind:
            continue
        if lang in CODE_LANGS and ("(" in t or " = " in t) and not _has(norm_words(t), t.lower(), V_LOG_STRONG):
            continue
        a.quotes.append(Quote(t, kind, "fence"))
    return True


_HEAD_PROPOSAL = ["suggested", "suggestion", "proposed", "recommended", "recommendation", "new", "target", "after",
                  "fix", "fixed", "change", "try", "should", "want", "expected", "instead", "better", "to",
                  "vorschlag", "neu", "empfohlen", "suggéré", "proposé", "nouveau", "sugerido", "nuevo", "建议",
                  "修改后", "推奨", "変更後"]


V_HEAD_PROPOSAL = _prep(_HEAD_PROPOSAL)


def _table_quotes(a, cells, head, section):
    """Quotes in a Markdown table row; a cell under a 'Suggested'/'Fix' column is a proposal."""
    for i, cell in enumerate(cells):
        h = head[i] if i < len(head) else ""
        hn = norm_words(h)
        if section == "fix" or _has(hn, h.lower(), V_HEAD_PROPOSAL) or _label_kind(h) == "fix":
            continue
        for m in _INLINE.finditer(cell):
            kind = _quote_kind(m.group(2), "inline", h + " " + cell[:m.start()])
            if kind:
                a.quotes.append(Quote(m.group(2).strip(), kind, "inline"))

