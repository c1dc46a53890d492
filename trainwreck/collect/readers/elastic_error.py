"""torchelastic error files (error.json, TORCHELASTIC_ERROR_FILE): the failing rank's message and traceback."""
from __future__ import annotations

import json

from trainwreck.model import Line

ORDER = 15
LIMIT = 4 << 20


def claims(rel: str, name: str) -> bool:
    return name == "error.json" or (name.startswith("error") and name.endswith(".json") and "/" in rel)


def read(bundle, entry, ctx) -> None:
    with ctx.open(entry) as f:
        rel = f.rel
        text = "\n".join(ln.text for ln in f.all_lines(LIMIT))  # redacted before it is parsed
        try:
            doc = json.loads(text)
        except ValueError:
            bundle.note(f"{rel}: not valid JSON; skipped")
            return
        msg = doc.get("message") if isinstance(doc, dict) else None
        if isinstance(msg, dict):
            text = msg.get("message") or ""
            tb = (msg.get("extraInfo") or {}).get("py_callstack") or ""
        else:
            text, tb = str(msg or ""), ""
        body = (tb or text)
        if not isinstance(body, str) or not body.strip():
            return
        # the message sits inside one JSON string: cite the file (no line number), one Line per message line
        for t in body.splitlines()[-400:]:
            bundle.extra_lines.append(Line(rel, None, t))
        ctx.record(f, "error-file")
