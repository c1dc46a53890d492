"""A path inside a shell command replaced by a shell variable: `/runs/3_lr=0.1,wandb.api_key=<hex>/train.log` becomes
`"$RUN"/train.log`, so a command never shows a path that holds a secret and still runs once the user sets RUN.

The command is read as the shell reads it (unquoted, single- and double-quoted text, backslash escapes, a trailing
`# comment`), so the path is found in whatever quoting `shlex.quote` or trainwreck's own words gave it, and the
variable is spliced in with the quoting closed around it: the command stays one valid shell line."""
from __future__ import annotations

import shlex
from typing import List, NamedTuple, Optional

_WORD_START = " \t;|&()<>"  # after one of these (or at the start) a `#` opens a comment
_ENDS_NAME = " \t;|&()<>'\"`"  # a path followed by one of these (or by `/`, or the end) ends there
_PATH_CHARS = "._-/~"  # a character before the path that makes it the tail of another name (so does a letter or digit)


class _Char(NamedTuple):
    ch: str  # the character the shell sees
    state: str  # N (unquoted), S (single quotes), D (double quotes), C (comment)
    start: int  # where its spelling starts in the command, and ends
    end: int
    opened: int  # for S and D: where the quotes around it open, and close (-1 when they never close)
    closed: int


def _read(cmd: str) -> List[_Char]:
    out: List[_Char] = []
    i, n = 0, len(cmd)
    while i < n:
        c = cmd[i]
        if c == "#" and (i == 0 or cmd[i - 1] in _WORD_START):
            out.extend(_Char(cmd[j], "C", j, j + 1, -1, -1) for j in range(i, n))
            break
        if c in "'\"":
            close = cmd.find("'", i + 1) if c == "'" else _close_double(cmd, i + 1)
            j, stop = i + 1, close if close >= 0 else n
            region: List[_Char] = []
            while j < stop:
                if c == '"' and cmd[j] == "\\" and j + 1 < stop and cmd[j + 1] in '$`"\\\n':
                    region.append(_Char(cmd[j + 1], "D", j, j + 2, i, close))
                    j += 2
                    continue
                region.append(_Char(cmd[j], "S" if c == "'" else "D", j, j + 1, i, close))
                j += 1
            out.extend(region)
            i = stop + 1
            continue
        if c == "\\" and i + 1 < n:
            out.append(_Char(cmd[i + 1], "N", i, i + 2, -1, -1))
            i += 2
            continue
        out.append(_Char(c, "N", i, i + 1, -1, -1))
        i += 1
    return out


def _close_double(cmd: str, i: int) -> int:
    while i < len(cmd):
        if cmd[i] == "\\":
            i += 2
            continue
        if cmd[i] == '"':
            return i
        i += 1
    return -1


def name_path(cmd: str, path: str, var: str = "RUN", rest: str = "") -> str:
    """`cmd` with every whole occurrence of `path` (as the shell reads it, in any quoting) replaced by `"$var"`
    followed by `rest` (a literal tail, quoted), in a comment by the same words unquoted. A match must end the
    name (at `/`, a blank, a quote or an operator) and not continue another one."""
    if not path or _plain(path) not in _plain(cmd):
        return cmd
    chars = _read(cmd)
    logical = "".join(c.ch for c in chars)
    spans = []
    at = logical.find(path)
    while at >= 0:
        end = at + len(path)
        before: Optional[str] = logical[at - 1] if at else None
        after: Optional[str] = logical[end] if end < len(logical) else None
        states = {c.state for c in chars[at:end]}
        whole = (before is None or not (before.isalnum() or before in _PATH_CHARS)) and \
                (after is None or after == "/" or after in _ENDS_NAME)
        if whole and ("C" not in states or states == {"C"}):
            spans.append((at, end))
            at = logical.find(path, end)
        else:
            at = logical.find(path, at + 1)
    for at, end in reversed(spans):
        first, last = chars[at], chars[end - 1]
        if first.state == "C":
            cmd = cmd[:first.start] + f'"${var}"{rest}' + cmd[last.end:]
            continue
        lo, hi = first.start, last.end
        head = tail = ""
        quote = {"S": "'", "D": '"'}
        if first.state in quote:  # close the quotes the path starts in, or drop them when they open right before it
            if first.opened == lo - 1:
                lo -= 1
            else:
                head = quote[first.state]
        if last.state in quote:  # reopen the quotes the path ends in, or drop them when they close right after it
            if last.closed == hi:
                hi += 1
            else:
                tail = quote[last.state]
        cmd = cmd[:lo] + head + f'"${var}"' + (shlex.quote(rest) if rest else "") + tail + cmd[hi:]
    return cmd


def _plain(cmd: str) -> str:
    """The command with its quote characters and backslashes gone: a quick test that a path may be in it."""
    return cmd.replace("'", "").replace('"', "").replace("\\", "")
