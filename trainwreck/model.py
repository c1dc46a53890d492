"""The data model: plain records (`trainwreck.record`) that serialise to JSON.

Run → Evidence (LogText, ConfigFile, metric Points …, each with a Source) → Finding → Diagnosis.
Every sentence in a report traces back to a Source or is labelled HYPOTHESIS.
"""
from __future__ import annotations

import math
from typing import Any, Dict, List, Optional

from trainwreck import record

CLASSIFICATIONS = ("NaN", "OOM", "divergence", "stall", "crash", "unclear")
STAGES = ("startup", "compile", "runtime", "checkpoint", "evaluation", "unknown")
DIRECT = "DIRECT"
HYPOTHESIS = "HYPOTHESIS"


@record
class Source:
    """Where a piece of evidence came from. `path` is relative to the run directory."""

    def __init__(
            self, path: str, line: Optional[int] = None, text: str = "", step: Optional[int] = None,
            metric: Optional[str] = None, value: Any = None, byte: Optional[int] = None
    ) -> None:
        self.path = path
        self.line = line  # 1-based; None when the line number is unknown (huge file, read from the end)
        self.text = text  # verbatim content of that line, after redaction
        self.step = step
        self.metric = metric
        self.value = value
        self.byte = byte  # byte offset of the line when `line` is unknown

    def to_json(self) -> Dict[str, Any]:
        if self.metric is not None:
            d: Dict[str, Any] = {"path": self.path, "step": self.step, "metric": self.metric,
                                 "value": json_number(self.value)}
            if self.line is not None:
                d["line"] = self.line
            if self.text:
                d["text"] = self.text  # the line the value was read from, as cited (redacted like every line)
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


OPEN_QUOTE, CLOSE_QUOTE = "\u201c", "\u201d"  # “ ”: what a run's text says, inside trainwreck's own sentence


def quoted(text: Any, limit: Optional[int] = None) -> str:
    """Text from the run (an exception message, a log line) inside a sentence of trainwreck's own: between “ ”,
    on one line, cut to `limit` characters with "…" where a limit is given. Quote marks inside it become plain
    double quotes, so the quote cannot be closed early: what lies between the marks is the run's data, never
    trainwreck's words (and never instructions). The text verbatim stays in the evidence."""
    t = str(text).strip()
    if "\n" in t or "\r" in t:
        t = t.replace("\r\n", " ").replace("\n", " ").replace("\r", " ")
    t = t.replace(OPEN_QUOTE, '"').replace(CLOSE_QUOTE, '"')
    if limit is not None and len(t) > limit:
        t = t[:limit] + "\u2026"
    return OPEN_QUOTE + t + CLOSE_QUOTE


def clip_words(text: str, limit: int) -> str:
    """A sentence cut to about `limit` characters at a word boundary, with "…"; a quote it cuts is closed."""
    if len(text) <= limit:
        return text
    cut = text[:limit].rsplit(" ", 1)[0] if " " in text[:limit] else text[:limit]
    if cut.count(OPEN_QUOTE) > cut.count(CLOSE_QUOTE):
        return cut + "\u2026" + CLOSE_QUOTE
    return cut + "\u2026"


def json_number(v: Any) -> Any:
    """NaN/inf are not valid JSON: report them as strings the reader recognises."""
    if isinstance(v, float) and not math.isfinite(v):
        return "nan" if math.isnan(v) else ("inf" if v > 0 else "-inf")
    return v


@record
class Line:
    """One line of a log, as collected."""

    def __init__(self, path: str, line: Optional[int], text: str, byte: Optional[int] = None) -> None:
        self.path = path
        self.line = line
        self.text = text
        self.byte = byte

    def source(self) -> Source:
        return Source(self.path, self.line, self.text, byte=self.byte)


@record
class LogText:
    """The part of a log file that was read: its tail (and, for small files, all of it; for large ones, its head
    and windows sampled across the middle)."""

    def __init__(
            self, path: str, size: int, lines: List[Line], complete: bool, head: Optional[List[Line]] = None,
            cut_mid_line: bool = False, middle: Optional[List[List[Line]]] = None, scheduler: Optional[str] = None
    ) -> None:
        self.path = path  # relative to the run root
        self.size = size
        self.lines = lines
        self.complete = complete  # True when the whole file was read
        self.head = [] if head is None else head  # first lines of a file read only partially
        self.cut_mid_line = cut_mid_line  # the file does not end with a newline
        # windows sampled evenly across the unread middle of a partly read file, each a list of whole lines in
        # file order (between `head` and `lines`): what the run did between its first and last lines
        self.middle = [] if middle is None else middle
        self.scheduler = scheduler  # "slurm", "lsf", "pbs", "sge", "kubernetes" when the content is a scheduler's


