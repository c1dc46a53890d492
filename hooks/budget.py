"""The Stop hook's time budget: one deadline for the whole decision, checked between bounded pieces of work.

Every regex the hook runs is linear in its input, but its inputs are whatever the transcript holds (up to the 8 MB
read cap): a quote of many numbers against megabytes of digits is still seconds of linear work. The readers and
matchers call check() between pieces of at most a few hundred KB; past the deadline it raises OutOfTime, and the
hook lets the stop through with no output (fail open, fast) instead of running into Claude Code's 15 s timeout.
Standard library only.
"""
import time

SECONDS = 0.4  # CPU seconds for the decision: its share of the hook's 1 s (start-up and imports take the rest)
WALL = 5.0  # and wall seconds, whatever the machine's load: far inside Claude Code's 15 s timeout
_deadline = None


class OutOfTime(Exception):
    """The decision took longer than its budget: fail open."""


def start(seconds=SECONDS, wall=WALL):
    """CPU time, not wall time, is the budget: the work is what is bounded, and a machine busy with other work
    (a test suite running hooks in parallel) must not turn decisions into fail-opens; the wall limit is the
    backstop."""
    global _deadline
    _deadline = (time.process_time() + seconds, time.monotonic() + wall)


def stop():
    global _deadline
    _deadline = None


def check():
    if _deadline is not None and (time.process_time() > _deadline[0] or time.monotonic() > _deadline[1]):
        raise OutOfTime()
