"""The signature catalog: known failure messages, one YAML file per family, loaded into Signatures.

The YAML files beside this one are the sources. `python -m trainwreck.catalog.build` compiles them into
`compiled.json` (committed, shipped as package data); `load()` reads only that file, with the standard
library's C JSON decoder, so no YAML is parsed on the hot path. tests/test_catalog.py fails, saying how to
rebuild, when the compiled form and the sources disagree. Each regex compiles when a line first reaches it.

`Prefilter` is the cheap first pass of the detector: each entry names `needles`, lowercase literal
substrings one of which appears in every line its patterns match. The needles are grouped under a
short list of gate words; a line whose lowercase form holds no gate word cannot match any entry and
costs a handful of substring tests.
"""
from __future__ import annotations

import json
import os
import re
from functools import lru_cache
from typing import Any, Dict, List, Optional, Pattern, Sequence, Tuple

CATALOG_DIR = os.path.dirname(os.path.abspath(__file__))
COMPILED = os.path.join(CATALOG_DIR, "compiled.json")
# The families by meaning (host memory, GPU memory, collective timeout, ...): each a general description that
# entries of any file and any framework name with `family:`. Not a list of signatures, so not a catalog file.
FAMILIES_FILE = "families.yaml"
FORMAT = 1  # the compiled form's layout; bump it when the layout (not the content) changes

# Gate words: every needle should contain one of them. They are rare in ordinary progress lines
# ("step 12 loss=2.3 lr=1e-4", tqdm bars, INFO lines). A needle containing none of them becomes a
# gate itself, so correctness never depends on this list, only speed (tests keep the count bounded).
# "inf" is special: it is only a gate as a word of its own (not inside "info"); see Prefilter.
GATES: Tuple[str, ...] = (
    "error", "fail", "fault", "out", "oom", "nan", "inf", "kill", "sig", "abort", "exit", "watchdog",
    "overflow", "assert", "illegal", "invalid", "not ", "mis", "expect", "exce", "too ", "no space",
    "exhausted", "preempt", "cancel", "time limit", "warn", "_status_", "unable to", "dataloader worker",
    "duplicate", "xid", "undefined", "insufficient", "capability", "hit config.",
)

class _Record:
    """A small value class: equality and repr over its fields. Plain classes, not dataclasses: a dataclass
    costs about a millisecond to create, at every start-up."""

    __slots__ = ()
    _fields: Tuple[str, ...] = ()

    def __eq__(self, other: object) -> bool:
        if type(other) is not type(self):
            return NotImplemented
        return all(getattr(self, k) == getattr(other, k) for k in self._fields)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({', '.join(f'{k}={getattr(self, k)!r}' for k in self._fields)})"


class Verify(_Record):
    __slots__ = _fields = ("skill", "command")

    def __init__(self, skill: str, command: str = "") -> None:
        self.skill, self.command = skill, command

    def __hash__(self) -> int:
        return hash((self.skill, self.command))


class Example(_Record):
    __slots__ = _fields = ("line", "source")

    def __init__(self, line: str, source: str) -> None:
        self.line, self.source = line, source

    def __hash__(self) -> int:
        return hash((self.line, self.source))


