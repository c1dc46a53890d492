"""Reading a text log boundedly: whole when small; else its head, windows sampled across the middle, and its tail.

A log larger than FULL_READ_LIMIT gives its first HEAD_BYTES, its last lines (within TAIL_BYTES), and MIDDLE_WINDOWS
windows of about MIDDLE_WINDOW bytes (at most MIDDLE_LINES lines each) spread evenly between the two, so that what
the run did in between (a loss that starts to climb at 40 % of the run, a grad norm that jumps) is seen near where
it happened instead of at the start of the tail. The windows cost at most MIDDLE_WINDOWS * MIDDLE_WINDOW bytes of
the evidence budget and MIDDLE_WINDOWS * MIDDLE_LINES lines of analysis, whatever the log's size; once the
collection's budget is spent a log gets MIN_HEAD + MIN_TAIL and no windows. Each window holds whole lines only
(widened, up to MIDDLE_WIDEST, until it holds one).
"""
from __future__ import annotations

from typing import List

from trainwreck.collect import safeio
from trainwreck.collect.redact import redact_lines
from trainwreck.collect.safeio import BoundedFile, Skip, cap_text, clean_line, looks_binary
from trainwreck.model import Line, LogText

MIDDLE_WINDOWS = 32
MIDDLE_WINDOW = 1 << 10
MIDDLE_LINES = 6  # lines kept of each window: analysis costs per line, and a few values per window date a change
MIDDLE_WIDEST = 16 << 10
MIDDLE_SPACING = 4 << 10  # a middle narrower than this per window gets fewer windows


def _targets(f: BoundedFile, lo: int, hi: int) -> List[int]:
    """Where the windows of bytes [lo, hi) start: evenly spaced; for a stream kept only in part (a large
    compressed log), the kept ranges nearest to even spacing."""
    n = min(MIDDLE_WINDOWS, (hi - lo) // MIDDLE_SPACING)
    if n <= 0:
        return []
    step = (hi - lo) / n
    even = [int(lo + step * (k + 0.5)) for k in range(n)]
    kept = getattr(f, "kept", None)
    if kept is None:
        return even
    ranges = [(a, b) for a, b in kept() if b > lo and a < hi]
    if len(ranges) == 1 and ranges[0][0] <= lo and ranges[0][1] >= hi:  # kept whole: as a plain file
        return even
    starts = [max(a + 1, lo) for a, _b in ranges]  # a read at `a + 1` looks at byte `a` for the line start
    out: List[int] = []
    for t in even:
        best = min(starts, key=lambda s: abs(s - t), default=None)
        if best is not None and best not in out:
            out.append(best)
    return sorted(out)


def sample_middle(f: BoundedFile, lo: int, hi: int, numbered: bool = True) -> List[List[Line]]:
    """Windows of whole lines sampled evenly across bytes [lo, hi) of `f` (numbered: with line numbers, which
    costs nothing more once the lines up to `hi` were counted)."""
    windows: List[List[Line]] = []
    last_end = lo
    for off in _targets(f, lo, hi):
        off = max(off, last_end)
        width, lines = MIDDLE_WINDOW, []
        while off < hi:
            lines = f.lines(off, min(hi, off + width), numbered=numbered, last=MIDDLE_LINES)
            if lines or width >= MIDDLE_WIDEST or off + width >= hi:
                break
            width *= 4
        if lines:
            windows.append(lines)
        last_end = max(last_end, off + width)  # the next window starts past every line this one could hold
    return windows


def read_log(f: BoundedFile, tail_lines: int = 500) -> LogText:
    """Read a text file boundedly (see the module docstring). Raises Skip for a file that looks binary."""
    size, rel = f.size, f.rel
    if size == 0:
        return LogText(rel, 0, [], True)
    full = size <= safeio.FULL_READ_LIMIT
    head_n, tail_n = (size, 0) if full else (safeio.HEAD_BYTES, min(safeio.TAIL_BYTES, size - safeio.HEAD_BYTES))
    middle_n = 0 if full else MIDDLE_WINDOWS * MIDDLE_WINDOW
    if f.budget.evidence < head_n + tail_n + middle_n:
        f.reduced = True
        middle_n = 0
        head_n, tail_n = (size, 0) if size <= safeio.MIN_HEAD + safeio.MIN_TAIL else (safeio.MIN_HEAD, safeio.MIN_TAIL)
    last = f.peek(max(0, size - 65536), 65536)
    cut = not last.endswith(b"\n")
    if tail_n == 0:
        why = looks_binary(f.peek(0, 65536)) or looks_binary(last)
        if why:
            raise Skip(f"{rel}: looks binary ({why}), not read as a log")
        return LogText(rel, size, f.lines(0, size), True, cut_mid_line=cut)
    why = looks_binary(last)
    if why:
        raise Skip(f"{rel}: looks binary ({why}), not read as a log")
    start = size - tail_n
    lines = f.lines(start, size, last=tail_lines)
    if not lines:  # one gigantic line: keep its end
        tail = f.raw(start, tail_n)
        text = redact_lines([clean_line(tail[:-1] if tail.endswith(b"\n") else tail)])[0]
        return LogText(rel, size, [Line(rel, None, cap_text(text), start)], False, cut_mid_line=cut)
    head_end = min(head_n, start)
    head: List[Line] = []
    if head_end > 0 and not looks_binary(f.peek(0, min(head_end, 65536))):
        head = f.lines(0, head_end)
    middle: List[List[Line]] = []
    lo, hi = head_end, lines[0].byte if lines[0].byte is not None else head_end
    if middle_n and hi - lo > MIDDLE_SPACING:
        middle = sample_middle(f, lo, hi, numbered=lines[0].line is not None)  # cited as the tail is
    return LogText(rel, size, lines, False, head=head, cut_mid_line=cut, middle=middle)

