"""trainwreck's one YAML reader (standard library only), with two entry points over one lexer:

- `scan(lines)` for run configs (Hydra's resolved config.yaml, overrides.yaml, hparams.yaml): it builds no
  objects; it yields every scalar with its dotted key path and its 1-based line, which is what a diagnosis
  needs to cite `trainer.gradient_clip_val: null  .hydra/config.yaml:18`. Tolerant: a line it does not
  understand is skipped, never an error.
- `loads(text)` for trainwreck's own data (the signature catalog's sources, compiled by
  `python -m trainwreck.catalog.build`): a strict subset that builds Python objects equal to PyYAML's
  `safe_load` (tests/test_catalog.py checks every catalog file). Supported: block sequences and mappings
  (space indentation), `- key: value` items, plain scalars (str, int, float, true/false, null), single-quoted
  ('' escapes a quote) and double-quoted (backslash escapes) scalars, one-line flow lists `[a, 'b']` and
  flow maps `{k: v}` of scalars, full-line and trailing comments. Anything else (anchors, tags, block
  scalars `|`/`>`, multi-line flow collections, several documents) raises YAMLError instead of being misread.
Both read lines through `_lines` (numbers, indentation, tabs, comments) and keys with one grammar (`_KEY_SRC`).
"""
from __future__ import annotations

import re
from typing import Any, Iterator, List, Tuple

from trainwreck import lazy_re

__all__ = ["YAMLError", "loads", "scan", "unquote"]


class YAMLError(ValueError):
    pass


# A mapping key: quoted, or plain (not starting with an indicator, no ':' or '#').
# The key keeps the blanks before its ':' (readers strip them) and a value ends at its last non-blank: a lazy key or
# value followed by `\s*` would try every split of a run of blanks (quadratic: seconds on one line of spaces).
_KEY_SRC = r"""(?P<key>"[^"]*"\s*|'[^']*'\s*|[^\s:#'"\[\]{}][^:#]*):"""
_KEY = lazy_re(r"^(?P<indent>[ ]*)(?P<dash>-\s+)?" + _KEY_SRC + r"(?:\s+(?P<val>.*\S))?\s*$")
_ITEM = lazy_re(r"^(?P<indent>[ ]*)-\s+(?P<val>(?:.*\S)?)\s*$")
# loads() runs only when trainwreck's own data is built: its patterns compile on first use (re.match caches them)
_KEY_AT = _KEY_SRC + r"(?:\s+|$)"  # a key at the start of a line's text
_BLOCK_SCALAR = ("|", ">", "|-", ">-", "|+", ">+")


def _lines(lines: List[str], strict: bool) -> Iterator[Tuple[int, str, int]]:
    """(1-based line number, line without its newline, indent) for every line that holds YAML content.

    Blank lines, full-line comments and document markers are skipped. A tab in the indentation is read as
    two spaces (tolerant) or refused (strict: YAML forbids it, and guessing would misplace the key)."""
    for n, raw in enumerate(lines, 1):
        line = raw.rstrip("\r\n")
        lead = len(line) - len(line.lstrip())
        if "\t" in line[:lead]:
            if strict:
                raise YAMLError(f"line {n}: tab in indentation")
            line = line.replace("\t", "  ")
        stripped = line.strip()
        if not stripped or stripped.startswith("#"):
            continue
        if stripped in ("---", "..."):
            if strict:
                raise YAMLError(f"line {n}: several documents are not supported")
            continue
        yield n, line, len(line) - len(line.lstrip(" "))


def _strip_comment(v: str) -> str:
    if not v or v[0] in "\"'":
        return v
    i = v.find(" #")
    return v[:i].rstrip() if i >= 0 else v


def unquote(v: str) -> str:
    if len(v) >= 2 and v[0] == v[-1] and v[0] in "\"'":
        return v[1:-1]
    return v


