"""A log that stops one step before an epoch's end: a hang at the epoch boundary, not a kill.

An epoch's last step is where a run changes what it does: the DataLoader's iterator runs out (its workers shut
down, a last short batch, `drop_last` and uneven shards across ranks), evaluation or a checkpoint save begins, the
next epoch's workers start. A job killed from outside stops at any of an epoch's N steps alike; one that stops at
step N-1 of N, with nothing after it, is far likelier stuck at that boundary. When a log's last progress counter
reads N-1 of N (N >= MIN_STEPS), in an epoch loop, with no error after it, this says so — a hypothesis, with the
probe that tells a hang from a kill.
"""
from __future__ import annotations

from typing import List

from trainwreck import lazy_re
from trainwreck.analyze.outcome_progress import partway
from trainwreck.collect.bundle import Bundle
from trainwreck.model import HYPOTHESIS, Finding

MIN_STEPS = 20  # an epoch of fewer steps ends on N-1 by chance too often
_EPOCH = lazy_re(r"(?i)\bepoch\b")
_TROUBLE = lazy_re(r"Traceback|Error|Exception|Killed|CANCELLED|Terminated|timed out|[Tt]imeout|KeyboardInterrupt")


_KERAS = lazy_re(r"^\s*(\d{1,9})/(\d{1,9}) \[=*>?\.*\]")  # Keras' bar: `981/982 [=====>.] - ETA: 6s - loss: …`


def _last_counter(bundle: Bundle):
    """(k, n, line) of the log whose last non-blank line is a progress counter (tqdm, Keras, `[k/n]`)."""
    part = partway(bundle)
    for log in bundle.logs:
        tail = [x for x in log.lines[-60:] if x.text.strip()]
        if not tail:
            continue
        last = tail[-1]
        m = _KERAS.match(last.text.rsplit("\r", 1)[-1])
        if m is not None:
            return int(m.group(1)), int(m.group(2)), last, tail
        if part is not None and part["cite"] == last.source().cite():
            return part["at"], part["of"], last, tail
    return None


def detect(bundle: Bundle) -> List[Finding]:
    got = _last_counter(bundle)
    if got is None:
        return []
    k, n, last, tail = got
    if n < MIN_STEPS or k != n - 1:
        return []
    if not any(_EPOCH.search(x.text[:2000]) for x in tail) or any(_TROUBLE.search(x.text[:2000]) for x in tail[-20:]):
        return []
    mark = f"{k}/{n}"
    first = next(i for i, x in enumerate(tail) if mark in x.text)  # the last line holds it
    if any(mark not in x.text for x in tail[first:]):
        return []  # the same count was drawn before and other work followed it (tqdm redraws its bar as it closes)
    return [Finding(
        "log.stopped-at-epoch-end", f"the log stops at step {k} of {n} ({last.source().cite()}): one step before the "
        "epoch's end, with nothing after it", HYPOTHESIS, 0.4,
        [last.source()], suggests="stall", role="cause", stage="runtime",
        kind="stack-dump", verify_skill="debug",
        verify_hint="py-spy dump --pid <pid> --subprocesses  # alive: where the epoch's end waits (DataLoader "
                    "workers, a collective, a save); gone: the scheduler or the kernel's OOM killer ended it",
        fixes=["if it hangs there: rerun with num_workers=0 (or persistent_workers=False) to see whether the "
               "DataLoader's shutdown or its last batch is stuck",
               "with several ranks, give every rank the same number of batches (drop_last=True, a DistributedSampler "
               "with drop_last) so that no rank waits in a collective the others never reach"],
        meaning="A run stopped exactly at an epoch's last step is most often stuck at the epoch boundary (DataLoader "
                "shutdown, uneven batches across ranks, the evaluation or save that starts there).")]
