"""Fix candidates, most likely first: the direct factors' first fix, then the primary cause's fixes, then the
others'. Fixes that change the same knob count once, whoever proposed them."""
from __future__ import annotations

from typing import Dict, List, Optional

from trainwreck import lazy_re
from trainwreck.model import DIRECT, HYPOTHESIS, Finding

MAX_FIXES = 8
_TOPICS = [("clip", lazy_re(r"(?i)clip|max_grad_norm")), ("warmup", lazy_re(r"(?i)warm-?up")),
           ("bf16", lazy_re(r"(?i)\bbf16|bfloat16")), ("recompute", lazy_re(r"(?i)checkpointing|recompute")),
           ("alloc", lazy_re(r"(?i)expandable_segments|PYTORCH_CUDA_ALLOC_CONF")),
           ("lr", lazy_re(r"(?i)^(?:lower|reduce|decrease)?\s*(?:the\s+)?(?:peak\s+)?(?:lr|learning[ _]rate)\b|\blr\b.*:"))]


def fix_topic(text: str) -> str:
    """The knob a fix turns (fix texts come from the catalog and the detectors, not from the logs)."""
    for topic, rx in _TOPICS:
        if rx.search(text):
            return topic
    return text.split("(")[0].strip().lower()


def rank_fixes(primary: Optional[Finding], causes: List[Finding], factors: List[Finding]) -> List[Dict]:
    fixes: List[Dict] = []
    seen = set()

    def add(text: str, why: Finding, label: str) -> None:
        k = fix_topic(text)
        if k in seen:
            return
        seen.add(k)
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
