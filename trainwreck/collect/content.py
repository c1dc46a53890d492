"""Files no reader claims by name: what each one is, from its content (collect/sniff.py), and which reader reads it.

Bounded: at most SNIFF_FILES files are opened (the shallowest, then the newest, first), each for its first
SNIFF_BYTES; names that settle it (images, arrays, archives, source code) and empty files are never opened.
Everything left out is counted by reason, and `Skipped.note` names what was skipped and why (binary files by
name, always first).
"""
from __future__ import annotations

from typing import Dict, List, Optional, Tuple

from trainwreck import lazy_re
from trainwreck.collect.inflate import sniff_head
from trainwreck.collect.safeio import BoundedFile, Entry, Skip, looks_binary
from trainwreck.collect.sniff import (
    SNIFF_BYTES,
    doc_shows_a_run,
    json_document_kind,
    settings_document,
    suffix_kind,
    text_kind,
)

SNIFF_FILES = 1024
SHOWN = 4  # files named per reason in the note
SOURCE_PEEKS = 4096  # source files whose first 64 bytes are looked at (a JSON document under a .py name)
# which reader reads each kind of text the sniff finds
READER_OF = {"log": "logs", "jsonl": "jsonl", "csv": "csvmetrics", "trainer_state": "trainer_state",
             "history": "json_history", "config": "config"}
REASONS = (("binary", "binary"), ("unreadable", "could not be opened"),
           ("structured", "structured data no reader reads (JSON/YAML/TOML/XML)"), ("source", "source code"),
           ("doc", "documentation that shows no run (no traceback, metrics or scheduler report)"),
           ("data", "vocabularies, word or file lists"),
           ("special", "not regular files (FIFO, socket or device)"), ("media", "images, arrays or archives"),
           ("empty", "empty"), ("unexamined", "not examined (more than %d files of unknown kind)" % SNIFF_FILES))
# text skipped while the run has other evidence, read as logs when nothing else in it holds text (source code is
# never a run's evidence: a folder of scripts has nothing to diagnose)
LAST_RESORT_REASONS = ("structured", "doc", "data")
ARCHIVES = (".tar.gz", ".tar.bz2", ".tar.xz", ".tar.zst")


class Skipped:
    """The files left out, by reason, for the report's notes."""

    def __init__(self):
        self.by: Dict[str, List[str]] = {}
        self.structured: List[Entry] = []  # text of LAST_RESORT_REASONS: read as logs when nothing else holds text

    def add(self, reason: str, rel: str) -> None:
        self.by.setdefault(reason, []).append(rel)

    def note(self) -> Optional[str]:
        parts = []
        for reason, said in REASONS:
            rels = self.by.get(reason)
            if not rels:
                continue
            shown = ", ".join(rels[:SHOWN]) + (f" and {len(rels) - SHOWN} more" if len(rels) > SHOWN else "")
            parts.append(f"{said}: {shown}")
        return ("not read as evidence — " + "; ".join(parts)) if parts else None


def _kind_of(root: str, entry: Entry, name: str) -> Tuple[str, Optional[str]]:
    """(what the file is, the reason it is skipped or None)."""
    try:
        method, head = sniff_head(root, entry.abspath, SNIFF_BYTES)
    except Skip:
        return "", "unreadable"
    if method is not None:
        if not head:
            return "log", None  # an unreadable or empty stream: the log reader says why
        return ("", "binary") if looks_binary(head) else ("log", None)
    if looks_binary(head):
        return "", "binary"
    kind = text_kind(name, head)
    if kind == "doc":  # a scheduler's report sits at the end of a job's output: look there too
        return ("log", None) if doc_shows_a_run(_text(head) + "\n" + _text(_tail(root, entry))) else ("doc", "doc")
    if kind in ("structured", "source"):
        doc = json_document_kind(head)  # a trainer state or a metric history, whatever the file is called
        if doc:
            return doc, None
        if kind == "structured" and settings_document(head):
            return "config", None  # the run's settings, whatever the file is called
    if kind in ("structured", "source", "data"):
        return kind, kind
    return kind, None


# a line only program text has: an import, a def or class, a decorator, the main guard, a shebang
_CODE_LINE = lazy_re(rb"(?m)^[ \t]*(?:import [\w.]|from [\w.]+ import |def \w+ ?\(|class \w+ ?[(:]|@[\w.]+|"
                     rb"if __name__|#!/)")
CODE_PEEK = 4096  # bytes of a source-named file looked at for program text


def _not_program_text(root: str, entry: Entry) -> bool:
    """A file under a source file's name that is no program: a JSON document (its first bytes start an object
    with a quoted key), or text without one line only a program has in its first 4 KB (a training log saved as
    `nohup.train.py`, a terminal session pasted into `notes.py`)."""
    try:
        with BoundedFile(root, entry.abspath) as f:
            head = f.peek(0, CODE_PEEK)
    except Skip:
        return False
    start = head.lstrip()
    if start[:1] == b"{" and start[1:].lstrip()[:1] == b'"':
        return True
    return len(head.strip().splitlines()) >= 3 and _CODE_LINE.search(head) is None


def _text(b: bytes) -> str:
    return b.decode("utf-8", "replace")


def _tail(root: str, entry: Entry) -> bytes:
    if entry.size <= SNIFF_BYTES:
        return b""
    try:
        with BoundedFile(root, entry.abspath) as f:
            return f.peek(max(SNIFF_BYTES, f.size - SNIFF_BYTES), SNIFF_BYTES)
    except Skip:
        return b""


def classify(root: str, entries: List[Entry], modules: Dict[str, object],
             skipped: Skipped) -> List[Tuple[Entry, object]]:
    """(entry, reader) for each file of `entries` (none claimed by name) that the content says is evidence."""
    out: List[Tuple[Entry, object]] = []
    opened = peeks = 0
    for entry in sorted(entries, key=lambda e: (e.rel.count("/"), -e.mtime, e.rel)):
        name = entry.rel.rsplit("/", 1)[-1]
        if name.startswith("."):  # .gitignore, .DS_Store: a tool's or an editor's, not the run's
            continue
        by_name = suffix_kind(name)
        if name.startswith("events.out.tfevents"):
            skipped.add("binary", entry.rel)  # TensorBoard's record format: no reader for it here
            continue
        if by_name == "source" and entry.regular and entry.size and peeks < SOURCE_PEEKS:
            peeks += 1  # a JSON document or a log saved under a source file's name: its content decides
            if _not_program_text(root, entry):
                by_name, name = None, name.rsplit(".", 1)[0]  # judged as text without the source suffix
        if by_name in ("media", "source") or name.lower().endswith(ARCHIVES):
            skipped.add("source" if by_name == "source" else "media", entry.rel)
            continue
        if not entry.regular:
            skipped.add("special", entry.rel)
            continue
        if entry.size == 0:
            skipped.add("empty", entry.rel)
            continue
        if opened >= SNIFF_FILES:
            skipped.add("unexamined", entry.rel)
            continue
        opened += 1
        kind, reason = _kind_of(root, entry, name)
        if reason:
            skipped.add(reason, entry.rel)
            if reason in LAST_RESORT_REASONS:
                skipped.structured.append(entry)
            continue
        mod = modules.get(READER_OF.get(kind, ""))
        if mod is not None:
            out.append((entry, mod))
    return out
