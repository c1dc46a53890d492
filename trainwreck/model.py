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
        return cite(self)


def cite(src: Any) -> str:
    """The one citation format, for a Source or its JSON form: `path:line`, `path:step N` for a metric point
    whose line is unknown, `path@byte N` for a line of a huge file read from the end, else `path`; "" for none."""
    if not src:
        return ""
    get = src.get if isinstance(src, dict) else (lambda k, d=None: getattr(src, k, d))
    path, line, byte = get("path") or "", get("line"), get("byte")
    if get("metric") is not None and line is None:
        return f"{path}:step {get('step')}"
    if line is not None:
        return f"{path}:{line}"
    if byte is not None:
        return f"{path}@byte {byte}"
    return path


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


# What sort of observation a finding is (Finding.kind): decide reasons over these, never over detector ids or prose.
KINDS = ("traceback", "truncated-traceback", "launcher-summary", "interrupted", "exception-line", "signature",
         "nonfinite", "precursor", "divergence", "spike", "chance", "plateau", "trajectory", "config", "stack",
         "checkpoint", "stack-dump", "probe", "")


@dataclass
class Finding:
    """What one detector saw. A detector never classifies the run; `suggests` is a hint that decide weighs.

    The typed fields below `relevant` carry what decide needs, so it never parses `claim` or `meaning` and never
    names a detector: `kind` (KINDS), `step` (where the finding starts on the training timeline: a logged step,
    never a line index), `precursor_of` / `consequence_of` (the classification it precedes / follows),
    `wrapper` (a launcher's message that a child process failed), `timeout` (a timed-out collective or wait),
    `config` (the config entries it cites) and `setup` (facts such as precision and world size)."""

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
    kind: str = ""
    step: Optional[int] = None
    precursor_of: Optional[str] = None
    consequence_of: Optional[str] = None
    wrapper: bool = False
    timeout: bool = False
    config: List[Source] = field(default_factory=list)
    setup: Dict[str, str] = field(default_factory=dict)  # e.g. {"precision": "fp16", "world_size": "8 ranks"}

    def __post_init__(self) -> None:
        if not self.kind:
            self.kind = "signature" if self.signature else ""
        if self.step is None and self.evidence and self.evidence[0].metric is not None:
            self.step = self.evidence[0].step

    @property
    def from_metrics(self) -> bool:
        """The finding rests on a metric series (its first evidence is a metric point)."""
        return bool(self.evidence) and self.evidence[0].metric is not None

    def cause_json(self) -> Dict[str, Any]:
        return {
            "summary": self.claim,
            "signature": self.signature,
            "label": self.label,
            "confidence": round(self.confidence, 3),
            "evidence": [s.to_json() for s in self.evidence],
        }

    def to_json(self, quote: str = "") -> Dict[str, Any]:
        """The report's form of the finding; `quote` (the matched message itself) joins the summary when the
        claim does not already hold it."""
        d = self.cause_json()
        if quote and quote.lower() not in self.claim.lower():
            d["summary"] = f"{self.claim} — {quote}"
        d["id"] = self.id
        if self.rank is not None:
            d["rank"] = self.rank
        if self.stage:
            d["stage"] = self.stage
        if self.meaning:
            d["meaning"] = self.meaning
        return d

    def brief(self) -> Dict[str, Any]:
        """The finding as the views list it (`curve`, `collect`): what was seen, where, and what decide made of it."""
        return {"id": self.id, "kind": self.kind, "label": self.label, "claim": self.claim, "suggests": self.suggests,
                "role": self.role, "confidence": round(self.confidence, 2), "step": self.step,
                "precursor_of": self.precursor_of, "evidence": [e.to_json() for e in self.evidence]}

    def with_rank(self) -> str:
        """The claim, naming the rank the evidence came from when the claim does not already."""
        return self.claim if self.rank is None or "rank" in self.claim else f"{self.claim} on rank {self.rank}"

    def add_note(self, note: str) -> None:
        """Append decide's reading of the finding to its claim (e.g. that it is a launcher's wrapper message)."""
        self.claim = f"{self.claim} — {note}"


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
    # derived facts, computed once by decide; every verb shows a slice of them
    onset: Dict[str, Any] = field(default_factory=dict)  # {"step", "source", "cite", "precursor_step"}
    precursors: List[Dict[str, Any]] = field(default_factory=list)
    trajectories: Dict[str, Any] = field(default_factory=dict)  # per series: verdict and its findings
    rollback: Dict[str, Any] = field(default_factory=dict)  # {"checkpoint", "before_step", "plan", …}
    chance: Dict[str, Any] = field(default_factory=dict)  # the chance-level / initial-loss verdict
    first_failing_rank: Optional[Dict[str, Any]] = None  # {"rank", "cite", "how"}
    checkpoints: List[Dict[str, Any]] = field(default_factory=list)

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
            "onset": self.onset,
            "precursors": self.precursors,
            "trajectories": self.trajectories,
            "rollback": self.rollback,
            "chance": self.chance,
            "first_failing_rank": self.first_failing_rank,
            "checkpoints": self.checkpoints,
            "notes": self.notes,
            "evidence_files": self.evidence_files,
        }
