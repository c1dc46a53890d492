"""Which distributed rank printed a log line, and where the prefixes in front of its message end.

The one parser of the prefixes that launchers, log collectors and loggers put in front of a line. Three kinds:

* launcher tags, which name the process that printed the line: torch>=2.2 `[rank3]:` (and `rank3]:` at the
  very start of a line cut before its `[`), torchrun --tee `[default3]:`, torchrun --log-line-prefix and
  horovodrun `[3]<stderr>:`, mpirun/horovod `[1,3]<stderr>:`, srun --label `3: `, and `stderr: `/`stdout: `
  (a stream without a rank). They stand at the start of the line, possibly several of them, possibly after
  an ISO-8601 timestamp a log collector added (`2024-05-01T12:00:00.123Z [rank3]: …`).
* record prefixes, which name no rank: timestamps, bracketed levels and sources (`[INFO|trainer.py:2319]`,
  `[E ProcessGroupNCCL.cpp:457]`), Ray's `(RayTrainWorker pid=1234)`, glog's `I1203 12:00:00.123 123 file.cc:42]`,
  NCCL's `host:pid:tid [3]`.
* rank mentions inside the message: `[Rank 3]`, `[PG 1 Rank 3]`, `RankID:3`, `rank 3`, `rank=3`, `global_rank: 3`.

split_stream(text) -> (stream key, rank, body): the launcher tags at column 0 (the traceback scanner's streams).
launcher_prefix(text) -> (rank, rest): the same, leading blanks allowed (a padded srun label, an indented excerpt).
prefix_rank(text) -> rank: the rank of the launcher tags (per-rank metric series).
strip_prefixes(text) -> (rank, message): every leading launcher tag and record prefix removed.
line_rank(text) -> rank: the rank that printed the line, else the rank the line names.
"""
from __future__ import annotations

import re
from typing import Optional, Tuple

from trainwreck import lazy_re

_ISO = r"\d{4}-\d\d-\d\d[T ]\d\d:\d\d:\d\d(?:[.,]\d+)?(?:Z|[+-]\d\d:?\d\d)?"
# the launcher tags, each capturing its rank (mpirun's "[1,3]": the second number is the rank)
_TAG_PATTERNS = (r"\[rank(\d+)\]:[ ]?", r"\[default(\d+)\]:", r"\[(\d+)\]<std(?:err|out)>:",
                 r"\[\d+,(\d+)\]<std(?:err|out)>:", r"std(?:err|out): ", r"(\d{1,4}): ")
_CUT_TAG = r"^rank(\d+)\]:[ ]?"  # "[rank3]: " whose "[" was cut off: only at the very start of the text
_TAG = lazy_re("|".join((_CUT_TAG,) + _TAG_PATTERNS))
_TAGS = lazy_re(r"(?:%s\s+)?((?:%s)+)" % (_ISO, "|".join(re.sub(r"\((?!\?)", "(?:", p)
                                                        for p in (_CUT_TAG,) + _TAG_PATTERNS)))
# record prefixes (no rank): any short bracketed field, Ray actors, timestamps, NCCL's host:pid:tid [dev], glog
_RECORDS = lazy_re(r"^(?:\s*(?:\[[^\]]{1,60}\]|\(\w+ pid=\d+\)|%s|\d{4}-\d\d-\d\d[ T][\d:.,]+|"
                      r"[\w.-]+:\d+:\d+ \[\d+\]|[A-Z]\d{4} [\d:.]+ \d+ \S+\])[:\s-]*)+" % _ISO)
_BRACKET_RANK = lazy_re(r"\[(?:rank|default)(\d+)\]")
_MENTIONS = [
    lazy_re(r"\[(?:PG [^\]]*?)?Rank (\d+)\]"),  # ProcessGroupNCCL "[Rank 3]", "[PG 1 Rank 3]"
    lazy_re(r"\bRankID:(\d+)"),  # torch_npu / CANN "(PID:1, Device:3, RankID:3)"
    lazy_re(r"(?i)(?<![\w.])(?:global_)?rank[\s:=#]{0,3}(\d+)\b"),  # "rank 3", "Rank 0 Skipping step", "rank=3"
]
_DIGITS = frozenset("0123456789")


def _may_start_tags(text: str) -> bool:
    """A cheap test that rules out most lines: launcher tags and ISO timestamps start with `[`, a digit,
    `rank` or `std`."""
    c = text[:1]
    return c == "[" or c in _DIGITS or (c == "r" and text.startswith("rank")) or (c == "s" and text.startswith("std"))


def split_stream(text: str) -> Tuple[str, Optional[int], str]:
    """(stream key, rank, body) of one line: its launcher tags at column 0 (after an optional ISO timestamp).

    The key is the tags without blanks (`[rank3]:`, `[1,3]<stderr>:`, `3:`, `stderr:`; "" when there are
    none); `rank3]:` cut before its `[` gets the key of `[rank3]:` so the cut line joins its stream. The rank
    is the first tag's that names one."""
    if not _may_start_tags(text):
        return "", None, text
    m = _TAGS.match(text)
    if not m:
        return "", None, text
    tags = m.group(1)
    t = _TAG.match(tags)  # every tag pattern has at most one group: its rank
    rank = int(t.group(t.lastindex)) if t.lastindex else None
    if rank is None and t.end() < len(tags):  # "stderr: " names no rank: the next tag may
        rank = next((int(x.group(x.lastindex)) for x in _TAG.finditer(tags, t.end()) if x.lastindex), None)
    key = tags.replace(" ", "")
    return ("[" + key if key.startswith("rank") else key), rank, text[m.end():]


def launcher_prefix(text: str) -> Tuple[Optional[int], str]:
    """(rank, the text after the launcher tags); leading blanks allowed. (None, text) when there are none."""
    s = text.lstrip()
    key, rank, body = split_stream(s)
    return (rank, body) if key else (None, text)


def prefix_rank(text: str) -> Optional[int]:
    """The rank named by the launcher tags at the start of `text`, or None."""
    if text[:1].isspace():
        text = text.lstrip()
    elif not _may_start_tags(text):
        return None
    return split_stream(text)[1]


def strip_prefixes(text: str) -> Tuple[Optional[int], str]:
    """(rank, message): the text without its leading launcher tags and record prefixes (timestamps, levels,
    `[file:line]` fields, Ray actor names, glog and NCCL headers), for quoting what the line says. The rank
    is the launcher tags' or a `[rank3]`/`[default3]` field's, else None."""
    rank, body = launcher_prefix(text)
    m = _RECORDS.match(body)
    if not m:
        return rank, body
    if rank is None:
        b = _BRACKET_RANK.search(m.group(0))
        rank = int(b.group(1)) if b else None
    return rank, body[m.end():]


def line_rank(text: str) -> Optional[int]:
    """The rank that printed the line (its launcher tags), else the one the line names (`[Rank 3]`, `RankID:3`,
    `rank 3`), else None. Only the first 400 characters are read."""
    t = text[:400]
    r = prefix_rank(t)
    if r is not None:
        return r
    for pat in _MENTIONS:
        m = pat.search(t)
        if m:
            return int(m.group(1))
    return None
