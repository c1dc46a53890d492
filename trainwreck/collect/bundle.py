"""The evidence bundle: everything collected from one run, each piece with its Source, already redacted."""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Dict, Iterator, List, Optional

from trainwreck.model import ConfigEntry, Line, LogText, Point, Source


@dataclass
class FileRecord:
    path: str
    size: int
    mtime: float
    sha256: str
    hashed: str  # "whole" or "head+tail" (large files: only the bytes that were read)
    kind: str

    def to_json(self) -> Dict[str, Any]:
        return {"path": self.path, "size": self.size, "mtime": self.mtime, "sha256": self.sha256,
                "hashed": self.hashed, "kind": self.kind}


@dataclass
class Series:
    """One metric over steps, from one source file. Points keep their line / step of origin."""

    name: str
    path: str
    points: List[Point] = field(default_factory=list)
    total: int = 0  # how many values the source holds (points may be a sample of them)
    first_nonfinite: Optional[Point] = None  # from a whole-history scan, when the points are a sample

    def finite(self) -> List[Point]:
        return [p for p in self.points if isinstance(p.value, float) and math.isfinite(p.value)]


@dataclass
class Bundle:
    root: str
    target: str
    single_file: Optional[str] = None
    logs: List[LogText] = field(default_factory=list)
    configs: Dict[str, List[ConfigEntry]] = field(default_factory=dict)  # path -> entries
    series: Dict[str, List[Series]] = field(default_factory=dict)  # canonical metric name -> series
    facts: Dict[str, Source] = field(default_factory=dict)  # e.g. git_sha, seed, torch_version
    extra_lines: List[Line] = field(default_factory=list)  # lines from structured files worth scanning (error.json …)
    checkpoints: List[Dict[str, Any]] = field(default_factory=list)
    files: List[FileRecord] = field(default_factory=list)
    notes: List[str] = field(default_factory=list)
    probes: Dict[str, Any] = field(default_factory=dict)

    def note(self, text: str) -> None:
        if text not in self.notes:
            self.notes.append(text)

    def add_point(self, name: str, path: str, point: Point) -> None:
        index = self.__dict__.setdefault("_series_index", {})
        s = index.get((name, path))
        if s is not None:
            s.points.append(point)
            s.total += 1
            return
        s = Series(name, path, [point], 1)
        self.series.setdefault(name, []).append(s)
        index[(name, path)] = s

    def all_lines(self) -> Iterator[Line]:
        """Every collected text line: log heads, log tails, then extra lines."""
        for log in self.logs:
            yield from log.head
            yield from log.lines
        yield from self.extra_lines

    def config(self, *suffixes: str) -> Optional[ConfigEntry]:
        """The first config entry whose dotted key ends with one of `suffixes` (e.g. 'gradient_clip_val')."""
        # resolved configs first; overrides.yaml only restates what they hold
        paths = sorted(self.configs, key=lambda p: (p.endswith("overrides.yaml"), p.count("/"), p))
        for path in paths:
            for e in self.configs[path]:
                last = e.key.rsplit(".", 1)[-1]
                if last in suffixes or e.key in suffixes:
                    return e
        return None

    def best_series(self, name: str) -> Optional[Series]:
        """The series with the most points for a metric name (metrics files beat log lines on ties)."""
        cands = self.series.get(name) or []
        if not cands:
            return None
        def from_text_log(s: Series) -> bool:
            src = s.points[0].source.path if s.points else s.path
            return src.endswith((".log", ".out", ".txt", ".err"))
        return max(cands, key=lambda s: (len(s.points), not from_text_log(s)))
