"""A progress bar that stands still while its clock runs: the same `n/total` drawn again hours later.

tqdm redraws a bar on a timer even when no iteration finished (its monitor thread; a `refresh()`), and every
redraw prints the time elapsed since the bar started. The same counter printed at an elapsed time far beyond what
one iteration took before it — at least MIN_GAP seconds and RATE_FACTOR times the bar's own seconds per
iteration — is the run showing, in its own output, that it stopped advancing at that iteration: a hang, seen
directly (no inference from a log that merely ends).
"""
from __future__ import annotations

from typing import List

from trainwreck import lazy_re
from trainwreck.collect.bundle import Bundle
from trainwreck.model import DIRECT, Finding, Line

MIN_GAP = 600.0  # seconds between two draws of the same counter
RATE_FACTOR = 20.0  # … and this many times the time an iteration took before the bar stopped
TAIL = 300  # lines at the end of each log looked at
_BAR = lazy_re(r"(?<![\d/])(\d+)/(\d+) \[((?:\d+ days?, )?\d+(?::\d\d){1,2})<[^,\]]*(?:,\s*([\d.]+)(s/it|it/s))?")


def _seconds(clock: str) -> float:
    days = 0
    if "day" in clock:
        head, clock = clock.split(",", 1)
        days = int(head.split()[0])
    parts = [int(x) for x in clock.strip().split(":")]
    total = 0
    for x in parts:
        total = total * 60 + x
    return days * 86400 + total


def _draws(lines: List[Line]):
    for ln in lines:
        if "/" not in ln.text or "<" not in ln.text:
            continue
        for m in _BAR.finditer(ln.text[-4000:]):
            n, total = int(m.group(1)), int(m.group(2))
            rate = float(m.group(4)) if m.group(4) else None
            per_it = (rate if m.group(5) == "s/it" else (1.0 / rate if rate else None)) if rate else None
            yield ln, n, total, _seconds(m.group(3)), per_it


def detect(bundle: Bundle) -> List[Finding]:
    for log in bundle.logs:
        draws = list(_draws(log.lines[-TAIL:]))
        if len(draws) < 2:
            continue
        last = draws[-1]
        if last[1] >= last[2]:
            continue  # the bar reached its end
        same = [d for d in draws if (d[1], d[2]) == (last[1], last[2])]
        first = same[0]
        gap = last[3] - first[3]
        per_it = first[4] or 0.0
        if gap < max(MIN_GAP, RATE_FACTOR * per_it):
            continue
        hours = gap / 3600
        took = f" (an iteration took {per_it:.3g} s before it)" if per_it else ""
        claim = (f"the progress bar stays at {last[1]}/{last[2]} from {first[0].source().cite()} to "
                 f"{last[0].source().cite()} while its elapsed time grows by "
                 f"{f'{hours:.1f} h' if hours >= 1 else f'{gap / 60:.0f} min'}{took}: no iteration finished")
        return [Finding(
            "log.progress-bar-stands-still", claim, DIRECT, 0.7, [last[0].source(), first[0].source()],
            suggests="stall", role="cause", stage="runtime", kind="stack-dump", verify_skill="debug",
            verify_hint="py-spy dump --pid <pid> --subprocesses  # while it stands still: where the main process "
                        "and each DataLoader worker wait",
            fixes=["take a stack dump of the process while the bar stands still (py-spy dump --pid <pid> "
                   "--subprocesses): the frame it waits in names the cause",
                   "rerun with num_workers=0: a DataLoader worker that never returns a batch stops the bar"],
            meaning="tqdm redraws its bar with the elapsed time even when no iteration finished: the same counter "
                    "hours later is the run itself showing that it stopped advancing.")]
    return []
