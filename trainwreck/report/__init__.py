"""Renderers of a Diagnosis: compact terminal text, Markdown. Pure functions of the diagnosis JSON."""
from __future__ import annotations

import shutil
import textwrap
from typing import Any, Dict, List, Optional

from trainwreck.model import cite
from trainwreck.report.safe import md_code, md_text, one_line, terminal_text

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
    text, cite = one_line(text), one_line(cite)
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
    t = one_line(((ev or {}).get("text") or "").strip())
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


def _variables(v: Dict[str, Any]) -> List[tuple]:
    """The shell variables to set before the verification's commands (a path that holds a secret, named "$RUN")."""
    got = v.get("variables")
    return [(k, str(x)) for k, x in got.items() if str(k).isidentifier()] if isinstance(got, dict) else []


def outcome_line(d: Dict[str, Any]) -> str:
    """`Outcome: completed (train.log:458: why)`: how the run ended and the line that shows it."""
    o = d.get("outcome") or {}
    name = o.get("outcome") or "unknown"
    why = (o.get("why") or _OUTCOME_MEANS.get(name, "")).strip()
    where = o.get("cite") or ""
    inside = f"{where}: {why}" if where and why else (where or why)
    return f"Outcome: {name}" + (f" ({inside})" if inside else "")


def terminal(d: Dict[str, Any], width: Optional[int] = None) -> str:
    """The compact terminal view. Each value from the run sits on its own line (a newline in it is shown as
    \\n) and the whole text leaves through report.safe.terminal_text: no control or bidi character is sent raw."""
    w = width or _width()
    run = one_line(d.get("target") or d.get("run") or "")
    head = ["trainwreck", run] + ([" + ".join(d["stack"][:4])] if d.get("stack") else []) + list(d.get("setup") or [])
    out: List[str] = [" · ".join(head), ""]
    title = one_line(d.get("headline") or d["classification"])
    conf = f"confidence {d['confidence']:.2f}"
    tl = textwrap.wrap(title, w - len(conf) - 2) or [""]
    out.append(f"{tl[0]:<{w - len(conf)}}{conf}")
    out += [f"  {t}" for t in tl[1:]]
    ol = textwrap.wrap(_clip(one_line(outcome_line(d)), 3 * w), w - 2) or [""]
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
            out.append(f"  {fx['rank']}. {one_line(fx['fix'])}")
    v = d.get("verification") or {}
    if v:
        out.append("")
        extra = f" — last intact checkpoint before the onset: {one_line(v['checkpoint'])}" if v.get("checkpoint") else ""
        out.append(f"Verify  {SKILL_PREFIX}{v.get('skill')}{extra}")
        for name, says in _variables(v):
            out.append(f"Set     {name}=<{one_line(says)}>")
        if v.get("command"):
            out.append(f"        {v['command']}")
        if v.get("next_probe"):
            out.append(f"Next    {one_line(v['next_probe'])}")
    if d.get("notes"):
        out += ["", "Notes"]
        for n in d["notes"][:8]:
            out.append(f"  - {one_line(n)}")
        if len(d["notes"]) > 8:
            out.append(f"  - … {len(d['notes']) - 8} more in report.json")
    return terminal_text("\n".join(out) + "\n")


def _md_outcome(d: Dict[str, Any]) -> str:
    o = d.get("outcome") or {}
    name = o.get("outcome") or "unknown"
    where = f" ({md_code(o['cite'])})" if o.get("cite") else ""
    why = md_text(o.get("why") or _OUTCOME_MEANS.get(name, ""))
    line = f"**Outcome: {md_text(name)}**{where}" + (f" — {why}" if why else "")
    ev = (o.get("evidence") or [{}])[0]
    if d.get("classification") == "unclear" and ev.get("text") and "metric" not in ev:
        line += "\n\n> " + md_text(ev["text"].strip()[:200])
    return line


def markdown(d: Dict[str, Any]) -> str:
    """report.md. Every string that comes from the run (a quoted line, a file name, a summary that quotes one, a
    config value) goes through report.safe: code spans that it cannot close, prose with its Markdown and HTML
    escaped, so that a log line or a file name can open no link, heading, list or HTML of its own."""
    def ev_md(ev: Dict[str, Any]) -> str:
        if "metric" in ev:
            return f"{md_code(_cite(ev))} — {md_text(ev['metric'])} = {md_text(ev['value'])}"
        t = (ev.get("text") or "").strip()
        return f"{md_code(_cite(ev))} — {md_code(t[:200])}"

    outcome = (d.get("outcome") or {}).get("outcome", "unknown")
    L = [f"# trainwreck diagnosis: {md_text(d['classification'])} (outcome: {md_text(outcome)})",
         "",
         f"**{md_text(d.get('headline', ''))}** (confidence {d['confidence']:.2f})", "",
         _md_outcome(d), "",
         f"- Run: {md_code(d.get('target') or d.get('run'))}",
         f"- Stage: {md_text(d.get('failure_stage'))}",
         f"- Stack: {md_text(', '.join(d.get('stack') or []) or 'unknown')}", ""]
    L += ["## Causes, ranked", ""]
    if not d.get("causes"):
        L.append("No cause is backed by the evidence.")
    for i, c in enumerate(d.get("causes", []), 1):
        L.append(f"{i}. **[{c['label']}]** {md_text(c['summary'])} (confidence {c['confidence']:.2f}"
                 + (f", signature {md_code(c['signature'])}" if c.get("signature") else "") + ")")
        for ev in c.get("evidence", [])[:4]:
            L.append(f"   - {ev_md(ev)}")
    if d.get("contributing_factors"):
        L += ["", "## Contributing factors", ""]
        for f in d["contributing_factors"]:
            L.append(f"- **[{f['label']}]** {md_text(f['summary'])}")
            for ev in f.get("evidence", [])[:2]:
                L.append(f"  - {ev_md(ev)}")
    if d.get("terminal_events"):
        L += ["", "## What happened after (consequences, not causes)", ""]
        for t in d["terminal_events"]:
            L.append(f"- {md_text(t['summary'])}" + (f" — {ev_md(t['evidence'][0])}" if t.get("evidence") else ""))
    if d.get("fix_candidates"):
        L += ["", "## Fixes, most likely first", ""]
        for fx in d["fix_candidates"]:
            L.append(f"{fx['rank']}. {md_text(fx['fix'])} — *[{fx['label']}] because: {md_text(fx['because'])}*")
    v = d.get("verification") or {}
    L += ["", "## Verify", "", f"- Skill: {md_code(SKILL_PREFIX + str(v.get('skill')))}"]
    if v.get("checkpoint"):
        L.append(f"- Last intact checkpoint before the onset: {md_code(v['checkpoint'])}")
    for name, says in _variables(v):
        L.append(f"- Set first: {md_code(f'{name}=<{says}>')}")
    if v.get("command"):
        L.append(f"- Command: {md_code(v['command'])}")
    if v.get("next_probe"):
        L.append(f"- Next probe: {md_text(v['next_probe'])}")
    if d.get("notes"):
        L += ["", "## Notes", ""] + [f"- {md_text(n)}" for n in d["notes"]]
    if d.get("evidence_files"):
        L += ["", "## Evidence files", "", "| file | bytes | sha256 |", "|---|---:|---|"]
        for f in d["evidence_files"][:40]:
            L.append(f"| {md_code(f['path'], table=True)} | {f['size']} | {md_code(str(f['sha256'])[:16] + '…')} "
                     f"({md_text(f['hashed'])}) |")
    return terminal_text("\n".join(L) + "\n")
