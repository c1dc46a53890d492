"""Detectors: each module here with `detect(bundle) -> List[Finding]` is run on every bundle. A module that says
`LATE = True` runs after all the others and is called as `detect(bundle, earlier)` with their findings, so it can
stand down on what they saw instead of running their scans again.

A detector is a small pure function of the evidence; it reports what it saw and never classifies the run.
A detector that fails is reported in the notes and the others still run.
"""
from __future__ import annotations

import importlib
from functools import lru_cache
from typing import List, Tuple

from trainwreck import submodules
from trainwreck.collect import safeio
from trainwreck.collect.bundle import Bundle
from trainwreck.model import HYPOTHESIS, Finding


@lru_cache(maxsize=1)
def detectors() -> Tuple:
    mods = []
    for name in submodules(__path__):
        mod = importlib.import_module(f"{__name__}.{name}")
        if callable(getattr(mod, "detect", None)):
            mods.append(mod)
    return tuple(sorted(mods, key=lambda m: (bool(getattr(m, "LATE", False)), m.__name__)))


def analyze(bundle: Bundle) -> List[Finding]:
    """Every detector's findings, then the claim checks (claim_checks.py): no DIRECT claim that the numbers or
    the config it cites contradict."""
    findings: List[Finding] = []
    mods = detectors()
    for i, mod in enumerate(mods):
        if bundle.deadline is not None and safeio.cpu_clock() > bundle.deadline:  # the backstop (collect/safeio.py)
            left = [m.__name__.rsplit(".", 1)[-1] for m in mods[i:]]
            bundle.note(f"the run's CPU deadline ({safeio.RUN_SECONDS:.0f} s) was reached: {len(left)} detector(s) "
                        f"not run ({', '.join(left[:5])}{' …' if len(left) > 5 else ''}); the findings are incomplete")
            break
        try:
            late = getattr(mod, "LATE", False)
            findings.extend((mod.detect(bundle, list(findings)) if late else mod.detect(bundle)) or [])
        except Exception as exc:  # a broken detector must not take the diagnosis down
            short = mod.__name__.rsplit(".", 1)[-1]
            bundle.note(f"detector {short} failed ({type(exc).__name__}: {str(exc)[:100]}); its checks were skipped")
    from trainwreck.analyze import claim_checks
    try:
        return claim_checks.check(bundle, findings)
    except Exception as exc:  # unchecked claims are not trusted: they keep their place but lose DIRECT
        bundle.note(f"claim checks failed ({type(exc).__name__}: {str(exc)[:100]}); no claim was verified")
        for f in findings:
            f.label = HYPOTHESIS
        return findings
