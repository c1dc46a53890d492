"""The `trainwreck` command. Each verb is a module in trainwreck/verbs/ with NAME, HELP, add_arguments, run."""
from __future__ import annotations

import argparse
import gc
import importlib
import os
import sys
from typing import List, Optional

from trainwreck import __version__, submodules
from trainwreck import verbs as _verbs
from trainwreck.locate import NotFound

EPILOG = """\
examples:
  trainwreck diagnose                       most recent run under the current folder
  trainwreck diagnose outputs/2026-11-01/10-00-00
  trainwreck diagnose slurm-1234.out --json  one log file, machine-readable report
  trainwreck diagnose RUN --out /tmp/diag    also write report.json, report.md, meta/, artifacts/
  trainwreck traceback train.log            root exception, first failing rank, truncation
  trainwreck curve RUN                      loss / grad-norm / lr trajectory findings

Exit status: 0 a diagnosis was produced (even `unclear`); 2 usage error or nothing to diagnose.
trainwreck only reads the run directory; it never writes there.
"""


def _verb_modules(verb: Optional[str] = None) -> list:
    """The verb modules: every module in trainwreck/verbs/ with NAME and run, in ORDER. With `verb`, only the
    module that defines it when its file name says so (`init-loss` in initloss.py), so a call imports one verb,
    not all of them; every module when no file name matches."""
    names = submodules(_verbs.__path__)
    if verb:
        for name in dict.fromkeys((verb, verb.replace("-", "_"), verb.replace("-", ""))):
            if name in names:
                mod = importlib.import_module(f"{_verbs.__name__}.{name}")
                if getattr(mod, "NAME", None) == verb and hasattr(mod, "run"):
                    return [mod]
    mods = []
    for name in names:
        mod = importlib.import_module(f"{_verbs.__name__}.{name}")
        if hasattr(mod, "NAME") and hasattr(mod, "run"):
            mods.append(mod)
    return sorted(mods, key=lambda m: (getattr(m, "ORDER", 50), m.NAME))


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # one line and a pointer to --help, exit 2
        self.exit(2, f"trainwreck: {message} (see: {self.prog} --help)\n")


def build_parser(verb: Optional[str] = None) -> argparse.ArgumentParser:
    """The parser for every verb, or only for `verb` when its module is found (see _verb_modules)."""
    p = _Parser(prog="trainwreck", description="Evidence-first diagnosis of failed and stalled ML training runs.",
                epilog=EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--version", action="version", version=f"trainwreck {__version__}")
    sub = p.add_subparsers(dest="verb", metavar="VERB", parser_class=_Parser)
    for mod in _verb_modules(verb):
        sp = sub.add_parser(mod.NAME, help=mod.HELP, description=getattr(mod, "DESCRIPTION", mod.HELP),
                            formatter_class=argparse.RawDescriptionHelpFormatter,
                            epilog=getattr(mod, "EPILOG", None))
        mod.add_arguments(sp)
        sp.set_defaults(_run=mod.run)
    return p


def entry() -> None:
    """The `trainwreck` command (and `python -m trainwreck`): main(), then the output flushed and the process
    ended without tearing the interpreter down. Freeing every module and object at exit cost ~20 ms, a sixth
    of a small run; nothing is lost by skipping it (no atexit handlers, every file is closed by its `with`)."""
    rc = main()
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except (BrokenPipeError, OSError):  # a reader that went away, as main() already treats it
        pass
    os._exit(rc)


def main(argv: Optional[List[str]] = None) -> int:
    # one short-lived process that allocates many small objects and few cycles: the cyclic collector's default
    # (a pass every 700 allocations) costs ~3 % of a small run for nothing; reference counting still frees memory
    gc.set_threshold(100_000, 50, 100)
    argv = sys.argv[1:] if argv is None else list(argv)
    parser = build_parser(argv[0] if argv and not argv[0].startswith("-") else None)
    args = parser.parse_args(argv)
    if not getattr(args, "_run", None):
        parser.print_help()
        return 2
    from trainwreck.report.safe import NeutralStream, terminal_text
    plain = sys.stdout
    sys.stdout = NeutralStream(plain)  # a run's control and bidi characters never reach the terminal raw
    try:
        return int(args._run(args) or 0)
    except NotFound as exc:
        from trainwreck.collect.redact import redact_path  # the paths it names may hold a secret (a sweep dir)
        print(terminal_text(f"trainwreck: {redact_path(str(exc))}"), file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("trainwreck: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        try:
            sys.stdout = open(os.devnull, "w")
        except OSError:
            pass
        return 0
    except Exception as exc:  # never a traceback for the user; TRAINWRECK_DEBUG=1 shows it
        if os.environ.get("TRAINWRECK_DEBUG"):
            raise
        print(terminal_text(f"trainwreck: internal error: {type(exc).__name__}: {exc} (set TRAINWRECK_DEBUG=1 for "
                            "details)"), file=sys.stderr)
        return 1
    finally:
        if isinstance(sys.stdout, NeutralStream):
            sys.stdout = plain
