"""`trainwreck traceback`: the root exception of every traceback in a log, the innermost user frame, chains,
de-duplication across ranks, the first failing rank, and an explicit note when the log is cut mid-traceback."""
from __future__ import annotations

import os
import sys

from trainwreck.collect.redact import PemTracker, redact_path
from trainwreck.model import Line
from trainwreck.report.safe import json_text, terminal_text

NAME = "traceback"
ORDER = 20
HELP = "summarize the tracebacks in a log or run (root exception, user frame, first failing rank, truncation)"
DESCRIPTION = __doc__
STDIN_LIMIT = 16 << 20


def add_arguments(p) -> None:
    p.add_argument("path", nargs="?", metavar="PATH", help="log file, run directory, or - for standard input "
                   "(default: most recent run)")
    p.add_argument("--json", action="store_true", help="print the summary as JSON")


def _lines(path):
    if path == "-":
        data = sys.stdin.buffer.read(STDIN_LIMIT)
        pem = PemTracker()
        from trainwreck.collect.safeio import clean_line
        return [Line("<stdin>", i, pem(clean_line(raw))) for i, raw in enumerate(data.split(b"\n"), 1)]
    from trainwreck.collect import collect
    from trainwreck.locate import locate
    b = collect(locate(path))
    for n in b.notes:
        print(terminal_text(f"trainwreck: note: {n}"), file=sys.stderr)
    out = []
    for log in b.logs:
        out += log.head + log.lines
    return out + list(b.extra_lines)


def run(args) -> int:
    from trainwreck.analyze.tracebacks.summary import summarize
    from trainwreck.report.traceback import render_text
    if args.path and args.path != "-" and not os.path.lexists(args.path):
        print(terminal_text(f"trainwreck: no such file or directory: {redact_path(args.path)}"), file=sys.stderr)
        return 2
    s = summarize(_lines(args.path))
    if args.json:
        print(json_text(s))
    else:
        sys.stdout.write(render_text(s).rstrip("\n") + "\n")
    return 0
