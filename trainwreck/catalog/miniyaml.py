"""A stdlib parser for the small YAML subset the signature catalog is written in.

Supported: block sequences and block mappings (indentation with spaces), `- key: value` items,
plain scalars (str, int, float, true/false, null), single-quoted ('' escapes a quote) and
double-quoted scalars (backslash escapes), flow lists `[a, 'b']` and flow maps `{k: v, k2: "w"}`
of scalars, full-line and trailing comments. Everything else (anchors, tags, block scalars `|`/`>`,
multi-line flow collections, documents) raises MiniYAMLError instead of being misread.
Results equal PyYAML's safe_load on that subset (tests/test_catalog.py checks every catalog file).
"""
from __future__ import annotations

import re
from typing import Any, List, Tuple

__all__ = ["MiniYAMLError", "loads"]


class MiniYAMLError(ValueError):
    pass


_KEY = re.compile(r"([A-Za-z_][A-Za-z0-9_-]*)\s*:(?:\s+|$)")
_INT = re.compile(r"[-+]?(?:0|[1-9][0-9]*)\Z")
_FLOAT = re.compile(r"[-+]?(?:[0-9]+\.[0-9]*|\.[0-9]+)(?:[eE][-+]?[0-9]+)?\Z")
_AMBIGUOUS = {"yes", "no", "on", "off", "y", "n"}  # YAML 1.1 booleans: refuse rather than guess
_ESCAPES = {"\\": "\\", '"': '"', "/": "/", "n": "\n", "t": "\t", "r": "\r", "0": "\0", " ": " ",
            "a": "\a", "b": "\b", "e": "\x1b", "f": "\f", "v": "\v"}


class _Line:
    __slots__ = ("indent", "text", "no")

    def __init__(self, indent: int, text: str, no: int) -> None:
        self.indent, self.text, self.no = indent, text, no


def loads(text: str) -> Any:
    lines: List[_Line] = []
    for no, raw in enumerate(text.splitlines(), 1):
        if "\t" in raw[: len(raw) - len(raw.lstrip())]:
            raise MiniYAMLError(f"line {no}: tab in indentation")
        stripped = raw.strip()
        if not stripped or stripped.startswith("#"):
            continue
        if stripped in ("---", "...") or stripped[0] in "&*!%|>":
            raise MiniYAMLError(f"line {no}: unsupported YAML construct")
        lines.append(_Line(len(raw) - len(raw.lstrip(" ")), raw.strip(" ").rstrip(), no))
    if not lines:
        return None
    p = _Parser(lines)
    value = p.block(0, lines[0].indent)
    if p.i != len(lines):
        ln = lines[p.i]
        raise MiniYAMLError(f"line {ln.no}: unexpected indentation")
    return value


