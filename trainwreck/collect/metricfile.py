"""Line-per-record metrics files (JSON lines, CSV): read whole when small; when large, an evenly spaced sample
of the history, the last records, and a scan of the WHOLE file for the first non-finite value (collect/scan.py),
so the first NaN / Infinity is found wherever it is while memory stays bounded."""
from __future__ import annotations

import math
from typing import Callable, Optional

from trainwreck.collect.safeio import TAIL_BYTES, WIDE_LINE_BYTES, BoundedFile
from trainwreck.collect.scan import first_nonfinite, scan_gaps
from trainwreck.model import Line

FULL_PARSE_LIMIT = 2 << 20  # files up to this size are parsed whole
SAMPLES = 4000  # records sampled from the history of a larger file
TAIL_ENTRIES = 200  # and this many from its end
MAX_POINTS = 40_000  # a file parsed whole stops here and samples the rest: memory follows points, not bytes
HEAD_BYTES = 64 << 10  # a larger file's first records are parsed whole before the rest is sampled
SAMPLE_WINDOW = 4096  # bytes looked at for each sampled record; wider records (row_bytes) get a wider window
SAMPLE_BYTES = SAMPLES * SAMPLE_WINDOW  # ... and fewer samples, so that sampling reads at most this much


def read_records(bundle, f: BoundedFile, add: Callable[[Line], Optional[int]], accept: Callable[[bytes], bool],
                 strings: Callable[[Line], bool], skip_first: bool = False, row_bytes: int = 0) -> int:
    """Feed the file's records to `add` (a Line in; the number of points it added, None when the line is not a
    record); returns how many lines were not records. `accept(raw line)`: the line holds a non-finite metric
    value. `strings(line)`: the writer spells non-finite values lower-case (then the scan looks for those too).
    `skip_first`: the first line is a header. `row_bytes`: how long a record may be (a wide CSV's header) when
    more than a sample's window, which is widened to hold one (up to WIDE_LINE_BYTES) while fewer are sampled."""
    rel, size = f.rel, f.size
    parsed_to = 0  # bytes [0, parsed_to) were parsed whole
    if size <= FULL_PARSE_LIMIT:
        bad = points = 0
        lines = f.lines(0, size)
        for i, line in enumerate(lines[1 if skip_first else 0:], 1 if skip_first else 0):
            if not i & 255:
                f.check()  # the file's CPU deadline (safeio): parsing is part of its reading
            if not line.text.strip():
                continue
            got = add(line)
            if got is None:
                bad += 1
                continue
            points += got
            if points >= MAX_POINTS and i + 1 < len(lines):
                parsed_to = lines[i + 1].byte or 0
                break
        else:
            return bad
    else:
        # the start of a run is read densely: where a loss went flat or began to rise is dated from it
        bad = 0
        head = f.lines(0, HEAD_BYTES)
        for line in head[1 if skip_first else 0:]:
            if line.text.strip() and add(line) is None:
                bad += 1
        if head:
            parsed_to = (head[-1].byte or 0) + len(head[-1].text.encode("utf-8", "surrogatepass")) + 1
    lower = False
    start = parsed_to or (1 if skip_first else 0)
    window, samples = SAMPLE_WINDOW, SAMPLES
    if row_bytes > SAMPLE_WINDOW:
        window = min(WIDE_LINE_BYTES, 2 * row_bytes + 1024)
        samples = max(TAIL_ENTRIES, SAMPLE_BYTES // window)
    step_bytes = max(1, (size - parsed_to) // samples)
    for i in range(samples):
        line = f.line_after(max(start, parsed_to + i * step_bytes), window)
        if line is not None and line.text.strip() and (line.byte or 0) >= parsed_to:
            add(line)
            lower = lower or strings(line)
    tail = [ln for ln in f.lines(max(parsed_to, size - TAIL_BYTES), size) if ln.text.strip()][-TAIL_ENTRIES:]
    for line in tail:
        add(line)
        lower = lower or strings(line)
    skipped: dict = {}
    hit = first_nonfinite(f.fd, size, accept, strings=lower, start=parsed_to, skipped=skipped)
    if hit is not None:
        off, _ln, raw = hit
        for line in f.lines(off, off + len(raw) + 1)[:1]:
            add(line)
    for series in bundle.series.values():
        for s in series:
            if s.path != rel:
                continue
            s.points.sort(key=lambda p: p.source.byte if p.source.byte is not None else 0)
            nf = [p for p in s.points if not math.isfinite(p.value)]
            s.first_nonfinite = nf[0] if nf else None
    gap = scan_gaps(skipped)
    if gap:
        bundle.note(f"{rel}: {gap}")
    if parsed_to:
        bundle.note(f"{rel}: more than {MAX_POINTS} values; parsed the first {parsed_to >> 10} KB whole, then "
                    f"sampled {samples} entries and the last {TAIL_ENTRIES}, and scanned the rest for the first "
                    "non-finite value")
    else:
        bundle.note(f"{rel}: {size >> 20} MB; sampled {samples} entries and the last {TAIL_ENTRIES}, "
                    "and scanned the whole file for the first non-finite value")
    return bad