class Signature(_Record):
    """One catalog entry. `sources` are its regexes, each compiled on first use (most signatures never see a
    candidate line)."""

    _fields = ("id", "family", "title", "classification", "role", "weight", "sources", "needles", "meaning",
               "causes", "fixes", "verify", "examples", "min_count", "stage", "stack", "detail", "overlaps",
               "launcher_summary", "meaning_family")
    __slots__ = _fields + ("_compiled",)
    __hash__ = None  # type: ignore[assignment]  # mutable, compared by value

    def __init__(self, id: str, family: str, title: str, classification: str, role: str, weight: float,
                 sources: List[str], needles: Tuple[str, ...], meaning: str, causes: List[str], fixes: List[str],
                 verify: Verify, examples: List[Example], min_count: int = 1, stage: Optional[str] = None,
                 stack: Optional[List[str]] = None, detail: Optional[str] = None,
                 overlaps: Optional[List[str]] = None, launcher_summary: bool = False,
                 meaning_family: Optional[str] = None) -> None:
        self.id, self.family, self.title, self.classification, self.role = id, family, title, classification, role
        self.weight, self.sources, self.needles, self.meaning = weight, sources, needles, meaning
        self.causes, self.fixes, self.verify, self.examples = causes, fixes, verify, examples
        self.min_count, self.stage, self.detail = min_count, stage, detail
        self.stack = [] if stack is None else stack
        self.overlaps = [] if overlaps is None else overlaps
        self.launcher_summary = launcher_summary  # a launcher's summary that a worker failed: its error is elsewhere
        self.meaning_family = meaning_family  # the family by meaning (families.yaml); `family` is the source file
        self._compiled: List[Optional[Pattern[str]]] = []

    def _pattern(self, i: int) -> Pattern[str]:
        if not self._compiled:
            self._compiled = [None] * len(self.sources)
        pat = self._compiled[i]
        if pat is None:
            pat = self._compiled[i] = re.compile(self.sources[i])
        return pat

    @property
    def patterns(self) -> List[Pattern[str]]:
        return [self._pattern(i) for i in range(len(self.sources))]

    def match(self, text: str) -> Optional["re.Match[str]"]:
        """The first pattern's match, trying them in order; a pattern is compiled when first reached."""
        for i in range(len(self.sources)):
            m = self._pattern(i).search(text)
            if m:
                return m
        return None


def catalog_files() -> List[str]:
    """The YAML sources, in the order their entries are loaded."""
    return sorted(os.path.join(CATALOG_DIR, f) for f in os.listdir(CATALOG_DIR)
                  if f.endswith(".yaml") and f != FAMILIES_FILE)


def _signature(entry: Dict[str, Any], family: str) -> Signature:
    verify = entry.get("verify") or {}
    needles = tuple(n.lower() for n in entry.get("needles") or ())
    if not needles:
        raise ValueError(f"signature {entry.get('id')!r} has no needles")
    return Signature(
        id=entry["id"],
        family=family,
        title=entry["title"],
        classification=entry["classification"],
        role=entry["role"],
        weight=float(entry["weight"]),
        sources=list(entry["patterns"]),
        needles=needles,
        meaning=entry.get("meaning", ""),
        causes=list(entry.get("causes") or []),
        fixes=list(entry.get("fixes") or []),
        verify=Verify(verify.get("skill", "debug"), verify.get("command", "")),
        examples=[Example(e["line"], e["source"]) for e in entry.get("examples") or []],
        min_count=int(entry.get("min_count", 1)),
        stage=entry.get("stage"),
        stack=list(entry.get("stack") or []),
        detail=entry.get("detail"),
        overlaps=list(entry.get("overlaps") or []),
        launcher_summary=bool(entry.get("launcher_summary", False)),
        meaning_family=entry.get("family"),
    )


def signatures(compiled: Dict[str, Any]) -> List[Signature]:
    """Signatures from the compiled form ({"families": {family: [entry, ...]}}), checked as they are built."""
    sigs: List[Signature] = []
    seen: Dict[str, str] = {}
    for family, entries in compiled["families"].items():
        for entry in entries:
            sig = _signature(entry, family)
            if sig.id in seen:
                raise ValueError(f"duplicate signature id {sig.id!r} in {family} and {seen[sig.id]}")
            seen[sig.id] = family
            sigs.append(sig)
    known = {f["id"] for f in compiled.get("meaning_families") or []}
    for sig in sigs:
        if sig.meaning_family is not None and sig.meaning_family not in known:
            raise ValueError(f"signature {sig.id!r} names family {sig.meaning_family!r}, which {FAMILIES_FILE} "
                             "does not define")
    return sigs


def read_compiled(path: str = COMPILED) -> Dict[str, Any]:
    with open(path, encoding="utf-8") as fh:
        data = json.load(fh)
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise ValueError(f"{path}: not a compiled catalog of format {FORMAT}; "
                         "rebuild it with `python -m trainwreck.catalog.build`")
    return data


@lru_cache(maxsize=1)
def load() -> List[Signature]:
    return signatures(read_compiled())


def by_id() -> Dict[str, Signature]:
    return {s.id: s for s in load()}