@record
class ConfigEntry:
    def __init__(self, key: str, value: str, line: int, path: str, text: str = "") -> None:
        self.key = key  # dotted path, e.g. trainer.gradient_clip_val
        self.value = value  # the raw scalar text (after redaction)
        self.line = line
        self.path = path
        self.text = text  # the config line verbatim (after redaction)

    def source(self) -> "Source":
        return Source(self.path, self.line, self.text or f"{self.key.rsplit('.', 1)[-1]}: {self.value}")


@record
class Point:
    def __init__(self, step: Optional[int], value: float, source: Source) -> None:
        self.step = step
        self.value = value
        self.source = source


# What sort of observation a finding is (Finding.kind): decide reasons over these, never over detector ids or prose.
KINDS = ("traceback", "truncated-traceback", "launcher-summary", "interrupted", "exception-line", "signature",
         "nonfinite", "precursor", "divergence", "spike", "chance", "plateau", "trajectory", "config", "stack",
         "checkpoint", "stack-dump", "probe", "silent-rank", "outcome", "")
# How a run ended (Finding.outcome, Diagnosis.outcome["outcome"]): decided before any failure class.
OUTCOMES = ("failed", "completed", "interrupted", "running", "unknown")


@record
class Finding:
    """What one detector saw. A detector never classifies the run; `suggests` is a hint that decide weighs.

    The typed fields below `relevant` carry what decide needs, so it never parses `claim` or `meaning` and never
    names a detector: `kind` (KINDS), `step` (where the finding starts on the training timeline: a logged step,
    never a line index), `precursor_of` / `consequence_of` (the classification it precedes / follows),
    `wrapper` (a launcher's message that a child process failed), `timeout` (a timed-out collective or wait),
    `config` (the config entries it cites) and `setup` (facts such as precision and world size). An outcome
    marker (kind "outcome") says how the run ended: `outcome` (completed | interrupted | running), `outcome_by`
    (who or what stopped it: user, time-limit, preemption, cancelled, eviction, node-failure, signal …) and
    `progress` ({"step": final step, "of": planned steps, "unit": "step" | "epoch"} where it is known;
    "at_end": True for a report written after the run whose line is not its place in time, such as LSF's job
    report above the job's output)."""

    def __init__(
            self, id: str, claim: str, label: str = DIRECT, confidence: float = 0.5,
            evidence: Optional[List[Source]] = None, suggests: Optional[str] = None, role: str = "cause",
            stage: Optional[str] = None, stack: Optional[List[str]] = None, fixes: Optional[List[str]] = None,
            verify_skill: Optional[str] = None, verify_hint: Optional[str] = None, order: Optional[float] = None,
            signature: Optional[str] = None, meaning: str = "", rank: Optional[int] = None,
            relevant: Optional[List[str]] = None, kind: str = "", step: Optional[int] = None,
            precursor_of: Optional[str] = None, consequence_of: Optional[str] = None, wrapper: bool = False,
            timeout: bool = False, config: Optional[List[Source]] = None, setup: Optional[Dict[str, str]] = None,
            family: Optional[Dict[str, str]] = None,
            outcome: Optional[str] = None, outcome_by: Optional[str] = None, progress: Optional[Dict[str, Any]] = None
    ) -> None:
        self.id = id  # catalog signature id or detector id, e.g. "cuda-oom", "metric.first-nonfinite"
        self.claim = claim
        self.label = label
        self.confidence = confidence
        self.evidence = [] if evidence is None else evidence
        self.suggests = suggests  # one of CLASSIFICATIONS, or None for a factor/observation
        self.role = role  # cause | symptom | factor | terminal | context
        self.stage = stage
        self.stack = [] if stack is None else stack
        self.fixes = [] if fixes is None else fixes
        self.verify_skill = verify_skill
        self.verify_hint = verify_hint
        self.order = order  # position in the run's timeline (step or global line order) when known
        self.signature = signature  # catalog id when the finding came from the catalog
        self.meaning = meaning
        self.rank = rank  # the distributed rank the evidence came from, when known
        self.relevant = [] if relevant is None else relevant  # for factors: the classifications they bear on
        self.kind = kind
        self.step = step
        self.precursor_of = precursor_of
        self.consequence_of = consequence_of
        self.wrapper = wrapper
        self.timeout = timeout
        self.config = [] if config is None else config
        self.setup = {} if setup is None else setup  # e.g. {"precision": "fp16", "world_size": "8 ranks"}
        self.family = family  # the family by meaning ({"id", "title"}, catalog/families.yaml), when known
        self.outcome = outcome  # for outcome markers: completed | interrupted | running
        self.outcome_by = outcome_by  # who or what ended the run (interrupted) or how it ended (completed)
        self.progress = {} if progress is None else progress  # {"step": N, "of": M, "unit": "step" | "epoch"}
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
            d["summary"] = f"{self.claim} — {quoted(quote, 160)}"
        if quote:
            d["quote"] = quote  # the matched message itself, verbatim (redacted): the run's words, not trainwreck's
        d["id"] = self.id
        if self.rank is not None:
            d["rank"] = self.rank
        if self.stage:
            d["stage"] = self.stage
        if self.meaning:
            d["meaning"] = self.meaning
        if self.family:
            d["family"] = dict(self.family)
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


