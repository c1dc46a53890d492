"""The text of a line as every reader gets it: decoded, cleaned (CR, NUL, ANSI codes), cut to MAX_LINE_CHARS (an
over-long line keeps its END, where a log line's message is) and redacted, key and value together. The read
primitive (collect/safeio.py, BoundedFile) is the only caller that turns file bytes into text through these."""
from __future__ import annotations

from typing import List, Optional, Tuple

from trainwreck import lazy_re
from trainwreck.collect.redact import redact_lines
from trainwreck.model import Line

MAX_LINE_CHARS = 4000
CLEAN_BYTES = 64 << 10  # a line's bytes that are decoded at most (its last ones, see clean_line)
_ANSI = lazy_re(r"\x1b\[[0-9;?]*[ -/]*[@-~]|\x1b[()][0-9A-Za-z]|\x1b[=>]")


def clean_text(raw: bytes) -> str:
    """The bytes of one line decoded: a final CR, NUL bytes and ANSI codes gone. Not cut, not redacted."""
    if raw.endswith(b"\r"):
        raw = raw[:-1]
    text = raw.replace(b"\x00", b"").decode("utf-8", "replace")
    if "\x1b" in text:
        text = _ANSI.sub("", text)
    return text


def clean_line(raw: bytes) -> str:
    if len(raw) > CLEAN_BYTES:
        raw = raw[-CLEAN_BYTES:] if not raw.endswith(b"\r") else raw[-CLEAN_BYTES - 1:]
    return clean_text(raw)


def cap_text(text: str) -> str:
    if len(text) > MAX_LINE_CHARS:
        return f"[…{len(text) - MAX_LINE_CHARS} chars cut] " + text[-MAX_LINE_CHARS:]
    return text


REDACT_CONTEXT = 256  # a long line's kept end is redacted with this much of the text before it (a key before its value)


def redact_window(text: str) -> Tuple[str, int]:
    """The end of an over-long line that redaction sees, and how many characters were cut before it: the last
    MAX_LINE_CHARS + REDACT_CONTEXT characters, started after a separator (blank, comma, quote, `&`), so that
    no token is cut in two (a secret's tail without the prefix that marks it). Where the cut falls inside a
    token longer than the context, the whole token goes; a window that is one token (a blob) goes whole.
    Redaction then costs the same on a 64 KB line as on a 4 KB one; the context is cut off after redaction."""
    start = len(text) - MAX_LINE_CHARS - REDACT_CONTEXT
    sep = _SEPARATOR.search(text, start)
    start = sep.end() if sep is not None else len(text)
    return text[start:], start


_SEPARATOR = lazy_re(r"[\s,;\"'&|]+")


def redact_texts(texts: List[str]) -> List[str]:
    """Consecutive texts (lines, or the cells of one line) redacted and each cut to MAX_LINE_CHARS. A text is
    cut to the line cap before redaction, so its rules see at most MAX_LINE_CHARS + REDACT_CONTEXT characters."""
    texts = list(texts)
    if not texts or max(map(len, texts)) <= MAX_LINE_CHARS:  # the common case: nothing to cut (and no loop)
        return redact_lines(texts)
    cut = [0] * len(texts)
    for i, text in enumerate(texts):
        if len(text) > MAX_LINE_CHARS + REDACT_CONTEXT:
            texts[i], cut[i] = redact_window(text)
    texts = redact_lines(texts)
    for i, n_cut in enumerate(cut):
        text = texts[i]
        if n_cut:
            texts[i] = f"[…{n_cut + max(0, len(text) - MAX_LINE_CHARS)} chars cut] " + text[-MAX_LINE_CHARS:]
        elif len(text) > MAX_LINE_CHARS:
            texts[i] = cap_text(text)
    return texts


def split_lines(data: bytes, rel: str, first_line: Optional[int], base_offset: int) -> List[Line]:
    """Decoded, cleaned, redacted Lines of `data` (which starts at byte `base_offset`, line `first_line`)."""
    raws = data.split(b"\n")
    texts = redact_texts([clean_line(r) for r in raws])
    out: List[Line] = []
    pos = base_offset
    ln = first_line
    for raw, text in zip(raws, texts):
        out.append(Line(rel, ln, text, pos))
        pos += len(raw) + 1
        if ln is not None:
            ln += 1
    return out
