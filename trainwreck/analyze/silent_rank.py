"""One silent rank: every rank but one timed out on the same collective, so the one that did not is the suspect.

A collective times out on the ranks that reached it and waited; the rank that never reached it prints nothing
about it (it hung, ran other work, or took another code path). When N-1 ranks of a world of N report a timeout
on the same operation and sequence number, the missing rank is named. Horovod names the ranks itself
(`[missing ranks: 3]`). The world size comes from the logs (world_size=, WORLD_SIZE, nranks, MEMBER: i/N) or,
failing that, from the ranks seen anywhere in them; with no way to know it, nothing is claimed.
"""
from __future__ import annotations

import os
from typing import Dict, List, Optional, Set, Tuple

from trainwreck import lazy_re
from trainwreck.catalog import family_ref
from trainwreck.collect.bundle import Bundle
from trainwreck.collect.ranks import line_rank
from trainwreck.model import DIRECT, Finding, Line

# torch ProcessGroupNCCL's watchdog (torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp)
_NCCL_TIMEOUT = lazy_re(r"(?:Watchdog caught collective operation timeout: |\bWork )WorkNCCL\(SeqNum=(?P<seq>\d+), "
                        r"OpType=(?P<op>\w+).*?\)(?: ran for \d+ milliseconds before timing out| timed out in "
                        r"blocking wait)")
_HVD_MISSING = lazy_re(r"(?<!\S)(?P<op>\S+) \[missing ranks: (?P<ranks>\d+(?:, \d+)*)\]")
_HVD_READY = lazy_re(r"(?<!\S)(?P<op>\S+) \[ready ranks: (?P<ranks>\d+(?:, \d+)*)\]")
_WORLD = [lazy_re(r"(?i)\bworld[_ ]size\s*[=:]\s*(\d+)"), lazy_re(r"\bWORLD_SIZE\s*[=:]\s*(\d+)"),
          lazy_re(r"\bnranks (\d+)\b"), lazy_re(r"\bMEMBER: \d+/(\d+)\b")]
_FILE_RANK = lazy_re(r"(?i)rank[_-]?(\d+)")
_OWN_ERROR = lazy_re(r"Traceback \(most recent call last\)|\b\w+(?:Error|Exception): |Segmentation fault|Killed\b")
MAX_WORLD = 4096


def _family() -> Optional[Dict[str, str]]:
    return family_ref("silent-rank")


def _span_text(ranks: Set[int], world: int) -> str:
    """The reporting ranks as a short phrase: 'ranks 0–2, 4–7' style."""
    rs, parts, i = sorted(ranks), [], 0
    while i < len(rs):
        j = i
        while j + 1 < len(rs) and rs[j + 1] == rs[j] + 1:
            j += 1
        parts.append(str(rs[i]) if i == j else f"{rs[i]}\u2013{rs[j]}")
        i = j + 1
    return f"{len(rs)} of {world} ranks ({', '.join(parts)})"


def _lines(bundle: Bundle):
    """(order, line, the rank its file name says) in the order the catalog detector numbers lines."""
    ranks: Dict[str, Optional[int]] = {}
    for order, line in enumerate(bundle.all_lines()):
        if line.path not in ranks:
            m = _FILE_RANK.search(os.path.basename(line.path))
            ranks[line.path] = int(m.group(1)) if m else None
        if line.text:
            yield order, line, ranks[line.path]


