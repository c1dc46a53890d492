"""The --out snapshot: report.json, report.md, meta/, artifacts/failure.lock.json and a plot when possible.

Refuses to write inside the run directory: trainwreck never changes the evidence it reads.
"""
from __future__ import annotations

import json
import os
from typing import Any, Dict, List

from trainwreck.collect.bundle import Bundle
from trainwreck.report import markdown
from trainwreck.report.outpath import refusal


class OutError(Exception):
    pass


def _write(path: str, text: str) -> None:
    os.makedirs(os.path.dirname(path), exist_ok=True)
    tmp = path + ".tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        f.write(text)
    os.replace(tmp, path)


def _validate(d: Dict[str, Any]) -> None:
    """Check report.json against the shipped schema when jsonschema is installed; say so when it is not."""
    try:
        import jsonschema
    except ImportError:
        d.setdefault("notes", []).append("report.json was not checked against its schema: jsonschema is not "
                                         "installed (pip install jsonschema)")
        return
    schema_path = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "schemas", "diagnosis.schema.json")
    with open(schema_path, encoding="utf-8") as f:
        schema = json.load(f)
    try:
        jsonschema.validate(d, schema)
    except jsonschema.ValidationError as exc:  # a bug of ours: write the report anyway, and say it
        d.setdefault("notes", []).append(f"report.json does not match its schema: {exc.message[:200]}")


def write_snapshot(bundle: Bundle, out: str, report: Dict[str, Any]) -> List[str]:
    why = refusal(out, bundle.root)  # every path written, every component resolved (report/outpath.py)
    if why:
        raise OutError(why)
    try:
        os.makedirs(out, exist_ok=True)
    except OSError as exc:
        raise OutError(f"cannot create --out {out}: {exc.strerror or exc}") from None
    d = report
    _validate(d)
    written = []

    def put(rel: str, text: str) -> None:
        _write(os.path.join(out, rel), text)
        written.append(rel)

    put("report.json", json.dumps(d, indent=2, ensure_ascii=False) + "\n")
    put("report.md", markdown(d))
    profile = {k: d.get(k) for k in ("classification", "confidence", "failure_stage", "stack", "headline",
                                     "terminal_events", "metrics_summary", "notes")}
    profile["run"] = d.get("run")
    put("meta/failure-profile.json", json.dumps(profile, indent=2, ensure_ascii=False) + "\n")
    put("meta/root-causes.json", json.dumps({"primary_cause": d.get("primary_cause"), "causes": d.get("causes"),
                                             "contributing_factors": d.get("contributing_factors"),
                                             "fix_candidates": d.get("fix_candidates"),
                                             "verification": d.get("verification")}, indent=2, ensure_ascii=False)
        + "\n")
    lock = {"run": d.get("run"), "tool": d.get("tool"), "files": d.get("evidence_files", []),
            "note": "sha256 of each evidence file as read ('whole', or 'head+tail' for large files: only the bytes "
                    "that were read; of the decompressed bytes for a compressed file); re-run and compare to tell "
                    "whether the evidence changed"}
    put("artifacts/failure.lock.json", json.dumps(lock, indent=2) + "\n")
    try:
        from trainwreck.report.plot import plot
        png = plot(bundle, d, os.path.join(out, "artifacts", "curves.png"))
        if png:
            written.append("artifacts/curves.png")
    except ImportError:
        pass
    return written
