#!/usr/bin/env python3
"""Validate the trainwreck evaluation corpus (standard library only).

Usage:
    python tests/corpus/check_corpus.py            # validate, print counts
    python tests/corpus/check_corpus.py --table    # also print the README table

Every case is a directory ``NNN-short-slug/`` next to this script holding a
``case.json`` plus at least one run artifact (a log, metrics, config ...).
Exit status is 0 when every case is valid and the distribution minimums hold,
1 otherwise.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections import Counter
from pathlib import Path

CORPUS_DIR = Path(__file__).resolve().parent

CLASSIFICATIONS = ("NaN", "OOM", "divergence", "stall", "crash", "unclear")
REQUIRED_KEYS = ("classification", "cause", "source", "title", "stack", "note")
# Batch 4 on: what happened to the run, and the line a maintainer pointed to.
OPTIONAL_KEYS = ("outcome", "evidence_line")
OUTCOMES = ("failed", "completed", "interrupted", "running", "unknown")
# Minimum number of cases per classification, and overall.
MINIMUMS = {"NaN": 8, "OOM": 8, "divergence": 8, "stall": 8, "crash": 8, "unclear": 4}
MIN_TOTAL = 70

MAX_FILE_BYTES = 50 * 1024
MAX_CASE_BYTES = 50 * 1024

CASE_DIR_RE = re.compile(r"^(\d{3,4})-[a-z0-9][a-z0-9._-]*$")
SOURCE_RE = re.compile(r"^https://github\.com/[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+/(?:(issues|pull)/\d+|blob/[0-9a-f]{7,40}/\S+)$")


def case_dirs(root: Path) -> list[Path]:
    return sorted(p for p in root.iterdir() if p.is_dir() and not p.name.startswith((".", "_")))


def check_metrics_jsonl(path: Path, errors: list[str]) -> None:
    for lineno, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        try:
            obj = json.loads(line)
        except json.JSONDecodeError as exc:
            errors.append(f"{path}:{lineno}: invalid JSON ({exc})")
            continue
        if not isinstance(obj, dict) or "step" not in obj:
            errors.append(f"{path}:{lineno}: each line must be an object with a 'step' key")


def check_trainer_state(path: Path, errors: list[str]) -> None:
    try:
        obj = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        errors.append(f"{path}: invalid JSON ({exc})")
        return
    if not isinstance(obj, dict) or not isinstance(obj.get("log_history"), list):
        errors.append(f"{path}: trainer_state.json must be an object with a 'log_history' list")


def check_case(case: Path, errors: list[str]) -> dict | None:
    if not CASE_DIR_RE.match(case.name):
        errors.append(f"{case.name}: directory name must look like NNN-short-slug (lowercase)")
    meta_path = case / "case.json"
    if not meta_path.is_file():
        errors.append(f"{case.name}: missing case.json")
        return None
    try:
        meta = json.loads(meta_path.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        errors.append(f"{case.name}: case.json is not valid JSON ({exc})")
        return None
    if not isinstance(meta, dict):
        errors.append(f"{case.name}: case.json must hold an object")
        return None

    for key in REQUIRED_KEYS:
        if key not in meta:
            errors.append(f"{case.name}: case.json lacks '{key}'")
    extra = set(meta) - set(REQUIRED_KEYS) - set(OPTIONAL_KEYS)
    if extra:
        errors.append(f"{case.name}: case.json has unknown keys {sorted(extra)}")

    cls = meta.get("classification")
    if cls not in CLASSIFICATIONS:
        errors.append(f"{case.name}: classification {cls!r} not in {CLASSIFICATIONS}")

    cause = meta.get("cause")
    if not isinstance(cause, list) or not cause:
        errors.append(f"{case.name}: 'cause' must be a non-empty list of strings")
    else:
        for c in cause:
            if not isinstance(c, str) or not c.strip():
                errors.append(f"{case.name}: cause entries must be non-empty strings ({c!r})")
            elif c != c.lower():
                errors.append(f"{case.name}: cause entry {c!r} must be lowercase")

    for key in ("title", "stack", "note"):
        val = meta.get(key)
        if key in meta and (not isinstance(val, str) or not val.strip()):
            errors.append(f"{case.name}: '{key}' must be a non-empty string")

    if "outcome" in meta and meta["outcome"] not in OUTCOMES:
        errors.append(f"{case.name}: outcome {meta['outcome']!r} not in {OUTCOMES}")
    if "evidence_line" in meta and not isinstance(meta["evidence_line"], str):
        errors.append(f"{case.name}: 'evidence_line' must be a string")

    src = meta.get("source")
    if not isinstance(src, str) or not SOURCE_RE.match(src):
        errors.append(f"{case.name}: source {src!r} is not a GitHub issue/PR URL or a blob URL at a commit")

    artifacts = [p for p in case.rglob("*") if p.is_file() and p.name != "case.json"]
    if not artifacts:
        errors.append(f"{case.name}: no run artifact besides case.json")

    total = 0
    for p in [meta_path, *artifacts]:
        size = p.stat().st_size
        total += size
        if size >= MAX_FILE_BYTES:
            errors.append(f"{case.name}: {p.relative_to(case)} is {size} bytes (limit {MAX_FILE_BYTES})")
        if size == 0:
            errors.append(f"{case.name}: {p.relative_to(case)} is empty")
        try:
            p.read_text(encoding="utf-8")
        except UnicodeDecodeError:
            errors.append(f"{case.name}: {p.relative_to(case)} is not UTF-8 text")
    if total >= MAX_CASE_BYTES:
        errors.append(f"{case.name}: case totals {total} bytes (limit {MAX_CASE_BYTES})")

    for p in artifacts:
        if p.name == "metrics.jsonl":
            check_metrics_jsonl(p, errors)
        elif p.name == "trainer_state.json":
            check_trainer_state(p, errors)
    return meta


def markdown_table(rows: list[tuple[str, dict]]) -> str:
    out = ["| id | classification | stack | source |", "| --- | --- | --- | --- |"]
    for name, meta in rows:
        stack = str(meta.get("stack", "")).replace("|", "/")
        out.append(f"| {name} | {meta.get('classification')} | {stack} | {meta.get('source')} |")
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--table", action="store_true", help="print the markdown table of cases")
    ap.add_argument("--root", type=Path, default=CORPUS_DIR, help="corpus directory")
    args = ap.parse_args(argv)

    errors: list[str] = []
    rows: list[tuple[str, dict]] = []
    seen_ids: dict[str, str] = {}
    seen_sources: dict[str, str] = {}
    for case in case_dirs(args.root):
        meta = check_case(case, errors)
        m = CASE_DIR_RE.match(case.name)
        if m:
            if m.group(1) in seen_ids:
                errors.append(f"{case.name}: id {m.group(1)} already used by {seen_ids[m.group(1)]}")
            seen_ids[m.group(1)] = case.name
        if meta is None:
            continue
        src = meta.get("source")
        if isinstance(src, str):
            if src in seen_sources:
                errors.append(f"{case.name}: source already used by {seen_sources[src]}")
            seen_sources[src] = case.name
        rows.append((case.name, meta))

    counts = Counter(meta.get("classification") for _, meta in rows)
    for cls, minimum in MINIMUMS.items():
        if counts.get(cls, 0) < minimum:
            errors.append(f"corpus: {counts.get(cls, 0)} '{cls}' cases, need at least {minimum}")
    if len(rows) < MIN_TOTAL:
        errors.append(f"corpus: {len(rows)} cases, need at least {MIN_TOTAL}")

    if args.table:
        print(markdown_table(rows))
        print()

    print(f"{len(rows)} cases")
    for cls in CLASSIFICATIONS:
        print(f"  {cls:<11} {counts.get(cls, 0)}")
    repos = Counter()
    for _, meta in rows:
        src = meta.get("source", "")
        parts = src.split("/")
        if len(parts) > 4:
            repos[f"{parts[3]}/{parts[4]}"] += 1
    print(f"  repos       {len(repos)}")

    if errors:
        print(f"\n{len(errors)} problem(s):", file=sys.stderr)
        for e in errors:
            print(f"  - {e}", file=sys.stderr)
        return 1
    print("OK")
    return 0


if __name__ == "__main__":
    sys.exit(main())