def detect(bundle: Bundle) -> List[Finding]:
    timeouts: Dict[Tuple[str, str], Dict[int, Tuple[int, Line]]] = {}
    seen: Set[int] = set()
    world_hint = 0
    last_line: Dict[int, Line] = {}
    own_error: Dict[int, Line] = {}
    horovod: List[Tuple[str, List[int], int, Line]] = []
    ready: List[Tuple[str, Set[int], int, Line]] = []
    file_ranks: Set[int] = set()
    for order, line, file_rank in _lines(bundle):
        if file_rank is not None:
            file_ranks.add(file_rank)
        text = line.text[:4000]
        rank = line_rank(text)
        rank = file_rank if rank is None else rank
        if rank is not None and 0 <= rank < MAX_WORLD:
            seen.add(rank)
            last_line[rank] = line
            if rank not in own_error and _OWN_ERROR.search(text) and "Watchdog caught" not in text \
                    and "timed out" not in text and "Timeout" not in text:
                own_error[rank] = line
        # each pattern behind the literal it cannot match without (most lines hold none of them)
        if "orld" in text or "ORLD" in text or "nranks" in text or "MEMBER:" in text:
            for rx in _WORLD:
                m = rx.search(text)
                if m and 1 < int(m.group(1)) <= MAX_WORLD:
                    world_hint = max(world_hint, int(m.group(1)))
        if rank is not None and "WorkNCCL(" in text:
            m = _NCCL_TIMEOUT.search(text)
            if m:
                timeouts.setdefault((m.group("op"), m.group("seq")), {}).setdefault(rank, (order, line))
        if " ranks: " in text:
            m = _HVD_MISSING.search(text)
            if m:
                horovod.append((m.group("op"), [int(x) for x in m.group("ranks").split(", ")], order, line))
            m = _HVD_READY.search(text)
            if m:
                ready.append((m.group("op"), {int(x) for x in m.group("ranks").split(", ")}, order, line))
    out: List[Finding] = []
    world = max(world_hint, max(seen) + 1 if seen else 0)
    for (op, seq), by_rank in sorted(timeouts.items(), key=lambda kv: -len(kv[1])):
        if len(by_rank) < 2 or len(by_rank) != world - 1:
            continue  # one rank's timeout alone says nothing about the others: their output may just be missing
        silent = next(r for r in range(world) if r not in by_rank)
        if file_ranks and silent not in file_ranks:
            continue  # per-rank logs, and the silent rank's is not here: missing evidence, not silence
        first = sorted(by_rank.values(), key=lambda x: x[0])
        out.append(_finding(silent, set(by_rank), world, f"{op} (SeqNum {seq})", [x[1] for x in first],
                            first[0][0], last_line.get(silent), own_error.get(silent)))
        break  # the largest agreeing group; one suspect per run
    for op, ranks, order, line in ready if not horovod else []:
        # Horovod lists the ranks that submitted the op: in a world of N, the one rank not listed never did
        world_r = max(world_hint, max(ranks) + 1)
        if len(ranks) == world_r - 1 >= 1:
            horovod.append((op, [next(r for r in range(world_r) if r not in ranks)], order, line))
            break
    if not out and horovod:
        op, missing, order, line = horovod[0]
        if len(missing) == 1:
            out.append(_finding(missing[0], set(), world, f"the Horovod op {op}", [line], order,
                                last_line.get(missing[0]), own_error.get(missing[0]), named_by_log=True))
    return out


def _finding(silent: int, reporting: Set[int], world: int, what: str, lines: List[Line], order: int,
             last: Optional[Line], error: Optional[Line], named_by_log: bool = False) -> Finding:
    evidence = [lines[0].source()] + ([lines[-1].source()] if len(lines) > 1 else [])
    if named_by_log:
        claim = f"rank {silent} never submitted {what} that the other ranks waited on: rank {silent} is the suspect"
    else:
        claim = (f"{_span_text(reporting, world)} reported a collective operation timeout (NCCL) on "
                 f"{what}; rank {silent} did not: rank {silent} never reached the collective and is the suspect")
    if error is not None:
        # the silent rank printed an error of its own: that error is the failure; this only says who it was
        return Finding(id="collective.silent-rank", kind="silent-rank", claim=claim + " (it printed an error)",
                       label=DIRECT, confidence=0.5, evidence=evidence + [error.source()], suggests=None,
                       role="context", stage="runtime", rank=silent, family=_family())
    if last is not None:
        evidence.append(last.source())
    return Finding(
        id="collective.silent-rank", kind="silent-rank", claim=claim, label=DIRECT, confidence=0.85,
        evidence=evidence, suggests="stall", role="cause", stage="runtime", rank=silent, family=_family(),
        order=order - 0.5,  # the silent rank's stop came before the others' timeouts
        meaning="When every rank but one reports a timeout on the same collective, the one that "
                            "did not never reached it: it hung, ran rank-specific work, or took another code path.",
        fixes=[f"look at what rank {silent} was doing when the others timed out: its last log lines, or "
               f"py-spy dump --pid <rank {silent} pid> while it hangs",
               "make every rank run the same collectives in the same order (no rank-dependent branches around "
               "collectives, the same number of batches per rank: drop_last=True, DistributedSampler)",
               "rerun with TORCH_NCCL_DESYNC_DEBUG=1 (or TORCH_DISTRIBUTED_DEBUG=DETAIL) to confirm which rank "
               "is behind"],
        verify_skill="debug",
        verify_hint=f"py-spy dump --pid <pid of rank {silent}>  # while the job hangs: where rank {silent} is stuck")

