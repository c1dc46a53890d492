"""The evidence bundle: everything collected from one run, each piece with its Source, already redacted."""
from __future__ import annotations

import math
from typing import Any, Dict, Iterator, List, Optional

from trainwreck import record
from trainwreck.model import ConfigEntry, Line, LogText, Point, Source


@record
class FileRecord:
    def __init__(self, path: str, size: int, mtime: float, sha256: str, hashed: str, kind: str,
                 compression: Optional[str] = None, scheduler: Optional[str] = None) -> None:
        self.path = path
        self.size = size  # on disk
        self.mtime = mtime
        self.sha256 = sha256  # of the bytes read (decompressed, for a compressed file)
        self.hashed = hashed  # "whole" or "head+tail" (large files: only the bytes that were read)
        self.kind = kind
        self.compression = compression  # "gzip", "bz2", "xz", "zstd" when read through its decompressed stream
        self.scheduler = scheduler  # "slurm", "lsf", "pbs", "sge", "kubernetes": a scheduler's output, by content

    def to_json(self) -> Dict[str, Any]:
        out = {"path": self.path, "size": self.size, "mtime": self.mtime, "sha256": self.sha256,
               "hashed": self.hashed, "kind": self.kind}
        if self.compression:
            out["compression"] = self.compression
        if self.scheduler:
            out["scheduler"] = self.scheduler
        return out


@record
class Series:
    """One metric over steps, from one source file. Points keep their line / step of origin."""

    def __init__(
            self, name: str, path: str, points: Optional[List[Point]] = None, total: int = 0,
            first_nonfinite: Optional[Point] = None
    ) -> None:
        self.name = name
        self.path = path
        self.points = [] if points is None else points
        self.total = total  # how many values the source holds (points may be a sample of them)
        self.first_nonfinite = first_nonfinite  # from a whole-history scan, when the points are a sample

    def finite(self) -> List[Point]:
        return [p for p in self.points if isinstance(p.value, float) and math.isfinite(p.value)]


@record
class Bundle:
    def __init__(
            self, root: str, target: str, single_file: Optional[str] = None, logs: Optional[List[LogText]] = None,
            configs: Optional[Dict[str, List[ConfigEntry]]] = None, series: Optional[Dict[str, List[Series]]] = None,
            facts: Optional[Dict[str, Source]] = None, extra_lines: Optional[List[Line]] = None,
            checkpoints: Optional[List[Dict[str, Any]]] = None, files: Optional[List[FileRecord]] = None,
            notes: Optional[List[str]] = None, probes: Optional[Dict[str, Any]] = None
    ) -> None:
        self.root = root
        self.target = target
        self.single_file = single_file
        self.logs = [] if logs is None else logs
        self.configs = {} if configs is None else configs  # path -> entries
        self.sniffed_configs: set = set()  # configs read for their content, not their name: consulted after the others
        self.series = {} if series is None else series  # canonical metric name -> series
        self.facts = {} if facts is None else facts  # e.g. git_sha, seed, torch_version
        self.extra_lines = [] if extra_lines is None else extra_lines  # lines from structured files worth scanning (error.json …)
        self.checkpoints = [] if checkpoints is None else checkpoints
        self.files = [] if files is None else files
        self.notes = [] if notes is None else notes
        self.probes = {} if probes is None else probes
        self.deadline: Optional[float] = None  # the run's CPU deadline (safeio.cpu_clock), set by collect

    def note(self, text: str) -> None:
        if text not in self.notes:
            self.notes.append(text)

    def skip(self, path: str, why: str, line: Optional[int] = None, byte: Optional[int] = None) -> None:
        """A record of `path` that was left out or read in part, and why; one note per file and reason
        (skip_notes), naming the first place and how many more: a malformed line never stops the reading."""
        skips = self.__dict__.setdefault("_skips", {})
        where = f"line {line}" if line is not None else (f"byte {byte}" if byte is not None else "")
        got = skips.get((path, why))
        if got is None:
            skips[(path, why)] = [where, 1, {where}]
        elif where not in got[2]:  # a line read twice (a sample and the tail) is one line
            got[1] += 1
            got[2].add(where)

    def skip_notes(self) -> List[str]:
        out = []
        for (path, why), (where, n, _seen) in self.__dict__.get("_skips", {}).items():
            more = f" (and {n - 1} more such line{'s' if n > 2 else ''})" if n > 1 else ""
            out.append(f"{path}: {where + ': ' if where else ''}{why}{more}")
        return out

    def forget(self, path: str) -> None:
        """Drop everything read from `path`: a reader that failed part-way leaves no half-read evidence."""
        self.logs = [log for log in self.logs if log.path != path]
        self.configs.pop(path, None)
        for name in list(self.series):
            kept = [s for s in self.series[name] if s.path != path]
            for s in kept:
                s.points = [p for p in s.points if p.source.path != path]
            kept = [s for s in kept if s.points]
            if kept:
                self.series[name] = kept
            else:
                del self.series[name]
        self.__dict__.pop("_series_index", None)
        self.__dict__["_series_index"] = {(s.name, s.path): s for ss in self.series.values() for s in ss}
        self.facts = {k: v for k, v in self.facts.items() if getattr(v, "path", None) != path}
        self.extra_lines = [ln for ln in self.extra_lines if ln.path != path]
        self.checkpoints = [c for c in self.checkpoints if c.get("path") != path]
        self.files = [f for f in self.files if f.path != path]

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
        paths = sorted(self.configs, key=lambda p: (p in self.sniffed_configs, p.endswith("overrides.yaml"),
                                                    p.count("/"), p))
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
        logs = {log.path for log in self.logs}  # a log of any name (nohup, train.log.1, capture.gz) is a text log

        def from_text_log(s: Series) -> bool:
            src = s.points[0].source.path if s.points else s.path
            return src in logs or src.endswith((".log", ".out", ".txt", ".err"))
        return max(cands, key=lambda s: (len(s.points), not from_text_log(s)))
