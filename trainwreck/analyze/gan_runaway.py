"""A GAN whose discriminator has won: the discriminator's loss falls towards 0 while the generator's climbs away
from where it started and keeps climbing to the end of the log.

When D separates real from generated samples perfectly, the generator's gradient vanishes (its loss grows like
-log D(G(z)) with D(G(z)) -> 0): the adversarial game has diverged and more training does not bring it back.
A discriminator that leads for a while is normal; the verdict needs both trends over the whole log, the last
pairs included, and its confidence grows with the number of pairs.

The (D, G) pairs are read from the progress lines GAN trainers print:
- PyTorch's DCGAN example: `[%d/%d][%d/%d] Loss_D: %.4f Loss_G: %.4f D(x): ...` (pytorch/examples dcgan/main.py)
- eriklindernoren's PyTorch-GAN / Keras-GAN: `[D loss: %f] [G loss: %f]`, `%d [D loss: %f, acc.: %.2f%%] [G loss: %f]`
- dcgan.torch / pix2pix (Lua): `Err_G: %.4f  Err_D: %.4f`; `errD` / `errG`, `d_loss` / `g_loss` keys
- a two-column table whose header names the generator and the discriminator (`Generator error / Discriminator
  error`) with one `x / y` row per epoch.
"""
from __future__ import annotations

import re
from typing import List, Optional, Tuple

from trainwreck import lazy_re
from trainwreck.analyze.trajectory_stats import few_words, fmt, median, points_confidence
from trainwreck.collect.bundle import Bundle
from trainwreck.model import DIRECT, Finding, Line

_NUM = r"([-+]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?)"
_SEP = r"\]?\s*(?:[:=]\s*)?"  # not \s*[:=]?\s*: two runs of blanks that share every split
_D = lazy_re(r"(?i)(?<![A-Za-z])(loss_?d|d_?loss|err_?d|d loss|discriminator(?: loss| error)?)(?![A-Za-z])"
             + _SEP + _NUM)
_G = lazy_re(r"(?i)(?<![A-Za-z])(loss_?g|g_?loss|err_?g|g loss|generator(?: loss| error)?)(?![A-Za-z])"
             + _SEP + _NUM)
_D_KEYS = ("loss_d", "lossd", "d_loss", "dloss", "err_d", "errd", "d loss", "discriminator")
_G_KEYS = ("loss_g", "lossg", "g_loss", "gloss", "err_g", "errg", "g loss", "generator")
_HEADER = lazy_re(r"(?i)^\s*(\w[\w ]*?)\s*/\s*(\w[\w ]*?)\s*$")
_ROW = lazy_re(r"^\s*" + _NUM + r"\s*/\s*" + _NUM + r"\s*$")
MAX_LINES = 200_000
MIN_PAIRS = 3
D_FALL = 0.1  # the discriminator's loss ends at a tenth of where it began, or lower ...
D_NEAR_ZERO = 0.1  # ... and near 0
G_RISE = 2.0  # the generator's loss ends at twice where it began, or higher


def _side(name: str) -> Optional[str]:
    n = name.lower()
    if re.search(r"\b(?:d|disc|discriminator|critic)\b", n) or n.startswith(("discriminator", "d_", "err_d")):
        return "D"
    if re.search(r"\b(?:g|gen|generator)\b", n) or n.startswith(("generator", "g_", "err_g")):
        return "G"
    return None


def pairs(bundle: Bundle) -> List[Tuple[Line, float, float, str, str]]:
    """(line, D loss, G loss, D's name, G's name as printed) for every GAN progress line, in log order."""
    out: List[Tuple[Line, float, float, str, str]] = []
    table: Optional[Tuple[str, str]] = None  # the sides of the columns of a `G / D` table being read
    names = ("", "")  # the table's column names, D's first
    for i, line in enumerate(bundle.all_lines()):
        if i >= MAX_LINES:
            break
        text = line.text[-2000:]
        slash = "/" in text and len(text) < 160  # a table row or header is short
        row = _ROW.match(text) if slash else None
        if row is not None:
            if table is not None:
                a, b = float(row.group(1)), float(row.group(2))
                d, g = (a, b) if table[0] == "D" else (b, a)
                out.append((line, d, g) + names)
            continue
        head = _HEADER.match(text) if slash else None
        if head is not None:
            sides = (_side(head.group(1)), _side(head.group(2)))
            table = sides if set(sides) == {"D", "G"} else None
            h = (head.group(1).strip(), head.group(2).strip())
            names = h if sides[0] == "D" else (h[1], h[0])
            continue
        table = None
        low = text.lower()
        if not (any(k in low for k in _D_KEYS) and any(k in low for k in _G_KEYS)):
            continue  # the cheap test first: most lines of a log name neither network
        md, mg = _D.search(text), _G.search(text)
        if md is not None and mg is not None:
            out.append((line, float(md.group(2)), float(mg.group(2)), md.group(1), mg.group(1)))
    return out


def _third(vals: List[float], last: bool) -> float:
    k = max(1, len(vals) // 3)
    return median(vals[-k:] if last else vals[:k])


def detect(bundle: Bundle) -> List[Finding]:
    rows = pairs(bundle)
    n = len(rows)
    if n < MIN_PAIRS:
        return []
    ds, gs = [r[1] for r in rows], [r[2] for r in rows]
    if min(ds) < 0 or min(gs) < 0:
        return []  # a Wasserstein critic's loss has no floor at 0: this shape does not apply
    d0, d1, g0, g1 = _third(ds, False), _third(ds, True), _third(gs, False), _third(gs, True)
    if not (d0 > 0 and d1 <= D_FALL * d0 and d1 <= D_NEAR_ZERO and ds[-1] <= D_NEAR_ZERO):
        return []
    if not (g0 > 0 and g1 >= G_RISE * g0 and gs[-1] >= G_RISE * g0):
        return []
    first, last = rows[0][0], rows[-1][0]
    dname, gname = rows[-1][3], rows[-1][4]
    claim = (f"the generator's loss ({gname}) climbed from {fmt(gs[0])} ({first.source().cite()}) to {fmt(gs[-1])} "
             f"({last.source().cite()}) while the discriminator's ({dname}) fell from {fmt(ds[0])} to {fmt(ds[-1])}, over "
             f"{n} progress lines to the end of the log: the discriminator wins and the generator runs away"
             + few_words(n))
    return [Finding("metric.gan-generator-runaway", claim, DIRECT, points_confidence(n, 0.75),
                    [last.source(), first.source()], suggests="divergence", role="cause", stage="runtime",
                    kind="divergence", verify_skill="loss-spike-rollback",
                    fixes=["weaken the discriminator: lower its learning rate, update it less often than the "
                           "generator, or add dropout / instance noise to its inputs",
                           "use one-sided label smoothing (real labels 0.9) so that D cannot become certain",
                           "use the non-saturating generator loss (maximise log D(G(z))) or a Wasserstein loss "
                           "with a gradient penalty"],
                    meaning="When the discriminator separates real and generated samples perfectly, the "
                            "generator's gradients vanish and its loss keeps growing: the adversarial training "
                            "has diverged, and it does not recover by training longer.")]
