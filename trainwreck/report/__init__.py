"""Renderers of a Diagnosis: compact terminal text, Markdown. Pure functions of the diagnosis JSON."""
from __future__ import annotations

import shutil
import textwrap
from typing import Any, Dict, List, Optional

from trainwreck.model import cite

SKILL_PREFIX = "/trainwreck:"
_cite = cite  # the one citation format (model.cite), on the report's JSON sources


def _clip(text: str, n: int) -> str:
    """A quoted log line cut to n characters says that it was cut."""
    return text if len(text) <= n else text[: n - 1] + "…"


def _width() -> int:
    try:
        return max(80, min(140, shutil.get_terminal_size((100, 24)).columns))
    except (OSError, ValueError):
        return 100


def _row(tag: str, text: str, cite: str, width: int, max_lines: int = 3) -> str:
    """`  [TAG]  text …   cite`, the text wrapped under itself rather than cut, the citation on the first line."""
    room = max(30, width - len(cite) - 2 - 15)
    parts = textwrap.wrap(text, room) or [""]
    if len(parts) > max_lines:
        parts = parts[:max_lines]
        parts[-1] = parts[-1][: room - 1] + "…"
    first = f"  {tag:<13}{parts[0]}"
    out = [f"{first:<{width - len(cite) - 2}}  {cite}".rstrip()]
    out += [f"{'':15}{p}" for p in parts[1:]]
    return "\n".join(out)


def _quote(ev: Dict[str, Any], width: int) -> Optional[str]:
    t = (ev or {}).get("text") or ""
    t = t.strip()
    if not t or "metric" in ev:
        return None
    if len(t) > width - 18:
        t = t[: width - 19] + "…"
    return f"{'':15}│ {t}"


_OUTCOME_MEANS = {"completed": "the run reached its end; no failure found",
                  "interrupted": "stopped from outside (user, scheduler, preemption, cancellation)",
                  "running": "a live process is still writing the run's files",
                  "failed": "a failure was found before the end",
                  "unknown": "nothing says how the run ended"}


def outcome_line(d: Dict[str, Any]) -> str:
    """`Outcome: completed (train.log:458: why)`: how the run ended and the line that shows it."""
    o = d.get("outcome") or {}
    name = o.get("outcome") or "unknown"
    why = (o.get("why") or _OUTCOME_MEANS.get(name, "")).strip()
    where = o.get("cite") or ""
    inside = f"{where}: {why}" if where and why else (where or why)
    return f"Outcome: {name}" + (f" ({inside})" if inside else "")


def terminal(d: Dict[str, Any], width: Optional[int] = None) -> str:
    w = width or _width()
    run = d.get("target") or d.get("run") or ""
    head = ["trainwreck", run] + ([" + ".join(d["stack"][:4])] if d.get("stack") else []) + list(d.get("setup") or [])
    out: List[str] = [" · ".join(head), ""]
    title = d.get("headline") or d["classification"]
    conf = f"confidence {d['confidence']:.2f}"
    tl = textwrap.wrap(title, w - len(conf) - 2) or [""]
    out.append(f"{tl[0]:<{w - len(conf)}}{conf}")
    out += [f"  {t}" for t in tl[1:]]
    ol = textwrap.wrap(_clip(outcome_line(d), 3 * w), w - 2) or [""]
    out += [ol[0]] + [f"  {t}" for t in ol[1:3]]
    if d.get("classification") == "unclear":  # nothing failed: the line that says how the run ended, quoted
        q = _quote(((d.get("outcome") or {}).get("evidence") or [{}])[0], w)
        if q:
            out.append(q)
    shown = 0
    for c in d.get("causes", [])[:4]:
        ev = (c.get("evidence") or [{}])[0]
        out.append(_row(f"[{c['label']}]", c["summary"], _cite(ev), w))
        if shown == 0:
            q = _quote(ev, w)
            if q:
                out.append(q)
            for more in (c.get("evidence") or [])[1:3]:
                out.append(_row("", "also: " + _clip((more.get("text") or "").strip(), 90) if "metric" not in more
                                else f"also: {more['metric']}={more['value']}"
                                + (f" at step {more['step']}" if more.get("step") is not None else ""),
                                _cite(more), w))
        shown += 1
    for f in d.get("contributing_factors", [])[:5]:
        ev = (f.get("evidence") or [{}])[0]
        out.append(_row(f"[{f['label']}]", f["summary"], _cite(ev), w))
    for t in d.get("terminal_events", [])[:3]:
        ev = (t.get("evidence") or [{}])[0]
        out.append(_row("then", t["summary"], _cite(ev), w))
    if d.get("fix_candidates"):
        out += ["", "Fix, most likely first"]
        for fx in d["fix_candidates"][:5]:
            out.append(f"  {fx['rank']}. {fx['fix']}")
    v = d.get("verification") or {}
    if v:
        out.append("")
        extra = f" — last intact checkpoint before the onset: {v['checkpoint']}" if v.get("checkpoint") else ""
        out.append(f"Verify  {SKILL_PREFIX}{v.get('skill')}{extra}")
        if v.get("command"):
            out.append(f"        {v['command']}")
        if v.get("next_probe"):
            out.append(f"Next    {v['next_probe']}")
    if d.get("notes"):
        out += ["", "Notes"]
        for n in d["notes"][:8]:
            out.append(f"  - {n}")
        if len(d["notes"]) > 8:
            out.append(f"  - … {len(d['notes']) - 8} more in report.json")
    return "\n".join(out) + "\n"


