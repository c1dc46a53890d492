"""`trainwreck diagnose`: the whole pipeline on one run, rendered for a terminal, as JSON, or as Markdown."""
from __future__ import annotations

import sys

NAME = "diagnose"
ORDER = 0
HELP = "diagnose a failed or stalled run (directory or log file; default: most recent run under cwd)"
DESCRIPTION = """\
Diagnose a failed or stalled training run: say how it ended (failed | completed | interrupted | running |
unknown, with the line that shows it), classify it (NaN | OOM | divergence | stall | crash | unclear),
rank the causes with the exact evidence (file:line, metric step) and give fixes plus one verification step.

PATH is a run directory (Hydra outputs/<date>/<time>, lightning_logs/version_N, wandb/latest-run, an HF
output_dir, runs/<name>) or a single log file. Without PATH the most recently modified run under the current
folder is used. Evidence is read boundedly (tails of large logs) and secrets are redacted before output.
"""


def add_arguments(p) -> None:
    p.add_argument("path", nargs="?", metavar="PATH", help="run directory or log file")
    g = p.add_mutually_exclusive_group()
    g.add_argument("--json", action="store_true", help="print the report as JSON (schema: trainwreck/schemas/"
                   "diagnosis.schema.json)")
    g.add_argument("--md", action="store_true", help="print the report as Markdown")
    p.add_argument("--out", metavar="DIR", help="also write report.json, report.md, meta/, artifacts/ to DIR "
                   "(never inside the run directory)")
    p.add_argument("--no-probe", action="store_true", help="do not look at the live machine (GPU, processes, disk): "
                   "the result depends on the files alone")


def run(args) -> int:
    from trainwreck.pipeline import diagnose
    from trainwreck.report import markdown, terminal
    from trainwreck.report.safe import json_text, terminal_text

    result = diagnose(args.path, probe=not args.no_probe)
    report = result.diagnosis.to_json()
    if args.out:
        from trainwreck.report.artifacts import OutError, write_snapshot

        try:
            written = write_snapshot(result.bundle, args.out, report)
        except OutError as exc:
            print(terminal_text(f"trainwreck: {exc}"), file=sys.stderr)
            return 2
        if not args.json:
            print(terminal_text(f"trainwreck: wrote {len(written)} files to {args.out}"), file=sys.stderr)
    as_json = lambda r: json_text(r) + "\n"  # noqa: E731
    view = as_json if args.json else markdown if args.md else terminal
    try:
        text = view(report)
    except Exception as exc:  # a view that fails still shows the diagnosis, as JSON, and says why
        if view is as_json:
            raise
        print(terminal_text(f"trainwreck: the {'Markdown' if args.md else 'terminal'} view failed "
                            f"({type(exc).__name__}: {' '.join(str(exc).split())[:120]}); the report follows as "
                            "JSON"), file=sys.stderr)
        text = as_json(report)
    sys.stdout.write(text)
    return 0