def scan(lines: List[str]) -> Iterator[Tuple[str, str, int]]:
    """Yield (dotted.key, raw scalar value, line number) for every scalar in a block-style YAML document."""
    stack: List[Tuple[int, str]] = []  # (indent, key)
    list_index: dict = {}
    block_indent = -1
    for n, line, lead in _lines(lines, strict=False):
        if block_indent >= 0:
            if lead > block_indent:
                continue
            block_indent = -1
        m = _KEY.match(line)
        if m:
            indent = len(m.group("indent")) + (len(m.group("dash")) if m.group("dash") else 0)
            if m.group("dash"):
                parent_indent = len(m.group("indent"))
                while stack and stack[-1][0] >= parent_indent:
                    stack.pop()
                parent = ".".join(k for _, k in stack)
                idx = list_index.get((parent, parent_indent), -1) + 1
                list_index[(parent, parent_indent)] = idx
                stack.append((parent_indent, f"[{idx}]"))
            while stack and stack[-1][0] >= indent:
                stack.pop()
            key = unquote(m.group("key").strip())
            val = _strip_comment(m.group("val") or "")
            path = ".".join([k for _, k in stack] + [key]).replace(".[", "[")
            if val in _BLOCK_SCALAR:
                block_indent = indent
                yield path, "", n
                continue
            if val == "":
                stack.append((indent, key))
                continue
            yield path, val, n
            continue
        m = _ITEM.match(line)
        if m:
            indent = len(m.group("indent"))
            while stack and stack[-1][0] >= indent:
                stack.pop()
            parent = ".".join(k for _, k in stack)
            idx = list_index.get((parent, indent), -1) + 1
            list_index[(parent, indent)] = idx
            yield (f"{parent}[{idx}]" if parent else f"[{idx}]"), _strip_comment(m.group("val")), n


class _Line:
    __slots__ = ("indent", "text", "no")

    def __init__(self, indent: int, text: str, no: int) -> None:
        self.indent, self.text, self.no = indent, text, no


def loads(text: str) -> Any:
    """Python objects from a document in the subset above (None for an empty one); YAMLError otherwise."""
    lines: List[_Line] = []
    for no, line, lead in _lines(text.splitlines(), strict=True):
        body = line.strip(" ").rstrip()
        if body[0] in "&*!%|>":
            raise YAMLError(f"line {no}: unsupported YAML construct")
        lines.append(_Line(lead, body, no))
    if not lines:
        return None
    p = _Parser(lines)
    value = p.block(0, lines[0].indent)
    if p.i != len(lines):
        raise YAMLError(f"line {lines[p.i].no}: unexpected indentation")
    return value


def _key_of(m: "re.Match[str]", no: int) -> str:
    raw = m.group("key").rstrip()
    if raw[0] in "'\"":
        return _scalar_or_flow(raw, no)
    return raw


class _Parser:
    def __init__(self, lines: List[_Line]) -> None:
        self.lines = lines
        self.i = 0

    def block(self, i: int, indent: int) -> Any:
        self.i = i
        if _is_item(self.lines[i].text):
            return self.seq(indent)
        return self.mapping(indent)

    def seq(self, indent: int) -> List[Any]:
        out: List[Any] = []
        while self.i < len(self.lines):
            ln = self.lines[self.i]
            if ln.indent < indent:
                break
            if ln.indent > indent or not _is_item(ln.text):
                raise YAMLError(f"line {ln.no}: expected a '- ' item at indent {indent}")
            rest = ln.text[1:].lstrip(" ")
            if not rest:
                nxt = self._next_indent()
                if nxt is None or nxt <= indent:
                    out.append(None)
                    self.i += 1
                else:
                    out.append(self.block(self.i + 1, nxt))
                continue
            if not rest.startswith(("'", '"', "[", "{")) and re.match(_KEY_AT, rest):
                # "- key: value" opens a mapping whose keys sit at the column of `key`
                col = ln.indent + (len(ln.text) - len(rest))
                self.lines[self.i] = _Line(col, rest, ln.no)
                out.append(self.mapping(col))
                continue
            out.append(_scalar_or_flow(rest, ln.no))
            self.i += 1
        return out

    def mapping(self, indent: int) -> dict:
        out: dict = {}
        while self.i < len(self.lines):
            ln = self.lines[self.i]
            if ln.indent < indent:
                break
            if ln.indent > indent:
                raise YAMLError(f"line {ln.no}: unexpected indentation")
            if _is_item(ln.text):
                break
            m = re.match(_KEY_AT, ln.text)
            if not m:
                raise YAMLError(f"line {ln.no}: expected 'key: value'")
            key = _key_of(m, ln.no)
            if key in out:
                raise YAMLError(f"line {ln.no}: duplicate key {key!r}")
            rest = ln.text[m.end():]
            if rest and not rest.startswith("#"):
                out[key] = _scalar_or_flow(rest, ln.no)
                self.i += 1
                continue
            nxt = self._next_indent()
            if nxt is not None and nxt > indent:
                out[key] = self.block(self.i + 1, nxt)
            elif nxt is not None and nxt == indent and _is_item(self.lines[self.i + 1].text):
                out[key] = self.block(self.i + 1, nxt)  # "key:\n- item" at the same indent
            else:
                out[key] = None
                self.i += 1
        return out

    def _next_indent(self):
        j = self.i + 1
        return self.lines[j].indent if j < len(self.lines) else None


