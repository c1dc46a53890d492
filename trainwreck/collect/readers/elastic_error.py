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
        # torch/distributed/elastic/multiprocessing/errors/error_handler.py writes
        # {"message": {"message": "<Type>: <msg>", "extraInfo": {"py_callstack": "<traceback>", "timestamp": …}}};
        # any part of another type is read as absent (a note says so), never trusted to have that shape
        msg = doc.get("message") if isinstance(doc, dict) else None
        extra = msg.get("extraInfo") if isinstance(msg, dict) else None
        if isinstance(msg, dict):
            text = msg.get("message")
            tb = extra.get("py_callstack") if isinstance(extra, dict) else None
        else:
            text, tb = msg, None
        odd = [f"{what} is {_a(v)}, not {want}" for what, v, ok, want in (
            ("message", msg, (dict, str), "an object or a string"), ("message.message", text, str, "a string"),
            ("message.extraInfo", extra, dict, "an object"), ("extraInfo.py_callstack", tb, str, "a string"))
            if v is not None and not isinstance(v, ok)]
        if odd:
            bundle.note(f"{rel}: not the torchelastic error-file shape ({'; '.join(odd)}); read without those parts")
        body = next((b for b in (tb, text) if isinstance(b, str) and b.strip()), "")
        if not body:
            return
        # the message sits inside one JSON string: cite the file (no line number), one Line per message line
        for t in body.splitlines()[-400:]:
            bundle.extra_lines.append(Line(rel, None, t))
        ctx.record(f, "error-file")


def _a(v) -> str:
    return {dict: "an object", list: "a list", str: "a string", bool: "a boolean"}.get(type(v), "a number")
