"""Metric lines printed as `expression = value`, the layout of Julia's `@show` and of Python's `f"{expr=}"`.

`@show loss(x, y)` prints `loss(x, y) = 0.2001447729236289` (Flux's Tracker adds ` (tracked)`), `@show (i,
loss(x, y))` prints `(i, loss(x, y)) = (1, 0.29602579662457984 (tracked))`, and `f"{loss(x)=}"` prints
`loss(x)=0.2`. The key is the expression, so the ordinary `key = value` reader finds no key in it. `rewrite`
turns such a line into the plain layout the reader knows (`i=1, loss=0.296…`): a call's argument list is dropped
from the name (`loss(x, y)` is the loss), and a tuple of expressions is paired with its tuple of values.
It scans each line once, with bounded look-backs, and returns None for any line that is not of this layout.
"""
from __future__ import annotations

from typing import List, Optional

_SPAN = 300  # at most this many characters between a bracket and its match
_OPEN, _CLOSE = "([{", ")]}"


def _match(text: str, i: int, step: int) -> int:
    """Index of the bracket that closes (step 1) or opens (step -1) the one at `i`, or -1 (unbalanced, or farther
    than _SPAN)."""
    into, out = (_OPEN, _CLOSE) if step == 1 else (_CLOSE, _OPEN)
    depth = 0
    for j in range(i, min(len(text), i + _SPAN) if step == 1 else max(-1, i - _SPAN), step):
        c = text[j]
        if c in into:
            depth += 1
        elif c in out:
            depth -= 1
            if depth == 0:
                return j
    return -1


def _match_forward(text: str, i: int) -> int:
    return _match(text, i, 1)


def _match_back(text: str, j: int) -> int:
    return _match(text, j, -1)


def _split(inner: str) -> List[str]:
    """`a, f(b, c), d` → ['a', 'f(b, c)', 'd']: commas at bracket depth 0 only."""
    parts, depth, start = [], 0, 0
    for k, c in enumerate(inner):
        if c in _OPEN:
            depth += 1
        elif c in _CLOSE:
            depth -= 1
        elif c == "," and depth == 0:
            parts.append(inner[start:k].strip())
            start = k + 1
    parts.append(inner[start:].strip())
    return parts


def _name(expr: str) -> str:
    """The name of an expression: `loss(dataset[1]...)` → `loss`, `model.loss` → `model.loss`."""
    cut = expr.find("(")
    return (expr[:cut] if cut > 0 else expr).strip()


def _tuple(text: str) -> Optional[str]:
    s = text.strip()
    end = _match_forward(s, 0)
    if end < 0:
        return None
    rest = s[end + 1:].lstrip()
    if not rest.startswith("=") or rest.startswith("=="):
        return None
    vals = rest[1:].strip()
    if not vals.startswith("(") or _match_forward(vals, 0) != len(vals) - 1:
        return None
    keys, values = _split(s[1:end]), _split(vals[1:-1])
    if len(keys) != len(values) or len(keys) < 2:
        return None
    pairs = [f"{_name(k)}={v.split()[0]}" for k, v in zip(keys, values) if k and v]
    return ", ".join(pairs) if pairs else None


def _calls(text: str) -> Optional[str]:
    """Drop the argument list of each `name(args) =` (at most 8 of them on a line)."""
    out, done, pos = [], 0, 0  # text[:done] is in out; the next `)` is searched from pos
    for _ in range(8):
        k = text.find(")", pos)
        if k < 0:
            break
        pos = k + 1
        after = text[k + 1:k + 4].lstrip()
        if not after.startswith("=") or after.startswith("=="):
            continue
        o = _match_back(text, k)
        if o > done and (text[o - 1].isalnum() or text[o - 1] == "_"):
            out.append(text[done:o])
            done = k + 1
    if not out:
        return None
    out.append(text[done:])
    return "".join(out)


def rewrite(text: str) -> Optional[str]:
    """The line in `key=value` layout when it is an `expression = value` line, else None."""
    if ")=" not in text and ") =" not in text:
        return None
    if text.lstrip().startswith("("):
        got = _tuple(text)
        if got is not None:
            return got
    return _calls(text)
