"""Text logs: *.log, *.out, *.err, stdout/stderr captures, slurm-*.out. Bounded: small files whole, large by head + tail."""
from __future__ import annotations

import re

from trainwreck.collect.safeio import read_log
from trainwreck.locate import LOG_NAMES, LOG_SUFFIXES
from trainwreck.model import Point, Source

ORDER = 10
FALLBACK = True  # a single file the user names is read as a log when no other reader claims it
_TXT_LOG = re.compile(r"(?i)(log|out|err|train|console|stdout|stderr|traceback|slurm|job|rank|spy|stack|dump|hang|faulthandler)")


def claims(rel: str, name: str) -> bool:
    if name == "error.json":
        return False
    if name in LOG_NAMES or name.endswith(LOG_SUFFIXES):
        return True
    return name.endswith(".txt") and bool(_TXT_LOG.search(name)) and not name.startswith(("pip", "requirements"))


def read(bundle, entry, ctx) -> None:
    log = read_log(bundle.root, entry.abspath)
    bundle.logs.append(log)
    ranges = None if log.complete else [(0, 1 << 17), (max(0, log.size - (1 << 20)), log.size)]
    ctx.record(entry, "log", ranges)
    if not log.complete:
        bundle.note(f"{log.path}: {log.size / (1 << 20):.0f} MB; read its first {len(log.head)} and last {len(log.lines)} lines")
    if log.cut_mid_line and log.lines:
        bundle.note(f"{log.path}: ends without a newline (the writer may have been killed mid-line)")
    try:
        from trainwreck.collect.textmetrics import extract
    except ImportError:  # pragma: no cover - textmetrics ships with the package
        return
    from trainwreck.collect.ranks import prefix_rank
    from trainwreck.collect.texttables import rows

    def series_of(text: str) -> str:
        # interleaved ranks each get their own series: mixing them would fake spikes and oscillations
        r = prefix_rank(text)
        return log.path if r is None else f"{log.path} [rank {r}]"

    for part in (log.head, log.lines):
        for line, step, values in rows(part):
            for name, value in values.items():
                src = Source(line.path, line.line, line.text, step=step, metric=name, value=value, byte=line.byte)
                bundle.add_point(name, series_of(line.text), Point(step, value, src))
    for line in list(log.head) + list(log.lines):
        text = line.text
        if len(text) > 2000:
            text = text[-2000:]
        got = extract(text)
        if not got:
            continue
        step, values = got
        for name, value in values.items():
            src = Source(line.path, line.line, line.text, step=step, metric=name, value=value, byte=line.byte)
            bundle.add_point(name, series_of(line.text), Point(step, value, src))