class _Parser:
    def __init__(self, lines: List[_Line]) -> None:
        self.lines = lines
        self.i = 0

    def block(self, i: int, indent: int) -> Any:
        self.i = i
        ln = self.lines[i]
        if _is_item(ln.text):
            return self.seq(indent)
        return self.mapping(indent)

    def seq(self, indent: int) -> List[Any]:
        out: List[Any] = []
        while self.i < len(self.lines):
            ln = self.lines[self.i]
            if ln.indent < indent:
                break
            if ln.indent > indent or not _is_item(ln.text):
                raise MiniYAMLError(f"line {ln.no}: expected a '- ' item at indent {indent}")
            rest = ln.text[1:].lstrip(" ")
            if not rest:
                nxt = self._next_indent()
                if nxt is None or nxt <= indent:
                    out.append(None)
                    self.i += 1
                else:
                    out.append(self.block(self.i + 1, nxt))
                continue
            if _KEY.match(rest) and not rest.startswith(("'", '"', "[", "{")):
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
                raise MiniYAMLError(f"line {ln.no}: unexpected indentation")
            if _is_item(ln.text):
                break
            m = _KEY.match(ln.text)
            if not m:
                raise MiniYAMLError(f"line {ln.no}: expected 'key: value'")
            key = m.group(1)
            if key in out:
                raise MiniYAMLError(f"line {ln.no}: duplicate key {key!r}")
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
        raise MiniYAMLError(f"line {no}: trailing text {tail!r}")
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
    while i < len(text):
        c = text[i]
        if c == "'":
            if i + 1 < len(text) and text[i + 1] == "'":
                out.append("'")
                i += 2
                continue
            return "".join(out), i + 1
        out.append(c)
        i += 1
    raise MiniYAMLError(f"line {no}: unterminated single-quoted scalar")


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
            if e in "xuU":
                n = {"x": 2, "u": 4, "U": 8}[e]
                hexdigits = text[i + 2: i + 2 + n]
                if len(hexdigits) != n or not all(h in "0123456789abcdefABCDEF" for h in hexdigits):
                    raise MiniYAMLError(f"line {no}: bad escape")
                out.append(chr(int(hexdigits, 16)))
                i += 2 + n
                continue
            raise MiniYAMLError(f"line {no}: unsupported escape \\{e}")
        out.append(c)
        i += 1
    raise MiniYAMLError(f"line {no}: unterminated double-quoted scalar")


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
            raise MiniYAMLError(f"line {no}: ': ' inside a plain scalar; quote it")
        i += 1
    raw = text[pos:i].rstrip()
    if raw and raw[0] in "@`%&*!|>":
        raise MiniYAMLError(f"line {no}: plain scalar starts with reserved character")
    return _resolve(raw, no), i


def _resolve(raw: str, no: int) -> Any:
    if raw in ("", "~", "null", "Null", "NULL"):
        return None
    if raw in ("true", "True", "TRUE"):
        return True
    if raw in ("false", "False", "FALSE"):
        return False
    if raw.lower() in _AMBIGUOUS:
        raise MiniYAMLError(f"line {no}: ambiguous YAML 1.1 boolean {raw!r}; quote it")
    if _INT.match(raw):
        return int(raw)
    if _FLOAT.match(raw):
        return float(raw)
    return raw


def _flow_seq(text: str, pos: int, no: int) -> Tuple[List[Any], int]:
    out: List[Any] = []
    i = pos + 1
    while True:
        while i < len(text) and text[i] == " ":
            i += 1
        if i >= len(text):
            raise MiniYAMLError(f"line {no}: unterminated flow sequence")
        if text[i] == "]":
            return out, i + 1
        value, i = _parse_value(text, i, no, flow=True)
        out.append(value)
        while i < len(text) and text[i] == " ":
            i += 1
        if i < len(text) and text[i] == ",":
            i += 1
        elif i < len(text) and text[i] == "]":
            continue
        else:
            raise MiniYAMLError(f"line {no}: expected ',' or ']' in flow sequence")


def _flow_map(text: str, pos: int, no: int) -> Tuple[dict, int]:
    out: dict = {}
    i = pos + 1
    key_re = re.compile(r"\s*([A-Za-z_][A-Za-z0-9_-]*)\s*:\s")
    while True:
        while i < len(text) and text[i] == " ":
            i += 1
        if i >= len(text):
            raise MiniYAMLError(f"line {no}: unterminated flow mapping")
        if text[i] == "}":
            return out, i + 1
        m = key_re.match(text, i)
        if not m:
            raise MiniYAMLError(f"line {no}: expected 'key: value' in flow mapping")
        key = m.group(1)
        value, i = _parse_value(text, m.end(), no, flow=True)
        if key in out:
            raise MiniYAMLError(f"line {no}: duplicate key {key!r}")
        out[key] = value
        while i < len(text) and text[i] == " ":
            i += 1
        if i < len(text) and text[i] == ",":
            i += 1
        elif i < len(text) and text[i] == "}":
            continue
        else:
            raise MiniYAMLError(f"line {no}: expected ',' or '}}' in flow mapping")
