"""A GAN whose discriminator has stopped discriminating: it gives real and generated samples the same saturated
score, D(x) = D(G(z)) = 1 (everything "real") or = 0 (everything "fake"), to every printed digit.

Read from the progress line of PyTorch's DCGAN example and the many GAN trainers that copy it
(`[%d/%d][%d/%d] Loss_D: %.4f Loss_G: %.4f D(x): %.4f D(G(z)): %.4f / %.4f`, pytorch/examples dcgan/main.py):
the discriminator's mean output on a real batch and on a generated one (before / after the D step). The verdict
rests on the stretch of such lines at the end of the log where every score sits at the same extreme; its
confidence grows with the number of lines. A D(x) near 1 with D(G(z)) near 0 is a discriminator that wins, a
common transient: nothing is said about it here.
"""
from __future__ import annotations

from typing import List, Tuple

from trainwreck import lazy_re
from trainwreck.analyze.trajectory_stats import few_words, points_confidence
from trainwreck.collect.bundle import Bundle
from trainwreck.model import DIRECT, Finding, Line

_NUM = r"([-+]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?)"
_SCORES = lazy_re(r"D\(x\)\s*[:=]\s*" + _NUM + r".*?D\(G\(z\)\)\s*[:=]\s*" + _NUM + r"(?:\s*/\s*" + _NUM + ")?")
SATURATED = 1e-3  # within this of 0 or 1: the printed score is the extreme itself
MAX_LINES = 200_000


def _scores(bundle: Bundle) -> List[Tuple[Line, List[float]]]:
    out: List[Tuple[Line, List[float]]] = []
    for i, line in enumerate(bundle.all_lines()):
        if i >= MAX_LINES:
            break
        text = line.text
        if "D(x)" not in text or "D(G(z))" not in text:
            continue
        m = _SCORES.search(text[-2000:])
        if m is not None:
            out.append((line, [float(v) for v in m.groups() if v is not None]))
    return out


def _extreme(vals: List[float]) -> str:
    if all(v >= 1 - SATURATED for v in vals):
        return "1"
    if all(0 <= v <= SATURATED for v in vals):
        return "0"
    return ""


def detect(bundle: Bundle) -> List[Finding]:
    rows = _scores(bundle)
    if not rows:
        return []
    end = _extreme(rows[-1][1])
    if not end:
        return []
    i = len(rows) - 1
    while i > 0 and _extreme(rows[i - 1][1]) == end:
        i -= 1
    run = rows[i:]
    n = len(run)
    says = "real" if end == "1" else "fake"
    claim = (f"the discriminator scores real and generated samples alike: D(x) = D(G(z)) = {end} on every one of "
             f"{n} progress line{'s' if n != 1 else ''} from {run[0][0].source().cite()} to the end of the log "
             f"(it calls everything {says})" + few_words(n))
    return [Finding("metric.gan-discriminator-saturated", claim, DIRECT, points_confidence(n, 0.75),
                    [run[0][0].source(), run[-1][0].source()] if n > 1 else [run[0][0].source()],
                    suggests="stall", role="symptom", stage="runtime", kind="plateau", verify_skill="init-loss-check",
                    fixes=["check the discriminator's last layer and loss pairing (a sigmoid output with "
                           "BCEWithLogitsLoss, or a missing sigmoid with BCELoss, saturates D)",
                           "lower the discriminator's learning rate or update it less often than the generator",
                           "add instance noise or label smoothing so that D cannot saturate"],
                    meaning="A discriminator that outputs the same saturated value for real and generated samples "
                            "has collapsed: its gradients vanish, so the generator gets no signal and the GAN "
                            "stops learning even though training goes on.")]