def _md_outcome(d: Dict[str, Any]) -> str:
    o = d.get("outcome") or {}
    name = o.get("outcome") or "unknown"
    where = f" (`{o['cite']}`)" if o.get("cite") else ""
    why = (o.get("why") or _OUTCOME_MEANS.get(name, "")).replace("`", "'")
    line = f"**Outcome: {name}**{where}" + (f" — {why}" if why else "")
    ev = (o.get("evidence") or [{}])[0]
    if d.get("classification") == "unclear" and ev.get("text") and "metric" not in ev:
        line += "\n\n> " + ev["text"].strip().replace("`", "'")[:200]
    return line


def markdown(d: Dict[str, Any]) -> str:
    def ev_md(ev: Dict[str, Any]) -> str:
        if "metric" in ev:
            return f"`{_cite(ev)}` — {ev['metric']} = {ev['value']}"
        t = (ev.get("text") or "").strip().replace("`", "'")
        return f"`{_cite(ev)}` — `{t[:200]}`"

    L = [f"# trainwreck diagnosis: {d['classification']} (outcome: {(d.get('outcome') or {}).get('outcome', 'unknown')})",
         "",
         f"**{d.get('headline', '')}** (confidence {d['confidence']:.2f})", "",
         _md_outcome(d), "",
         f"- Run: `{d.get('target') or d.get('run')}`",
         f"- Stage: {d.get('failure_stage')}",
         f"- Stack: {', '.join(d.get('stack') or []) or 'unknown'}", ""]
    L += ["## Causes, ranked", ""]
    if not d.get("causes"):
        L.append("No cause is backed by the evidence.")
    for i, c in enumerate(d.get("causes", []), 1):
        L.append(f"{i}. **[{c['label']}]** {c['summary']} (confidence {c['confidence']:.2f}"
                 + (f", signature `{c['signature']}`" if c.get("signature") else "") + ")")
        for ev in c.get("evidence", [])[:4]:
            L.append(f"   - {ev_md(ev)}")
    if d.get("contributing_factors"):
        L += ["", "## Contributing factors", ""]
        for f in d["contributing_factors"]:
            L.append(f"- **[{f['label']}]** {f['summary']}")
            for ev in f.get("evidence", [])[:2]:
                L.append(f"  - {ev_md(ev)}")
    if d.get("terminal_events"):
        L += ["", "## What happened after (consequences, not causes)", ""]
        for t in d["terminal_events"]:
            L.append(f"- {t['summary']}" + (f" — {ev_md(t['evidence'][0])}" if t.get("evidence") else ""))
    if d.get("fix_candidates"):
        L += ["", "## Fixes, most likely first", ""]
        for fx in d["fix_candidates"]:
            L.append(f"{fx['rank']}. {fx['fix']} — *[{fx['label']}] because: {fx['because']}*")
    v = d.get("verification") or {}
    L += ["", "## Verify", "", f"- Skill: `{SKILL_PREFIX}{v.get('skill')}`"]
    if v.get("checkpoint"):
        L.append(f"- Last intact checkpoint before the onset: `{v['checkpoint']}`")
    if v.get("command"):
        L.append(f"- Command: `{v['command']}`")
    if v.get("next_probe"):
        L.append(f"- Next probe: {v['next_probe']}")
    if d.get("notes"):
        L += ["", "## Notes", ""] + [f"- {n}" for n in d["notes"]]
    if d.get("evidence_files"):
        L += ["", "## Evidence files", "", "| file | bytes | sha256 |", "|---|---:|---|"]
        for f in d["evidence_files"][:40]:
            L.append(f"| `{f['path']}` | {f['size']} | `{f['sha256'][:16]}…` ({f['hashed']}) |")
    return "\n".join(L) + "\n"
