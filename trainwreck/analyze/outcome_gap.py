"""A run that went silent long before a scheduler stopped it hung: the time limit only ended a hang.

Slurm's cancellation line carries its time (`CANCELLED AT 2022-04-14T16:20:46`); when the metric lines of the same
file carry theirs (`2022-04-14 12:01:02,123 INFO step 100 …`, HF's `04/14/2022 12:01:02 - INFO - …`, mmengine's
`2023/03/02 11:32:09 - mmengine - INFO - Iter(train) …`), the gap
between the last logged step and the stop says whether the run was still progressing when it was stopped."""
from __future__ import annotations

from datetime import datetime
from typing import List, Optional

from trainwreck import lazy_re
from trainwreck.analyze.trajectory_stats import median  # not statistics: it imports fractions, decimal, random
from trainwreck.collect.bundle import Bundle
from trainwreck.model import DIRECT, Finding

_ISO = lazy_re(r"^\[?(\d{4})-(\d{2})-(\d{2})[ T](\d{2}):(\d{2}):(\d{2})")
_US = lazy_re(r"^\[?(\d{2})/(\d{2})/(\d{4}) (\d{2}):(\d{2}):(\d{2})")
_SLASH = lazy_re(r"^\[?(\d{4})/(\d{2})/(\d{2}) (\d{2}):(\d{2}):(\d{2})")  # mmengine
_STOP_AT = lazy_re(r"CANCELLED AT (\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})")
MIN_GAP_S = 1800.0  # silent at least this long before the stop
SPACING_FACTOR = 10.0  # … and this many times the usual time between two logged steps


def _stamp(text: str) -> Optional[datetime]:
    try:
        m = _ISO.match(text) or _SLASH.match(text)
        if m is not None:
            return datetime(*(int(g) for g in m.groups()))
        m = _US.match(text)
        if m is not None:
            mo, d, y, hh, mm, ss = (int(g) for g in m.groups())
            return datetime(y, mo, d, hh, mm, ss)
    except ValueError:
        return None
    return None


def _human(seconds: float) -> str:
    return f"{seconds / 3600:.1f} h" if seconds >= 5400 else f"{seconds / 60:.0f} min"


def silent_before_stop(bundle: Bundle, stops: List[Finding]) -> List[Finding]:
    """A stall finding for each scheduler stop whose file logged its last step long before the stop."""
    out: List[Finding] = []
    for stop in stops:
        ev = stop.evidence[0] if stop.evidence else None
        m = _STOP_AT.search(ev.text) if ev is not None else None
        if m is None or ev.line is None:
            continue
        try:
            at = datetime(*(int(g) for g in m.groups()))
        except ValueError:
            continue
        steps = sorted({(p.source.line, p.source.text, p.step) for ss in bundle.series.values() for s in ss
                        for p in s.points if p.source.path == ev.path and p.source.line is not None
                        and p.source.line < ev.line}, key=lambda t: t[0])
        timed = [(ln, _stamp(text), step, text) for ln, text, step in steps[-50:]]
        timed = [t for t in timed if t[1] is not None]
        if len(timed) < 3:
            continue
        spacing = median([(b[1] - a[1]).total_seconds() for a, b in zip(timed, timed[1:])])
        last = timed[-1]
        gap = (at - last[1]).total_seconds()
        if gap < MIN_GAP_S or gap < SPACING_FACTOR * max(spacing, 1.0):
            continue
        src = next(p.source for ss in bundle.series.values() for s in ss for p in s.points
                   if p.source.path == ev.path and p.source.line == last[0])
        where = f"step {last[2]}" if last[2] is not None else f"line {last[0]}"
        out.append(Finding(
            id="outcome.silent-before-stop", label=DIRECT, confidence=0.7, suggests="stall", role="cause",
            stage="runtime", evidence=[src, ev], step=last[2], order=stop.order,
            claim=(f"no step logged for {_human(gap)} before the scheduler stopped the run (last at {where}, "
                   f"{last[1]:%Y-%m-%d %H:%M:%S}; steps came every {_human(spacing) if spacing >= 60 else f'{spacing:.0f} s'}"
                   f" before): it hung, and the stop only ended the hang"),
            fixes=["take a stack dump of every rank while it is silent (py-spy dump --pid <pid>) to see where it waits",
                   "rerun with NCCL_DEBUG=INFO TORCH_DISTRIBUTED_DEBUG=DETAIL to see the collective it waits in"],
            verify_skill="debug"))
    return out
