"""Which distributed rank printed a log line, from the prefix launchers put in front of it."""
from __future__ import annotations

import re
from typing import Optional, Tuple

# torch>=2.2 "[rank3]:", torchrun --tee "[default3]:", torchrun log-line-prefix "[3]<stderr>:",
# horovod/mpirun "[1,3]<stderr>:", srun --label "3: "
_PREFIX = re.compile(r"^\s*(?:\[(?:rank|default)(\d{1,5})\]:|\[(\d{1,5})\]<std(?:err|out)>:|"
                     r"\[\d+,(\d{1,5})\]<std(?:err|out)>:|(\d{1,4}): )")


def prefix_rank(text: str) -> Optional[int]:
    """The rank named by a launcher prefix at the start of `text`, or None."""
    c = text[:1]
    if c != "[" and c != " " and not c.isdigit():
        return None
    m = _PREFIX.match(text)
    if not m:
        return None
    return int(next(g for g in m.groups() if g is not None))


# a line's stream in the traceback scanner: its rank tags (optionally after an ISO timestamp)
_TAGS = re.compile(r"(?:\d{4}-\d\d-\d\d[T ]\d\d:\d\d:\d\d(?:[.,]\d+)?(?:Z|[+-]\d\d:?\d\d)?\s+)?"
                   r"((?:^rank\d+\]:[ ]?|\[rank\d+\]:[ ]?|\[default\d+\]:|\[\d+,\d+\]<std(?:err|out)>:|std(?:err|out): |\d{1,4}: )+)")
_RANK = re.compile(r"\[?rank(\d+)\]|\[default(\d+)\]|\[\d+,(\d+)\]<|^(\d+):")


def split_stream(text: str) -> Tuple[str, Optional[int], str]:
    """(stream key, rank, body) of one line."""
    m = _TAGS.match(text)
    if not m:
        return "", None, text
    tags = m.group(1)
    r = _RANK.search(tags)
    rank = int(next(g for g in r.groups() if g is not None)) if r else None
    key = tags.replace(" ", "")
    return ("[" + key if key.startswith("rank") else key), rank, text[m.end():]