def _is_item(text: str) -> bool:
    return text == "-" or text.startswith("- ")


def _scalar_or_flow(text: str, no: int) -> Any:
    value, end = _parse_value(text, 0, no, flow=False)
    tail = text[end:].strip()
    if tail and not tail.startswith("#"):
        raise YAMLError(f"line {no}: trailing text {tail!r}")
    return value


def _parse_value(text: str, pos: int, no: int, flow: bool) -> Tuple[Any, int]:
    while pos < len(text) and text[pos] == " ":
        pos += 1
    if pos >= len(text):
        return None, pos
    c = text[pos]
    if c == "'":
        return _single(text, pos, no)
    if c == '"':
        return _double(text, pos, no)
    if c == "[":
        return _flow_seq(text, pos, no)
    if c == "{":
        return _flow_map(text, pos, no)
    return _plain(text, pos, no, flow)


def _single(text: str, pos: int, no: int) -> Tuple[str, int]:
    out = []
    i = pos + 1
    while True:
        j = text.find("'", i)
        if j < 0:
            raise YAMLError(f"line {no}: unterminated single-quoted scalar")
        out.append(text[i:j])
        if text.startswith("''", j):
            out.append("'")
            i = j + 2
            continue
        return "".join(out), j + 1


_ESCAPES = {"\\": "\\", '"': '"', "/": "/", "n": "\n", "t": "\t", "r": "\r", "0": "\0", " ": " ",
            "a": "\a", "b": "\b", "e": "\x1b", "f": "\f", "v": "\v"}
_HEX = {"x": 2, "u": 4, "U": 8}


def _double(text: str, pos: int, no: int) -> Tuple[str, int]:
    out = []
    i = pos + 1
    while i < len(text):
        c = text[i]
        if c == '"':
            return "".join(out), i + 1
        if c == "\\":
            if i + 1 >= len(text):
                break
            e = text[i + 1]
            if e in _ESCAPES:
                out.append(_ESCAPES[e])
                i += 2
                continue
            if e in _HEX:
                n = _HEX[e]
                hexdigits = text[i + 2: i + 2 + n]
                if len(hexdigits) != n or not all(h in "0123456789abcdefABCDEF" for h in hexdigits):
                    raise YAMLError(f"line {no}: bad escape")
                out.append(chr(int(hexdigits, 16)))
                i += 2 + n
                continue
            raise YAMLError(f"line {no}: unsupported escape \\{e}")
        out.append(c)
        i += 1
    raise YAMLError(f"line {no}: unterminated double-quoted scalar")


def _plain(text: str, pos: int, no: int, flow: bool) -> Tuple[Any, int]:
    i = pos
    stops = ",]}" if flow else ""
    while i < len(text):
        c = text[i]
        if c in stops:
            break
        if c == "#" and i > pos and text[i - 1] == " ":
            break
        if c == ":" and (i + 1 == len(text) or text[i + 1] == " " or (flow and text[i + 1] in ",]}")):
            raise YAMLError(f"line {no}: ': ' inside a plain scalar; quote it")
        i += 1
    raw = text[pos:i].rstrip()
    if raw and raw[0] in "@`%&*!|>":
        raise YAMLError(f"line {no}: plain scalar starts with reserved character")
    if raw[:1] in ("-", "?", ":") and raw[1:2] in ("", " "):
        raise YAMLError(f"line {no}: {raw[:1]!r} opens a nested collection here; quote the value")
    return _resolve(raw, no), i


