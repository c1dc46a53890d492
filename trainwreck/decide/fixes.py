"""Fix candidates, most likely first: the direct factors' first fix, then the primary cause's fixes, then the
others'. Fixes that turn the same knob count once, whoever proposed them: the first one kept is the best
evidenced (a DIRECT factor citing the config line comes before the catalog's generic advice). A fix that offers
alternatives ("…, or …"; "…; …") keeps only the alternatives whose knobs no earlier fix turns."""
from __future__ import annotations

from typing import Dict, List, Optional, Set

from trainwreck.analyze.knobs import alternatives, covered, join, knob_key
from trainwreck.model import DIRECT, HYPOTHESIS, Finding

MAX_FIXES = 8


def fix_topic(text: str) -> str:
    """The knobs a fix turns, as one key (fix texts come from the catalog and the detectors, not from the logs)."""
    return "+".join(sorted(knob_key(text)))


def _new_part(text: str, seen: Set[str]) -> Optional[str]:
    """The fix less its alternatives whose every knob an earlier fix already turns; None when nothing is left."""
    keep = []
    for sep, part in alternatives(text):
        if not covered(part, seen):
            keep.append((sep, part))
    if not keep:
        return None
    return text if len(keep) == len(alternatives(text)) else join(keep)


def rank_fixes(primary: Optional[Finding], causes: List[Finding], factors: List[Finding]) -> List[Dict]:
    fixes: List[Dict] = []
    seen: Set[str] = set()

    def add(text: str, why: Finding, label: str) -> None:
        text = _new_part(text, seen)
        if text is None:
            return
        for _sep, part in alternatives(text):
            seen.update(knob_key(part))
        fixes.append({"fix": text, "because": why.claim, "source": why.id,
                      "label": label, "evidence": [e.cite() for e in why.evidence[:2]]})

    for f in factors:
        if f.label == DIRECT:
            for x in f.fixes[:1]:
                add(x, f, DIRECT)
    if primary:
        for x in primary.fixes:
            add(x, primary, HYPOTHESIS if primary.label == HYPOTHESIS else DIRECT)
    for f in causes[1:] + factors:
        for x in f.fixes:
            add(x, f, HYPOTHESIS)
    fixes = fixes[:MAX_FIXES]
    for i, fx in enumerate(fixes, 1):
        fx["rank"] = i
    return fixes
