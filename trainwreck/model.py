"""The data model: plain dataclasses that serialise to JSON.

Run → Evidence (LogText, ConfigFile, metric Points …, each with a Source) → Finding → Diagnosis.
Every sentence in a report traces back to a Source or is labelled HYPOTHESIS.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional

CLASSIFICATIONS = ("NaN", "OOM", "divergence", "stall", "crash", "unclear")
STAGES = ("startup", "compile", "runtime", "checkpoint", "evaluation", "unknown")
DIRECT = "DIRECT"
HYPOTHESIS = "HYPOTHESIS"


@dataclass
class Source:
    """Where a piece of evidence came from. `path` is relative to the run directory."""

    path: str
    line: Optional[int] = None  # 1-based; None when the line number is unknown (huge file, read from the end)
    text: str = ""  # verbatim content of that line, after redaction
    step: Optional[int] = None
    metric: Optional[str] = None
    value: Any = None
    byte: Optional[int] = None  # byte offset of the line when `line` is unknown

    def to_json(self) -> Dict[str, Any]:
        if self.metric is not None:
            d: Dict[str, Any] = {"path": self.path, "step": self.step, "metric": self.metric,
                                 "value": json_number(self.value)}
            if self.line is not None:
                d["line"] = self.line
            return d
        d = {"path": self.path, "line": self.line, "text": self.text}
        if self.line is None and self.byte is not None:
            d["byte"] = self.byte
        return d

    def cite(self) -> str:
        if self.metric is not None and self.line is None:
            return f"{self.path}:step {self.step}"
        if self.line is not None:
            return f"{self.path}:{self.line}"
        if self.byte is not None:
            return f"{self.path}@byte {self.byte}"
        return self.path


def json_number(v: Any) -> Any:
    """NaN/inf are not valid JSON: report them as strings the reader recognises."""
    if isinstance(v, float) and not math.isfinite(v):
        return "nan" if math.isnan(v) else ("inf" if v > 0 else "-inf")
    return v


@dataclass
class Line:
    """One line of a log, as collected."""

    path: str
    line: Optional[int]
    text: str
    byte: Optional[int] = None

    def source(self) -> Source:
        return Source(self.path, self.line, self.text, byte=self.byte)


@dataclass
class LogText:
    """The part of a log file that was read: its tail (and, for small files, all of it)."""

    path: str  # relative to the run root
    size: int
    lines: List[Line]
    complete: bool  # True when the whole file was read
    head: List[Line] = field(default_factory=list)  # first lines of a file read only partially
    cut_mid_line: bool = False  # the file does not end with a newline


@dataclass
class ConfigEntry:
    key: str  # dotted path, e.g. trainer.gradient_clip_val
    value: str  # the raw scalar text (after redaction)
    line: int
    path: str
    text: str = ""  # the config line verbatim (after redaction)

    def source(self) -> "Source":
        return Source(self.path, self.line, self.text or f"{self.key.rsplit('.', 1)[-1]}: {self.value}")


@dataclass
class Point:
    step: Optional[int]
    value: float
    source: Source


@dataclass
class Finding:
    """What one detector saw. A detector never classifies the run; `suggests` is a hint that decide weighs."""

    id: str  # catalog signature id or detector id, e.g. "cuda-oom", "metric.first-nonfinite"
    claim: str
    label: str = DIRECT
    confidence: float = 0.5
    evidence: List[Source] = field(default_factory=list)
    suggests: Optional[str] = None  # one of CLASSIFICATIONS, or None for a factor/observation
    role: str = "cause"  # cause | symptom | factor | terminal | context
    stage: Optional[str] = None
    stack: List[str] = field(default_factory=list)
    fixes: List[str] = field(default_factory=list)
    verify_skill: Optional[str] = None
    verify_hint: Optional[str] = None
    order: Optional[float] = None  # position in the run's timeline (step or global line order) when known
    signature: Optional[str] = None  # catalog id when the finding came from the catalog
    meaning: str = ""
    rank: Optional[int] = None  # the distributed rank the evidence came from, when known
    relevant: List[str] = field(default_factory=list)  # for factors: the classifications they bear on

    def cause_json(self) -> Dict[str, Any]:
        return {
            "summary": self.claim,
            "signature": self.signature,
            "label": self.label,
            "confidence": round(self.confidence, 3),
            "evidence": [s.to_json() for s in self.evidence],
        }


@dataclass
class Diagnosis:
    classification: str
    confidence: float
    failure_stage: str
    stack: List[str]
    primary_cause: Optional[Dict[str, Any]]
    causes: List[Dict[str, Any]]
    contributing_factors: List[Dict[str, Any]]
    fix_candidates: List[Dict[str, Any]]
    verification: Dict[str, Any]
    notes: List[str]
    evidence_files: List[Dict[str, Any]]
    run: str = ""
    target: str = ""
    headline: str = ""
    terminal_events: List[Dict[str, Any]] = field(default_factory=list)
    metrics_summary: Dict[str, Any] = field(default_factory=dict)
    tool: Dict[str, Any] = field(default_factory=dict)
    setup: List[str] = field(default_factory=list)  # e.g. ["fp16", "8 ranks"]

    def to_json(self) -> Dict[str, Any]:
        return {
            "tool": self.tool,
            "run": self.run,
            "target": self.target,
            "headline": self.headline,
            "classification": self.classification,
            "confidence": round(self.confidence, 3),
            "failure_stage": self.failure_stage,
            "stack": self.stack,
            "setup": self.setup,
            "primary_cause": self.primary_cause,
            "causes": self.causes,
            "contributing_factors": self.contributing_factors,
            "terminal_events": self.terminal_events,
            "fix_candidates": self.fix_candidates,
            "verification": self.verification,
            "metrics_summary": self.metrics_summary,
            "notes": self.notes,
            "evidence_files": self.evidence_files,
        }
