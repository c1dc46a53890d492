"""Catalog detector: known failure messages (trainwreck/catalog/*.yaml) matched line by line.

One Finding per signature that matched: the first matching line is the evidence, plus up to two
more distinct lines (another rank, the last occurrence). A line that holds none of the catalog's
gate words costs a lower(), a byte translation and one cached dictionary lookup (see catalog.Prefilter).
"""
from __future__ import annotations

import math
import re
from typing import Dict, List, Optional

from trainwreck import lazy_re
from trainwreck.catalog import Signature, family_of, line_key, load, prefilter
from trainwreck.collect.bundle import Bundle
from trainwreck.collect.ranks import line_rank
from trainwreck.model import DIRECT, Finding, Line, quoted

# a capture that is one token (a size with its unit, an id, a module or op name, a shape): not prose
_PLAIN_CAPTURE = lazy_re(r"(?:[\w.:/+\-\[\]()%@,=*#<>'\"]|, ){1,80}(?: (?:[KMGTPE]i?B|B|bytes?|ms|s|seconds?))?")
MAX_MATCH_CHARS = 8192  # regexes see at most this much of one line (tqdm lines can be megabytes)
# Catalog entries that are a launcher's summary of a failed worker, not a failure of their own (the catalog has no
# field for this yet).
# A launcher or wrapper saying that a child process failed ("Step 1 exited with non-zero status 1",
# CalledProcessError's "returned non-zero exit status"): the child's own error is elsewhere.
WRAPPER = lazy_re(r"(?i)exited with non-zero (?:exit )?(?:status|code)|returned non-zero exit status|"
                     r"died with <Signals\.|non-zero exit status \d+|exited with (?:return )?code [1-9]|"
                     r"ProcessRaisedException\b")
# (torch.multiprocessing.spawn re-raises a child's exception as ProcessRaisedException, with the child's traceback
# after "-- Process N terminated with the following error:")
_WRAPPER_GATES = ("zero", "Zero", "ZERO", "ied with", "IED WITH", "ith code", "ith return code", "ITH CODE",
                  "ITH RETURN CODE", "ProcessRaisedException")  # cheap substring tests before the case-blind regex

def parse_rank(text: str) -> Optional[int]:
    return line_rank(text)  # the one rank parser


class _Hits:
    __slots__ = ("sig", "first", "first_order", "first_match", "last", "count", "ranks", "other_rank")

    def __init__(self, sig: Signature, line: Line, order: int, m: "re.Match[str]", rank: Optional[int]) -> None:
        self.sig = sig
        self.first = line
        self.first_order = order
        self.first_match = m
        self.last: Optional[Line] = None
        self.count = 1
        self.ranks = {rank} if rank is not None else set()
        self.other_rank: Optional[Line] = None


def scan(lines) -> Dict[str, _Hits]:
    """Match every line against the catalog; the hits per signature id, in first-seen order."""
    candidates = prefilter().candidates_for_key
    hits: Dict[str, _Hits] = {}
    for order, line in enumerate(lines):
        text = line.text
        if not text:
            continue
        cands = candidates(line_key(text))
        if not cands:
            continue
        probe = text if len(text) <= MAX_MATCH_CHARS else text[:MAX_MATCH_CHARS]
        rank: Optional[int] = None
        rank_done = False
        for sig in cands:
            m = sig.match(probe)
            if m is None:
                continue
            if not rank_done:
                rank, rank_done = parse_rank(text), True
            h = hits.get(sig.id)
            if h is None:
                hits[sig.id] = _Hits(sig, line, order, m, rank)
                continue
            h.count += 1
            h.last = line
            if rank is not None:
                if h.ranks and rank not in h.ranks and h.other_rank is None:
                    h.other_rank = line
                h.ranks.add(rank)
    return hits