@lru_cache(maxsize=1)
def families() -> Dict[str, Dict[str, Any]]:
    """The families by meaning, by id: {"id", "title", "classification", "meaning", ...} (families.yaml)."""
    return {f["id"]: f for f in read_compiled().get("meaning_families") or []}


def family_ref(fid: Optional[str]) -> Optional[Dict[str, str]]:
    """A family by meaning as the report names it ({"id", "title"}), or None when there is no such family."""
    fam = families().get(fid or "")
    return {"id": fam["id"], "title": fam["title"]} if fam else None


def family_of(sig: Signature) -> Optional[Dict[str, str]]:
    """The family by meaning a signature belongs to, as the report names it ({"id", "title"}), or None."""
    return family_ref(sig.meaning_family)


_DIGITS = bytes.maketrans(b"0123456789", b"##########")  # "#" occurs in no gate or needle
_CACHE_MAX = 8192


def line_key(text: str) -> str:
    """The line in lowercase with every digit replaced by "#", as a str of its UTF-8 bytes.

    Needles and gates are matched against this key. Masking digits with a character that occurs in
    no needle keeps every needle occurrence in place, so progress lines that differ only in their
    numbers share one key and one cached answer. (Decoding the UTF-8 bytes as latin-1 is a cheap
    1:1 mapping; ASCII needles match the same positions.)
    """
    return text.lower().encode("utf-8", "replace").translate(_DIGITS).decode("latin-1")


def _key_of(needle: str) -> str:
    return needle.translate(str.maketrans("0123456789", "##########"))


class Prefilter:
    """Which signatures could match a line, decided with substring tests on its lowercase form.

    Two levels: a line must contain a gate word (a few dozen short literals) and then one of a
    signature's needles; only those signatures' regexes run. Answers are cached per line key (the
    line with its digits masked), so a log of templated progress lines costs one dictionary lookup
    per line after the first of each template.
    """

    def __init__(self, sigs: Sequence[Signature]) -> None:
        gates: List[str] = []
        index: Dict[str, List[Tuple[str, Signature]]] = {}
        for sig in sigs:
            for needle in sig.needles:
                gate = next((g for g in GATES if g in needle), needle)
                if gate not in index:
                    gates.append(gate)
                    index[gate] = []
                index[gate].append((_key_of(needle), sig))
        self.gates: Tuple[str, ...] = tuple(gates)
        self._order = {sig.id: i for i, sig in enumerate(sigs)}
        self._index = [(_key_of(g), g == "inf", index[g]) for g in gates]
        # A plain loop of `in` tests over the gate literals (no generated code): CPython's `in` on str is
        # the cheapest test of a short line against a few dozen literals (bytes `in` is several times
        # slower, one regex alternation slower still); "inf" alone needs its word test.
        self._plain: Tuple[str, ...] = tuple(_key_of(g) for g in gates if g != "inf")
        self._has_inf = "inf" in gates
        self._cache: Dict[str, Tuple[Signature, ...]] = {}

    def passes_key(self, key: str) -> bool:
        for gate in self._plain:
            if gate in key:
                return True
        return self._has_inf and "inf" in key and "inf" in key.replace("info", "")

    def candidates_for_key(self, key: str) -> Tuple[Signature, ...]:
        """Signatures with a needle in the line key, in catalog order (cached per key)."""
        hit = self._cache.get(key)
        if hit is not None:
            return hit
        out: Tuple[Signature, ...] = ()
        if self.passes_key(key):
            found: Dict[str, Signature] = {}
            for gate, is_inf, entries in self._index:
                if gate in key and (not is_inf or "inf" in key.replace("info", "")):
                    for needle, sig in entries:
                        if sig.id not in found and needle in key:
                            found[sig.id] = sig
            out = tuple(sorted(found.values(), key=lambda s: self._order[s.id]))
        if len(self._cache) >= _CACHE_MAX:
            self._cache.clear()
        self._cache[key] = out
        return out

    def candidates(self, text: str) -> Tuple[Signature, ...]:
        return self.candidates_for_key(line_key(text))

    def __call__(self, text: str) -> bool:
        """True when the line could match some signature (it holds a gate word)."""
        return self.passes_key(line_key(text))


@lru_cache(maxsize=1)
def prefilter() -> Prefilter:
    return Prefilter(load())
