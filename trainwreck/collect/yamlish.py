"""A line-oriented YAML scanner for run configs (Hydra's resolved config.yaml, overrides.yaml, hparams.yaml).

It does not build Python objects; it yields every scalar with its dotted key path and its 1-based line,
which is what a diagnosis needs to cite `trainer.gradient_clip_val: null  .hydra/config.yaml:18`.
Standard library only, tolerant of anything it does not understand (it skips the line).
"""
from __future__ import annotations

import re
from typing import Iterator, List, Tuple

_KEY = re.compile(r"""^(?P<indent>[ ]*)(?P<dash>-\s+)?(?P<key>"[^"]*"|'[^']*'|[^\s:#'"\[\]{}][^:#]*?)\s*:(?:\s+(?P<val>.*?))?\s*$""")
_ITEM = re.compile(r"^(?P<indent>[ ]*)-\s+(?P<val>.*?)\s*$")


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
    for n, raw in enumerate(lines, 1):
        line = raw.rstrip("\r\n")
        if "\t" in line[: len(line) - len(line.lstrip())]:
            line = line.replace("\t", "  ")
        stripped = line.strip()
        if block_indent >= 0:
            if not stripped or len(line) - len(line.lstrip()) > block_indent:
                continue
            block_indent = -1
        if not stripped or stripped.startswith("#") or stripped in ("---", "..."):
            continue
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
            if val in ("|", ">", "|-", ">-", "|+", ">+"):
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
