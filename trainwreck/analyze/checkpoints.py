"""Checkpoint integrity: empty or truncated files (checked from the container format, never unpickled)."""
from __future__ import annotations

from typing import List

from trainwreck.collect.bundle import Bundle
from trainwreck.model import DIRECT, Finding, Source


def detect(bundle: Bundle) -> List[Finding]:
    out = []
    for ck in bundle.checkpoints:
        if ck.get("ok") is False:
            out.append(Finding(
                id="checkpoint.corrupt", claim=f"checkpoint {ck['path']} is damaged: {ck['problem']}", label=DIRECT,
                confidence=0.6, evidence=[Source(ck["path"], None, f"{ck['size']} bytes: {ck['problem']}")],
                role="factor", relevant=["crash"], stage="checkpoint",
                fixes=[f"resume from an earlier intact checkpoint than {ck['path']}",
                       "write checkpoints to a temp name and rename when complete (atomic save)",
                       "check free disk space where checkpoints are written (df -h)"],
                verify_skill="loss-spike-rollback"))
    return out