@record
class Diagnosis:
    def __init__(
            self, classification: str, confidence: float, failure_stage: str, stack: List[str],
            primary_cause: Optional[Dict[str, Any]], causes: List[Dict[str, Any]],
            contributing_factors: List[Dict[str, Any]], fix_candidates: List[Dict[str, Any]],
            verification: Dict[str, Any], notes: List[str], evidence_files: List[Dict[str, Any]], run: str = "",
            target: str = "", headline: str = "", terminal_events: Optional[List[Dict[str, Any]]] = None,
            metrics_summary: Optional[Dict[str, Any]] = None, tool: Optional[Dict[str, Any]] = None,
            setup: Optional[List[str]] = None, onset: Optional[Dict[str, Any]] = None,
            precursors: Optional[List[Dict[str, Any]]] = None, trajectories: Optional[Dict[str, Any]] = None,
            rollback: Optional[Dict[str, Any]] = None, chance: Optional[Dict[str, Any]] = None,
            first_failing_rank: Optional[Dict[str, Any]] = None, checkpoints: Optional[List[Dict[str, Any]]] = None,
            outcome: Optional[Dict[str, Any]] = None
    ) -> None:
        self.classification = classification
        self.confidence = confidence
        self.failure_stage = failure_stage
        self.stack = stack
        self.primary_cause = primary_cause
        self.causes = causes
        self.contributing_factors = contributing_factors
        self.fix_candidates = fix_candidates
        self.verification = verification
        self.notes = notes
        self.evidence_files = evidence_files
        self.run = run
        self.target = target
        self.headline = headline
        self.terminal_events = [] if terminal_events is None else terminal_events
        self.metrics_summary = {} if metrics_summary is None else metrics_summary
        self.tool = {} if tool is None else tool
        self.setup = [] if setup is None else setup  # e.g. ["fp16", "8 ranks"]
        # derived facts, computed once by decide; every verb shows a slice of them
        self.onset = {} if onset is None else onset  # {"step", "source", "cite", "precursor_step"}
        self.precursors = [] if precursors is None else precursors
        self.trajectories = {} if trajectories is None else trajectories  # per series: verdict and its findings
        self.rollback = {} if rollback is None else rollback  # {"checkpoint", "before_step", "plan", …}
        self.chance = {} if chance is None else chance  # the chance-level / initial-loss verdict
        self.first_failing_rank = first_failing_rank  # {"rank", "cite", "how"}
        self.checkpoints = [] if checkpoints is None else checkpoints
        # how the run ended, decided before the classification: {"outcome", "cite", "why", "by", "progress"}
        self.outcome = {"outcome": "unknown", "cite": "", "why": ""} if outcome is None else outcome

    def to_json(self) -> Dict[str, Any]:
        return printable({
            "tool": self.tool,
            "run": self.run,
            "target": self.target,
            "headline": self.headline,
            "outcome": self.outcome,
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
        })


_SURROGATE = None


def _escape_surrogates(s: str) -> str:
    global _SURROGATE
    if _SURROGATE is None:
        import re
        _SURROGATE = re.compile("[\ud800-\udfff]")
    return _SURROGATE.sub(lambda m: f"\\x{ord(m.group()) - 0xdc00:02x}" if 0xdc80 <= ord(m.group()) <= 0xdcff
                          else f"\\u{ord(m.group()):04x}", s)


def printable(obj: Any) -> Any:
    """`obj` with every lone surrogate written as text: a file name whose bytes are not UTF-8 reaches Python as
    U+DC80-U+DCFF (os.listdir's surrogateescape), which no UTF-8 output can encode; b'\\xff\\xfe.log' is shown
    as `\\xff\\xfe.log`, as `ls -b` does. Containers come back as the same objects when nothing in them changed."""
    if isinstance(obj, str):
        if obj.isascii():
            return obj
        try:
            obj.encode("utf-8")
            return obj
        except UnicodeEncodeError:
            return _escape_surrogates(obj)
    if isinstance(obj, dict):
        new = {printable(k): printable(v) for k, v in obj.items()}
        return obj if all(a is b for a, b in zip(new.values(), obj.values())) and list(new) == list(obj) else new
    if isinstance(obj, list):
        items = [printable(v) for v in obj]
        return obj if all(a is b for a, b in zip(items, obj)) else items
    return obj