def _ranks_text(ranks) -> str:
    rs = sorted(ranks)
    if len(rs) == 1:
        return f"rank {rs[0]}"
    if rs == list(range(rs[0], rs[-1] + 1)):
        return f"ranks {rs[0]}\u2013{rs[-1]}"
    if len(rs) > 6:
        return f"{len(rs)} ranks"
    return "ranks " + ", ".join(str(r) for r in rs)


def _detail(sig: Signature, m: "re.Match[str]") -> str:
    if not sig.detail:
        return ""
    # a captured token (a size, an id, a name) reads as it is; captured prose is the run's words, so it is quoted
    groups = {k: v if _PLAIN_CAPTURE.fullmatch(v) else quoted(v) for k, v in m.groupdict().items()
              if v is not None}
    try:
        return sig.detail.format(**groups)
    except (KeyError, IndexError, ValueError):
        return ""


def claim_for(h: _Hits) -> str:
    parts = []
    detail = _detail(h.sig, h.first_match)
    if detail:
        parts.append(detail)
    if h.count > 1:
        extra = f"{h.count} times"
        if len(h.ranks) > 1:
            extra += ", " + _ranks_text(h.ranks)
        parts.append(extra)
    return h.sig.title + (f" ({'; '.join(parts)})" if parts else "")


def _confidence(sig: Signature, count: int) -> float:
    if count < sig.min_count:
        return round(sig.weight * 0.5 * count / sig.min_count, 3)
    boost = 1.0 + 0.05 * math.log2(count / sig.min_count) if count > sig.min_count else 1.0
    return round(min(0.99, sig.weight * boost), 3)


def _finding(h: _Hits) -> Finding:
    sig = h.sig
    evidence = [h.first.source()]
    seen_text = {h.first.text}
    for extra in (h.other_rank, h.last):
        if extra is not None and extra.text not in seen_text and len(evidence) < 3:
            evidence.append(extra.source())
            seen_text.add(extra.text)
    first_rank = parse_rank(h.first.text)
    below = h.count < sig.min_count
    claim = claim_for(h)
    if below:
        claim = f"{claim}: below the {sig.min_count} matches that make it a failure signal"
    return Finding(
        id=sig.id,
        signature=sig.id,
        claim=claim,
        label=DIRECT,
        confidence=_confidence(sig, h.count),
        evidence=evidence,
        suggests=None if below else sig.classification,
        role="context" if below else sig.role,
        stage=sig.stage,
        stack=list(sig.stack),
        fixes=[] if below else list(sig.fixes),
        verify_skill=None if below else sig.verify.skill,
        verify_hint=None if below else (sig.verify.command or None),
        order=float(h.first_order),
        meaning=sig.meaning,
        rank=first_rank,
        kind="launcher-summary" if sig.launcher_summary else "signature",
        timeout=sig.classification == "stall" and sig.role == "terminal",  # the catalog's timed-out collectives
        family=family_of(sig),
    )


def is_wrapper_message(text: str) -> bool:
    """A launcher's or wrapper's report that a child process failed (not the child's own error)."""
    probe = text[:MAX_MATCH_CHARS]
    return any(g in probe for g in _WRAPPER_GATES) and WRAPPER.search(probe) is not None


def wrapper_lines(lines) -> List[Finding]:
    """One context finding per line that is a launcher's report of a failed child: decide demotes the
    exception reported on that line (it is the wrapper's, not the failure)."""
    out = []
    for order, line in enumerate(lines):
        if line.text and is_wrapper_message(line.text):
            out.append(Finding(id="launcher.child-failed-line", kind="launcher-summary", wrapper=True, role="context",
                               claim="a launcher reporting that a child process failed; the child's own error is "
                                     "elsewhere", label=DIRECT, confidence=0.0, evidence=[line.source()],
                               order=float(order), rank=parse_rank(line.text)))
    return out


def detect(bundle: Bundle) -> List[Finding]:
    load()  # fail loudly here, not half-way through the lines, if the catalog is broken
    lines = list(bundle.all_lines())
    hits = scan(lines)
    return [_finding(h) for h in sorted(hits.values(), key=lambda h: h.first_order)] + wrapper_lines(lines)
