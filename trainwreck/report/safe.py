"""Text from a run reaches a terminal, a JSON stream or a Markdown page only neutralised (issue 10, "Found 6").

A log line, an exception message or a file name may hold terminal controls (OSC window-title and clipboard
writes, BEL, backspace, C1 controls such as the one-byte CSI U+009B, a carriage return mid-line), bidi overrides
and isolates that reorder what is shown, and zero-width characters or a BOM that hide text. Each is shown
escaped (`\\x1b`, `\\u202e`), never sent raw. In Markdown, the run's text is also escaped so that it cannot
open HTML (`<script>`, `<img onerror>`, `<!--`), a link, a heading or a code span of its own.
"""
from __future__ import annotations

import json
import re
from typing import Any

from trainwreck import lazy_re

# C0 controls but tab and newline, DEL, C1 controls, the Arabic letter mark, zero-width and directional marks
# (U+200B–U+200F), line/paragraph separators and bidi embeddings/overrides (U+2028–U+202E), word joiner and
# invisible operators (U+2060–U+2064), bidi isolates and deprecated format controls (U+2066–U+206F), the BOM,
# interlinear annotation controls, and lone surrogates (a file name that is not valid UTF-8)
_UNSAFE = "\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u180e\u200b-\u200f\u2028-\u202e\u2060-\u2064\u2066-\u206f\ufeff" \
          "\ufff9-\ufffb\ud800-\udfff"
_TERMINAL = lazy_re(f"[{_UNSAFE}]")
_LINE = lazy_re(f"[{_UNSAFE}\n\t]")
_JSON = lazy_re("[\x7f-\x9f\u061c\u180e\u200b-\u200f\u2028-\u202e\u2060-\u2064\u2066-\u206f\ufeff\ufff9-\ufffb"
                   "\ud800-\udfff]")


def _escape(m: "re.Match[str]") -> str:
    c = ord(m.group(0))
    return {9: "\\t", 10: "\\n", 13: "\\r"}.get(c) or (f"\\x{c:02x}" if c < 0x100 else f"\\u{c:04x}")


def terminal_text(text: Any) -> str:
    """Rendered output for a terminal: every control, bidi and invisible character escaped; lines and tabs kept."""
    t = str(text)
    return _TERMINAL.sub(_escape, t) if _TERMINAL.search(t) else t


def one_line(text: Any) -> str:
    """One value from the run (a path, a quoted line) on one line: newlines and tabs escaped too."""
    t = str(text)
    return _LINE.sub(_escape, t) if _LINE.search(t) else t


def json_text(data: Any, indent: int = 2) -> str:
    """JSON with the characters a terminal would act on written as \\u escapes: the same data once decoded."""
    text = json.dumps(data, indent=indent, ensure_ascii=False)
    return _JSON.sub(lambda m: f"\\u{ord(m.group(0)):04x}", text)


# Markdown: characters that open a construct wherever they stand (code span, emphasis, link and image brackets,
# table cell, strikethrough; `_` only where it is not inside a word), escaped; & < > become entities, which every
# renderer reads (no HTML, no autolink, no comment); a value that starts like a block (heading, list item, quote,
# setext underline) has its first character escaped
_MD_ANY = lazy_re(r"([\\`*\[\]|~]|(?<![A-Za-z0-9])_|_(?![A-Za-z0-9]))")
_MD_HTML = {"&": "&amp;", "<": "&lt;", ">": "&gt;"}
_MD_BLOCK = lazy_re(r"^(?:#{1,6}(?=\s|$)|[+-](?=\s|$)|\d{1,9}[.)](?=\s|$)|[=-]+\s*$)")


# a bare URL: GitHub-flavoured Markdown turns `http://…`, `https://…`, `ftp://…` and `www.…` in prose into a live link
# whatever is escaped around it; inside a code span it is text
_URL = lazy_re(r"(?i)(?<![A-Za-z0-9])(?:[a-z][a-z0-9+.\-]{0,15}://|www\.)[^\s<>&`]{1,2000}")


def md_text(text: Any) -> str:
    """A value from the run inside Markdown prose: on one line, neutralised, every Markdown and HTML character
    escaped, so it renders as the literal text and opens no link, heading, list, code span or HTML of its own
    (a bare URL, which GitHub would link, is written as a code span)."""
    t = one_line(text)
    if ("://" in t or "www." in t.lower()) and _URL.search(t):
        parts, at = [], 0
        for m in _URL.finditer(t):
            parts.append(_md_prose(t[at:m.start()]) + md_code(m.group(0)))
            at = m.end()
        return "".join(parts) + _md_prose(t[at:])
    return _md_prose(t)


def _md_prose(t: str) -> str:
    if any(c in t for c in "&<>"):
        t = "".join(_MD_HTML.get(c, c) for c in t)
    t = _MD_ANY.sub(r"\\\1", t)
    m = _MD_BLOCK.match(t)
    if m:
        t = t[:m.end() - 1] + "\\" + t[m.end() - 1:]
    return t


def md_code(text: Any, table: bool = False) -> str:
    """A value from the run as an inline code span: on one line and neutralised, fenced by more backticks than
    it holds (CommonMark), so a backtick in it cannot end the span; in a table cell `|` is escaped too. A value
    holding < > or & is written as escaped prose instead (md_text): inside a code span an entity would show as
    written, and raw HTML is never written into the page, in a code span or not."""
    if any(c in str(text) for c in "<>&"):
        return md_text(text)
    t = one_line(text)
    if table:
        t = t.replace("|", "\\|")
    runs = [len(r) for r in re.findall(r"`+", t)]
    fence = "`" * (max(runs) + 1 if runs else 1)
    pad = " " if t[:1] == "`" or t[-1:] == "`" or (t[:1] == " " and t[-1:] == " " and t.strip()) else ""
    return f"{fence}{pad}{t}{pad}{fence}"


class NeutralStream:
    """A text stream that neutralises what is written to it (terminal_text) before the stream it wraps sees it:
    the CLI's stdout, so that no verb, present or future, can send a run's control or bidi characters raw."""

    def __init__(self, inner: Any) -> None:
        self._inner = inner

    def write(self, text: str) -> int:
        self._inner.write(terminal_text(text))
        return len(text)

    def __getattr__(self, name: str) -> Any:  # flush, fileno, isatty, encoding, buffer …: the wrapped stream's
        return getattr(self._inner, name)
