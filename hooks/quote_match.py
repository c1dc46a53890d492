"""Is a quoted piece of evidence present in what the tools really printed?

Sources are tool outputs (and the user's own prompts, which may hold a pasted log).
Matching is forgiving about what does not change meaning and strict about what does:
  - case, runs of whitespace, ANSI colour codes and a trailing full stop are ignored;
  - an ellipsis ("...", "…", "[...]") splits a quote into parts that must appear in order
    in one source;
  - a leading "file:line:" or "line:" prefix (grep -n, cat -n) may be dropped;
  - numbers may be rounded ("2.3" for 2.3071, "1.2e5" for 123456) but not changed
    ("step 130" does not match "step 120").
"""
import re

from budget import check

_ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]|\r")
_WS = re.compile(r"\s+")
_ELLIPSIS = re.compile(r"\s*(?:\.{3,}|…|\[\s*(?:\.{3}|…)\s*\])\s*")
_LINE_PREFIX = re.compile(r"^(?:[\w./\\-]+:)?\d+\s*[:\t→|]\s*")
_NUM = r"[-+]?(?:\d[\d,]*(?:\.\d+)?|\.\d+)(?:e[-+]?\d+)?"
_NUM_RE = re.compile(r"(?<![\w.])" + _NUM + r"(?![\w])")
_NUM_FULL = re.compile(_NUM + r"%?")


# Quote marks are dropped on both sides: a reply may add them around a quoted segment or lose them ('lr': 0.1), and
# a Markdown code span cannot hold the backticks a message has (PyTorch's "when calling `cublasCreate(handle)`"): a
# backtick becomes a space, so that it never joins the words on either side of it.
_QUOTES = str.maketrans({'"': None, "'": None, "\u201c": None, "\u201d": None, "\u2018": None, "\u2019": None,
                         "`": " "})


def normalise(text):
    if "\x1b" in text or "\r" in text:
        text = _ANSI.sub("", text)
    return " ".join(text.translate(_QUOTES).split()).lower()


class Sources:
    """Normalised source texts, searchable as one string.  since(k) is a view of the texts added after the
    first k, so that quotes are checked against what is new, not against everything again."""

    def __init__(self):
        self.texts = []
        self._joined = None

    def add(self, text):
        if isinstance(text, str) and text.strip():
            self.texts.append(normalise(text))
            self._joined = None

    def since(self, k):
        view = Sources()
        view.texts = self.texts[k:]
        return view

    @property
    def joined(self):
        if self._joined is None:
            self._joined = "\x00".join(self.texts)
        return self._joined


def _tolerance(q):
    """Half a unit in the last quoted digit: '2.3' -> 0.05, '1.2e5' -> 5000, '120' -> 0.5."""
    q = q.replace(",", "").rstrip("%")
    mant, _, exp = q.lower().partition("e")
    decimals = len(mant.split(".", 1)[1]) if "." in mant else 0
    scale = 10.0 ** int(exp) if exp else 1.0
    return 0.5 * (10.0 ** -decimals) * scale * 1.0000001


def _num(s):
    try:
        return float(s.replace(",", "").rstrip("%"))
    except ValueError:
        return None


def _num_close(quoted, seen):
    a, b = _num(quoted), _num(seen)
    if a is None or b is None:
        return False
    if a == b:
        return True
    if (a < 0) != (b < 0):
        return False
    return abs(a - b) <= _tolerance(quoted)


def _find(text, part, pos=0):
    """text.find(part, pos), where a digit at either end of part is a whole number's end in text: `warmup_steps:
    20000` is not in `warmup_steps: 200000`, `3.12 GiB` is not in `13.12 GiB`."""
    head, tail = part[:1].isdigit(), part[-1:].isdigit()
    i = text.find(part, pos)
    if not (head or tail):
        return i
    first, tries = i, 0
    while i >= 0:
        before = text[i - 1] if i else ""
        after = text[i + len(part): i + len(part) + 2]
        if not (head and (before.isdigit() or before == ".")) and \
                not (tail and after[:1].isdigit() or tail and after[:1] == "." and after[1:2].isdigit()):
            return i
        tries += 1
        if tries >= FIND_TRIES:       # thousands of near misses (a crafted run of numbers): take the plain match, a
            return first              # miss is better than a false block, and the work stays linear
        if not tries & 255:
            check()
        i = text.find(part, i + 1)
    return -1


FIND_TRIES = 1024


def _contains(text, part):
    return _find(text, part) >= 0


def _in_order(parts, text):
    pos = 0
    for p in parts:
        i = _find(text, p, pos)
        if i < 0:
            return False
        pos = i + len(p)
    return True


# A number in a fuzzy pattern is a whole number of the source: it starts after no digit or "." and ends before no
# digit or ".digit", so "12" is never split into "1" and "2" by neighbouring groups. Without that a quote of n
# numbers was tried against a run of digits in every split, C(len, n) ways (a quote of 20 numbers: 19 s), and every
# position inside a run of digits started a match (quadratic); now one way, from the run's start.
_NUM_GROUP = r"(?<![\d.])(" + _NUM + r")(?!\.?\d)"


