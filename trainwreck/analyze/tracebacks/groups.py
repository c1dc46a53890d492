"""Exception groups (Python 3.11+): the margin layout of "  + Exception Group Traceback", "  | …" and
"  +-+---- 1 ----" split into the group's own traceback and its sub-exceptions, nested groups included.

Each block of lines, once its margin is removed, is a plain traceback: `parse_group` hands it to the
`plain` parser it is given (scanner.parse_plain), so this module needs nothing from the scanner.
"""
from __future__ import annotations

from typing import Callable, List, Optional, Tuple

from trainwreck.analyze.tracebacks.vocab import Traceback
from trainwreck.model import Line

Item = Tuple[str, Line, int]  # (text, log line, position in the lines analysed)
PlainParser = Callable[[List[Item], Line], Optional[Traceback]]


def parse_group(items: List[Item], at: int, plain: PlainParser) -> Optional[Traceback]:
    """The group whose margin (`+`/`|`) is at column `at`, its sub-exceptions in `sub_exceptions`."""
    own: List[Item] = []
    subs: List[List[Item]] = []
    cur: Optional[List[Item]] = None
    for body, line, index in items:
        ch = body[at:at + 1]
        if ch == "|" and cur is None:
            own.append((body[at + 2:], line, index))
        elif ch == "+" and body[at + 1:at + 2] == "-":  # "+-+---- 1 ----": the sub-exceptions start
            cur = []
            subs.append(cur)
        elif ch == "+" and cur is None:  # "+ Exception Group Traceback (most recent call last):"
            own.append((body[at + 2:].replace("Exception Group Traceback", "Traceback"), line, index))
        elif cur is not None:
            if body[at + 2:at + 4] == "+-" and body[at + 2:at + 5] != "+-+":  # "+---- 2 ----" / closing "+----"
                cur = []
                subs.append(cur)
            else:
                cur.append((body, line, index))
    tb = plain(own, items[0][1])
    if tb is None:
        return None
    for sub in subs:
        if not sub:
            continue
        b0 = sub[0][0]
        if b0[at + 2:at + 3] == "|" and "Exception Group Traceback" in b0:  # a nested group
            st = parse_group([(b0[:at + 2] + "+" + b0[at + 3:], sub[0][1], sub[0][2])] + sub[1:], at + 2, plain)
        else:
            st = plain([(b[at + 4:], ln, i) for b, ln, i in sub], sub[0][1])
        if st is not None:
            tb.sub_exceptions.append(st)
    return tb