_INT = r"[-+]?(?:0|[1-9][0-9]*)\Z"
_FLOAT = r"[-+]?[0-9]+\.[0-9]*(?:[eE][-+][0-9]+)?\Z|\.[0-9]+(?:[eE][-+][0-9]+)?\Z"
# What PyYAML's YAML 1.1 resolver reads as a number or a boolean (octal 012, 0x1f, 1_000, sexagesimal 1:20,
# .inf, yes/off, …): anything here that _INT / _FLOAT do not cover is refused, never read differently.
_YAML11 = (r"(?:[-+]?0b[0-1_]+|[-+]?0[0-7_]+|[-+]?(?:0|[1-9][0-9_]*)|[-+]?0x[0-9a-fA-F_]+"
           r"|[-+]?[1-9][0-9_]*(?::[0-5]?[0-9])+"
           r"|[-+]?(?:[0-9][0-9_]*)\.[0-9_]*(?:[eE][-+][0-9]+)?|\.[0-9][0-9_]*(?:[eE][-+][0-9]+)?"
           r"|[-+]?[0-9][0-9_]*(?::[0-5]?[0-9])+\.[0-9_]*|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN)"
           r"|yes|Yes|YES|no|No|NO|on|On|ON|off|Off|OFF|y|Y|n|N)\Z")


def _resolve(raw: str, no: int) -> Any:
    if raw in ("", "~", "null", "Null", "NULL"):
        return None
    if raw in ("true", "True", "TRUE"):
        return True
    if raw in ("false", "False", "FALSE"):
        return False
    if re.match(_INT, raw):
        return int(raw)
    if re.match(_FLOAT, raw):
        return float(raw)
    if re.match(_YAML11, raw):
        raise YAMLError(f"line {no}: {raw!r} is a number or a boolean in YAML 1.1 (octal, hex, 1_000, yes/no, "
                        f"…); quote it")
    return raw


def _flow_seq(text: str, pos: int, no: int) -> Tuple[List[Any], int]:
    out: List[Any] = []
    i = pos + 1
    while True:
        while i < len(text) and text[i] == " ":
            i += 1
        if i >= len(text):
            raise YAMLError(f"line {no}: unterminated flow sequence")
        if text[i] == "]":
            return out, i + 1
        value, i = _parse_value(text, i, no, flow=True)
        out.append(value)
        i = _flow_sep(text, i, no, "]")


_FLOW_KEY = lazy_re(r"\s*([A-Za-z_][A-Za-z0-9_-]*)\s*:\s")


def _flow_map(text: str, pos: int, no: int) -> Tuple[dict, int]:
    out: dict = {}
    i = pos + 1
    while True:
        while i < len(text) and text[i] == " ":
            i += 1
        if i >= len(text):
            raise YAMLError(f"line {no}: unterminated flow mapping")
        if text[i] == "}":
            return out, i + 1
        m = _FLOW_KEY.match(text, i)
        if not m:
            raise YAMLError(f"line {no}: expected 'key: value' in flow mapping")
        key = m.group(1)
        value, i = _parse_value(text, m.end(), no, flow=True)
        if key in out:
            raise YAMLError(f"line {no}: duplicate key {key!r}")
        out[key] = value
        i = _flow_sep(text, i, no, "}")


def _flow_sep(text: str, i: int, no: int, close: str) -> int:
    """After a flow item: skip spaces and a ','; the closing bracket is left for the caller."""
    while i < len(text) and text[i] == " ":
        i += 1
    if i < len(text) and text[i] == ",":
        return i + 1
    if i < len(text) and text[i] == close:
        return i
    raise YAMLError(f"line {no}: expected ',' or '{close}' in a flow collection")