def _fuzzy_pattern(part):
    """Regex for a quote part in which every number may be any number (checked after)."""
    out, nums, last = [], [], 0
    for m in _NUM_RE.finditer(part):
        out.append(re.escape(part[last:m.start()]))
        out.append(_NUM_GROUP)
        nums.append(m.group(0))
        last = m.end()
    out.append(re.escape(part[last:]))
    pat = "".join(out).replace(r"\ ", r"\s*")
    return pat, nums


# A long source is searched window by window, the time budget checked between windows. A fuzzy pattern's work
# at one position grows with its numbers (each is tried in turn), so a window is WINDOW characters per number:
# about 50 ms of matching at worst.
WINDOW = 1 << 17


def _matches(rx, text, overlap, window=WINDOW, lo=0, n=None):
    """rx.finditer(text[lo:n]), one window of text at a time (budget.check() between windows). A match may start up
    to the window's end and run `overlap` characters past it; one that reaches the searched end is matched again
    against the whole text, so no match is cut by a window's edge."""
    whole = len(text)
    n = whole if n is None else n
    while lo < n:
        check()
        hi = min(n, lo + window)
        ext = min(whole, hi + overlap)
        end = hi
        for m in rx.finditer(text, lo, ext):
            if m.start() >= hi:
                break
            if m.end() >= ext and ext < whole:
                m = rx.match(text, m.start())
                if m is None:
                    continue
            end = max(end, m.end())
            yield m
        lo = end


def _near(text, anchor, before, after):
    """The spans of `text` that can hold a match of a quote part: from `before` characters ahead of an occurrence
    of `anchor` (the part's longest literal piece, which every match holds) to `after` characters past its end,
    merged, in order. Dense occurrences are merged by jumping to the last one in reach (rfind), so the walk takes
    O(len(text) / reach + spans) steps, never one per occurrence."""
    n, size = len(text), len(anchor)
    j = text.find(anchor)
    while j >= 0:
        lo, hi = max(0, j - before), min(n, j + size + after)
        while True:
            k = text.rfind(anchor, j + 1, min(n, hi + before + size))
            if k < 0:
                break
            j, hi = k, min(n, k + size + after)
        yield lo, hi
        j = text.find(anchor, j + 1)


def _reach(pieces, nums, i):
    """How far a match may run before and after its anchor, literal piece `i`: twice the quote's own characters
    on each side, plus 32 characters per number there (a source's number may be longer than the quote's, 2.3071
    quoted as 2.3; a float is written in at most 24) and some slack."""
    def side(ps, ns):
        return 2 * (sum(map(len, ps)) + sum(map(len, ns))) + 32 * len(ns) + 128
    return side(pieces[:i], nums[:i]), side(pieces[i + 1:], nums[i:])


