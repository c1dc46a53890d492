"""A Python exception line with no traceback around it (`AssertionError: …` alone, as excerpts and some
launchers print it) is still the run's error: the last such line of each log, as a crash."""
from __future__ import annotations

from typing import List

from trainwreck import lazy_re
from trainwreck.analyze.signatures import MAX_MATCH_CHARS, is_wrapper_message
from trainwreck.catalog import prefilter
from trainwreck.collect.bundle import Bundle
from trainwreck.collect.ranks import launcher_prefix
from trainwreck.model import DIRECT, Finding, quoted

_EXC = lazy_re(r"^(?:[a-z_][\w]*\.)*(?P<type>[A-Z]\w*(?:Error|Exception))(?P<sep>: |$)(?P<msg>.*)")
_NOT_FATAL = ("Warning", "DeprecationWarning")
# launcher summaries repeat a child's failure; they are not the failure (the catalog reads their exit codes)
_LAUNCHER = {"ChildFailedError", "CalledProcessError", "SubprocessError", "ProcessExitedException",
             "ProcessRaisedException"}


def detect(bundle: Bundle) -> List[Finding]:
    out: List[Finding] = []
    for log in bundle.logs:
        last = None
        since_tb = 10 ** 9  # lines since the last "Traceback (most recent call last):" header
        for line in log.head + log.lines:
            t = line.text
            since_tb += 1
            if t.rstrip().endswith("Traceback (most recent call last):"):  # not IPython's header (no colon)
                since_tb = 0
                continue
            if len(t) > 2000 or ("Error" not in t and "Exception" not in t):
                continue
            m = _EXC.match(_strip_rank(t))
            if m and not m.group("type").endswith(_NOT_FATAL) and m.group("type") not in _LAUNCHER:
                last = (line, m) if since_tb > 300 else None  # inside a traceback: the traceback detector's
        if last is None:
            continue
        line, m = last
        if _catalog_matches(line.text):
            continue  # the catalog's entry for this message is the finding (its class, family and fixes)
        msg = m.group("msg").strip()
        claim = quoted(f"{m.group('type')}: {msg[:160]}") if msg else m.group("type")
        out.append(Finding(
            id="log.exception-line", claim=claim + " (the log's last exception line; no traceback around it)",
            label=DIRECT, confidence=0.6, evidence=[line.source()], suggests="crash", role="cause",
            stage=None, order=None,
            fixes=["get the full traceback: rerun with the failing rank's stderr captured (torchrun --redirects 3 "
                   "--log-dir logs, or PYTHONFAULTHANDLER=1)"],
            verify_skill="debug", kind="exception-line", wrapper=is_wrapper_message(line.text)))
    return out


def _catalog_matches(text: str) -> bool:
    probe = text[:MAX_MATCH_CHARS]
    return any(sig.match(probe) for sig in prefilter().candidates(probe))


def _strip_rank(text: str) -> str:
    """The text after the launcher tags that say which rank printed it (blanks after them too)."""
    _rank, body = launcher_prefix(text)
    return body if body is text else body.lstrip()
