"""The signature catalog: known failure messages, one YAML file per family, loaded into Signatures.

`load()` parses every `*.yaml` beside this file (PyYAML when importable, else the stdlib
`miniyaml` parser), compiles the patterns once and caches the result.

`Prefilter` is the cheap first pass of the detector: each entry names `needles`, lowercase literal
substrings one of which appears in every line its patterns match. The needles are grouped under a
short list of gate words; a line whose lowercase form holds no gate word cannot match any entry and
costs a handful of substring tests.
"""
from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any, Callable, Dict, List, Optional, Pattern, Sequence, Tuple

from . import miniyaml

CATALOG_DIR = os.path.dirname(os.path.abspath(__file__))

# Gate words: every needle should contain one of them. They are rare in ordinary progress lines
# ("step 12 loss=2.3 lr=1e-4", tqdm bars, INFO lines). A needle containing none of them becomes a
# gate itself, so correctness never depends on this list, only speed.
GATES: Tuple[str, ...] = (
    "error", "fail", "out of memory", "nan", "kill", "timeout", "timed out", "times out", "exception",
    "overflow", "abort", "sig", "assert", "mismatch", "exit", "missing", "unexpected", "no space",
    "undefined", "duplicate", "time limit", "cancel", "fault", "exhausted", "oom", "illegal", "warn",
    "not compatible", "too old", "insufficient", "preempt", "unsupported", "cannot",
)


@dataclass(frozen=True)
class Verify:
    skill: str
    command: str = ""


@dataclass(frozen=True)
class Example:
    line: str
    source: str


@dataclass
class Signature:
    id: str
    family: str
    title: str
    classification: str
    role: str
    weight: float
    patterns: List[Pattern[str]]
    needles: Tuple[str, ...]
    meaning: str
    causes: List[str]
    fixes: List[str]
    verify: Verify
    examples: List[Example]
    min_count: int = 1
    stage: Optional[str] = None
    stack: List[str] = field(default_factory=list)
    detail: Optional[str] = None
    overlaps: List[str] = field(default_factory=list)

    def match(self, text: str) -> Optional["re.Match[str]"]:
        for pat in self.patterns:
            m = pat.search(text)
            if m:
                return m
        return None


def _parse(text: str) -> Any:
    try:
        import yaml  # type: ignore
    except ImportError:  # pragma: no cover - exercised when PyYAML is absent
        return miniyaml.loads(text)
    return yaml.safe_load(text)


def catalog_files() -> List[str]:
    return sorted(os.path.join(CATALOG_DIR, f) for f in os.listdir(CATALOG_DIR) if f.endswith(".yaml"))


def read_file(path: str, parser: Optional[Callable[[str], Any]] = None) -> List[Dict[str, Any]]:
    with open(path, encoding="utf-8") as fh:
        text = fh.read()
    data = (parser or _parse)(text)
    if not isinstance(data, list):
        raise ValueError(f"{path}: the catalog file must be a list of entries")
    return data


def _signature(entry: Dict[str, Any], family: str) -> Signature:
    verify = entry.get("verify") or {}
    needles = tuple(n.lower() for n in entry.get("needles") or ())
    if not needles:
        needles = tuple(_derive_needles(entry["patterns"]))
    return Signature(
        id=entry["id"],
        family=family,
        title=entry["title"],
        classification=entry["classification"],
        role=entry["role"],
        weight=float(entry["weight"]),
        patterns=[re.compile(p) for p in entry["patterns"]],
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
    )


_META = set(".^$*+?{}[]|()\\")


def _derive_needles(patterns: Sequence[str]) -> List[str]:
    """Longest literal run of each pattern, lowercased (only for patterns without (?i) or alternation)."""
    out = []
    for p in patterns:
        runs, cur, i = [], [], 0
        while i < len(p):
            c = p[i]
            if c == "\\" and i + 1 < len(p) and not p[i + 1].isalnum():
                cur.append(p[i + 1])
                i += 2
                continue
            if c in _META:
                runs.append("".join(cur))
                cur = []
                if c == "\\":
                    i += 1  # \d, \s ...: skip the class letter too
            else:
                cur.append(c)
            i += 1
        runs.append("".join(cur))
        best = max(runs, key=len).lower()
        if len(best) < 3 or "|" in p:
            raise ValueError(f"cannot derive a needle from {p!r}; give the entry needles:")
        out.append(best)
    return out


@lru_cache(maxsize=1)
def load() -> List[Signature]:
    sigs: List[Signature] = []
    seen: Dict[str, str] = {}
    for path in catalog_files():
        family = os.path.splitext(os.path.basename(path))[0]
        for entry in read_file(path):
            sig = _signature(entry, family)
            if sig.id in seen:
                raise ValueError(f"duplicate signature id {sig.id!r} in {family} and {seen[sig.id]}")
            seen[sig.id] = family
            sigs.append(sig)
    return sigs


def by_id() -> Dict[str, Signature]:
    return {s.id: s for s in load()}


class Prefilter:
    """Which signatures could match a line, decided with substring tests on its lowercase form."""

    def __init__(self, sigs: Sequence[Signature]) -> None:
        gates: List[str] = []
        index: Dict[str, List[Tuple[str, Signature]]] = {}
        for sig in sigs:
            for needle in sig.needles:
                gate = next((g for g in GATES if g in needle), needle)
                if gate not in index:
                    gates.append(gate)
                    index[gate] = []
                index[gate].append((needle, sig))
        self.gates: Tuple[str, ...] = tuple(gates)
        self._index = index
        # One generated boolean expression: `'error' in s or 'fail' in s or ...` is the cheapest
        # way CPython has to test a short line against a few dozen literals.
        expr = " or ".join(f"{g!r} in s" for g in self.gates) or "False"
        self.passes: Callable[[str], bool] = eval(f"lambda s: {expr}")  # noqa: S307 - literals only

    def candidates(self, low: str) -> List[Signature]:
        """Signatures with a needle in `low` (the lowercased line), in catalog order, no repeats."""
        out: List[Signature] = []
        seen = set()
        for gate in self.gates:
            if gate in low:
                for needle, sig in self._index[gate]:
                    if needle in low and sig.id not in seen:
                        seen.add(sig.id)
                        out.append(sig)
        return out

    def __call__(self, line: str) -> bool:
        return self.passes(line.lower())


@lru_cache(maxsize=1)
def prefilter() -> Prefilter:
    return Prefilter(load())