def _fuzzy_found(part, sources, limit=2000):
    pat, nums = _fuzzy_pattern(part)
    if not nums:
        return False
    pieces = _NUM_RE.split(part)  # literal pieces; piece i comes after i of the numbers
    at = max(range(len(pieces)), key=lambda i: len(pieces[i].strip()))
    anchor = pieces[at].strip()
    if anchor and anchor not in sources.joined:
        return False
    try:
        rx = re.compile(pat)
    except re.error:
        return False
    overlap = 2 * len(part) + 64 * len(nums) + 256  # a source's numbers may be longer than the quote's (rounding)
    window = max(2048, WINDOW // len(nums))
    before, after = _reach(pieces, nums, at)
    for text in sources.texts:
        if anchor and anchor not in text:
            continue
        # only where the anchor is: a quote of 24 numbers against a megabyte of digit runs is then searched in
        # the few windows around its literal text, not at every digit (the whole text when it has no anchor)
        spans = _near(text, anchor, before, after) if anchor else [(0, len(text))]
        candidates = (m for lo, hi in spans for m in _matches(rx, text, overlap, window, lo, hi))
        for k, m in enumerate(candidates):
            if k > limit:
                break
            if all(_num_close(q, m.group(i + 1)) for i, q in enumerate(nums)):
                return True
    return False


def _number_found(q, sources):
    qn = q.replace(",", "").rstrip("%")
    rx = re.compile(r"(?<![\w.])" + re.escape(q) + r"(?![\w])")
    if rx.search(sources.joined):
        return True
    if _NUM_FULL.fullmatch(q) is None:
        return False
    for text in sources.texts:
        for k, m in enumerate(_NUM_RE.finditer(text)):
            if not k & 4095:
                check()
            if _num_close(qn, m.group(0)):
                return True
    return False


def _approx_found(q, sources):
    """`~0.348` for 0.3481726: a number within 5 % of the quoted one (or its rounding) in some source."""
    a = _num(q)
    if a is None:
        return False
    slack = max(abs(a) * 0.05, _tolerance(q.replace(",", "").rstrip("%")))
    for text in sources.texts:
        for k, m in enumerate(_PLAIN_NUM.finditer(text)):     # "12,0.348": two numbers in a CSV row, not one
            if not k & 4095:
                check()
            b = _num(m.group(0))
            if b is not None and abs(a - b) <= slack:
                return True
    return False


_PLAIN_NUM = re.compile(r"(?<![\w.])[-+]?(?:\d+(?:\.\d+)?|\.\d+)(?:e[-+]?\d+)?(?![\w])")


_KV_QUOTE = re.compile(r"^['\"]?([\w./\-\[\]]+?)['\"]?\s*[=:]\s*['\"]?([^\s'\",;}]+)['\"]?[,;]?$")


def _kv_found(q, sources):
    """`lr=3e-3` for `lr: 3.0e-03`, `optimizer.lr: 0.001` for `  lr: 1.0e-3` (nested YAML)."""
    m = _KV_QUOTE.match(q)
    if not m:
        return False
    key = m.group(1).rsplit(".", 1)[-1]
    value = m.group(2)
    numeric = _NUM_FULL.fullmatch(value) is not None
    vpat = "(" + _NUM + ")" if numeric else re.escape(value)
    rx = re.compile(r"(?<![\w.])['\"]?" + re.escape(key) + r"['\"]?\s*[=:]\s*['\"]?" + vpat + r"(?![\w.])")
    if key not in sources.joined:
        return False
    for text in sources.texts:
        if key not in text:
            continue
        for k, mm in enumerate(rx.finditer(text)):
            if not k & 4095:
                check()
            if not numeric or _num_close(value, mm.group(1)):
                return True
    return False


def found(quote_text, kind, sources):
    """True when the quote appears in one of the sources."""
    q = normalise(quote_text).strip("'„«»「」『』")
    if kind == "number":
        return _number_found(q, sources)
    if kind == "approx":
        return _approx_found(q.lstrip("~≈ "), sources)
    variants = [q]
    for v in (q.rstrip(".,;:"), _LINE_PREFIX.sub("", q, count=1)):
        if v and v not in variants:
            variants.append(v)
    joined = sources.joined
    for v in variants:
        parts = [p for p in _ELLIPSIS.split(v) if p.strip(" .")]
        if not parts:
            return True
        if len(parts) == 1:
            if _contains(joined, parts[0]):
                return True
        elif any(_in_order(parts, t) for t in sources.texts):
            return True
    for v in variants[1:] + variants[:1]:
        parts = [p for p in _ELLIPSIS.split(v) if p.strip(" .")]
        if parts and all(_contains(joined, p) or _fuzzy_found(p, sources) for p in parts):
            return True
    return any(_kv_found(v, sources) for v in variants)


_LETTERS = re.compile(r"[a-z]{3,}")
_SAFE_TOKEN = re.compile(r"^[\x21-\x7e]{3,}$")


def anchor(quote_text):
    """Groups of lowercase byte strings (one group per ellipsis part) such that every source matching the quote holds
    all the strings of some group verbatim, even in the transcript's raw
    JSON: the quote's literal tokens (what lies between its numbers, split at whitespace: case, spacing and numbers
    may differ between a quote and its source, these may not), from its longest part when an ellipsis splits it.
    Tokens that JSON or the matcher could write otherwise (quote marks, backslashes, non-ASCII) are left out; with
    none left, its runs of three or more letters.  None when it has neither (numbers only, a short `key=value`, a
    non-Latin script): then nothing can be skipped."""
    q = _LINE_PREFIX.sub("", normalise(quote_text).strip("„«»「」『』"), count=1)
    kv = _KV_QUOTE.match(q)
    if kv:                            # `optimizer.lr=3e-3` is found as `lr: 3.0e-03`: only the last key part holds
        value = kv.group(2)
        q = kv.group(1).rsplit(".", 1)[-1] + " " + ("" if _NUM_FULL.fullmatch(value) else value)
        words = _LETTERS.findall(q)
        return [tuple(sorted({w.encode() for w in words}, key=len, reverse=True))] if words else None
    groups = []
    for part in [p for p in _ELLIPSIS.split(q) if p.strip(" .")] or [q]:
        # each part of an ellipsis quote may sit in another output: a record holding any one part can matter
        tokens = set()
        for piece in _NUM_RE.split(part):
            for tok in piece.split():
                tok = tok.strip(".,;:'")
                if _SAFE_TOKEN.match(tok) and not any(c in tok for c in "'\\\"`"):
                    tokens.add(tok.encode())
        if not tokens:
            tokens = {w.encode() for w in _LETTERS.findall(part)}
        if not tokens:
            return None
        groups.append(tuple(sorted(tokens, key=len, reverse=True)[:4]))
    return groups or None
