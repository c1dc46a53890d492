"""The --out snapshot: report.json, report.md, meta/, artifacts/failure.lock.json and a plot when possible.

Refuses to write inside the run directory: trainwreck never changes the evidence it reads.
"""
from __future__ import annotations

import json
import os
import shutil
import tempfile
from typing import Any, Dict, List

from trainwreck.collect.bundle import Bundle
from trainwreck.report import markdown
from trainwreck.report.outpath import refusal
from trainwreck.report.safe import json_text


class OutError(Exception):
    pass


def _inside(child: str, parent: str) -> bool:
    c, p = os.path.realpath(child), os.path.realpath(parent)
    return c == p or c.startswith(p.rstrip(os.sep) + os.sep)


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
    """Write the snapshot to `out` atomically: every file is rendered into a folder next to `out` first, each
    renderer on its own (one that fails gives a note, the others' files stand), and only a complete snapshot
    is renamed into place; a failure before that leaves `out` as it was and no partial files behind."""
    why = refusal(out, bundle.root)  # every path written, every component resolved (report/outpath.py)
    if why:
        raise OutError(why)
    target = os.path.abspath(out)
    if os.path.lexists(target) and not os.path.isdir(target):
        raise OutError(f"--out {out} exists and is not a folder")
    try:
        os.makedirs(os.path.dirname(target), exist_ok=True)
        stage = tempfile.mkdtemp(prefix=f".{os.path.basename(target)}.", suffix=".partial",
                                 dir=os.path.dirname(target))
    except OSError as exc:
        raise OutError(f"cannot create --out {out}: {exc.strerror or exc}") from None
    where = _where(stage, target)
    try:
        written = _render(bundle, report, stage)
        # rendering takes a while: the folder (or a component of its path) may have been swapped for a link
        # since the check; check again, and that the stage and the target are still the folders checked
        why = refusal(out, bundle.root)
        if why or _where(stage, target) != where:
            raise OutError(why or f"--out {out} changed while the snapshot was being written (a folder of its path "
                           "was replaced); nothing was written there. Run it again.")
        _publish(stage, target, bundle.root)
    except OSError as exc:
        raise OutError(f"cannot write --out {out}: {exc.strerror or exc}; it was left as it was") from None
    finally:
        shutil.rmtree(stage, ignore_errors=True)
    return written


def _where(stage: str, target: str) -> tuple:
    """What the stage and the target are on disk: resolved paths and (device, inode) of the stage, the target's
    parent and the target (None when it does not exist yet)."""
    def ident(p: str):
        try:
            st = os.lstat(p)
        except OSError:
            return None
        return (st.st_dev, st.st_ino, os.path.islink(p))
    return (os.path.realpath(stage), ident(stage), os.path.realpath(os.path.dirname(target)),
            ident(os.path.dirname(target)), ident(target))


def _put(stage: str, rel: str, text: str) -> None:
    path = os.path.join(stage, rel)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    # a lone surrogate that slipped past printable() is written escaped, never raised on
    with open(path, "x", encoding="utf-8", errors="backslashreplace") as f:
        f.write(text)


def _render(bundle: Bundle, d: Dict[str, Any], stage: str) -> List[str]:
    """Every file of the snapshot into `stage`; report.json last, so that it holds the notes of the others."""
    _validate(d)
    written = []
    try:
        from trainwreck.report.plot import plot
        os.makedirs(os.path.join(stage, "artifacts"), exist_ok=True)
        if plot(bundle, d, os.path.join(stage, "artifacts", "curves.png")):
            written.append("artifacts/curves.png")
    except ImportError:
        pass
    except Exception as exc:  # a plotting library's refusal never costs the report
        d.setdefault("notes", []).append(f"no plot: the plot failed ({type(exc).__name__}: {_said(exc)})")
    profile = {k: d.get(k) for k in ("classification", "confidence", "failure_stage", "stack", "headline",
                                     "terminal_events", "metrics_summary", "notes")}
    profile["run"] = d.get("run")
    lock = {"run": d.get("run"), "tool": d.get("tool"), "files": d.get("evidence_files", []),
            "note": "sha256 of each evidence file as read ('whole', or 'head+tail' for large files: only the bytes "
                    "that were read; of the decompressed bytes for a compressed file); re-run and compare to tell "
                    "whether the evidence changed"}
    views = [("report.md", lambda: markdown(d)),
             ("meta/failure-profile.json", lambda: _dump(profile)),
             ("meta/root-causes.json", lambda: _dump({k: d.get(k) for k in (
                 "primary_cause", "causes", "contributing_factors", "fix_candidates", "verification")})),
             ("artifacts/failure.lock.json", lambda: _dump(lock))]
    for rel, render in views:
        try:
            text = render()
        except Exception as exc:  # one view that cannot be rendered is named; the others are written
            d.setdefault("notes", []).append(f"{rel} was not written: its renderer failed "
                                             f"({type(exc).__name__}: {_said(exc)})")
            continue
        _put(stage, rel, text)
        written.append(rel)
    try:  # the report itself: if it cannot be rendered, nothing is published
        text = _dump(d)
    except Exception as exc:
        raise OutError(f"could not render report.json ({type(exc).__name__}: {_said(exc)}); --out was left as "
                       "it was") from None
    _put(stage, "report.json", text)
    return ["report.json"] + written


def _dump(obj: Any) -> str:
    # control, bidi and zero-width characters as \u escapes: `cat report.json` must not act on them
    return json_text(obj) + "\n"


def _said(exc: BaseException) -> str:
    return " ".join(str(exc).split())[:160]


def _publish(stage: str, target: str, run_root: str) -> None:
    """Move the rendered snapshot into `target`: a new folder by one rename; into an existing one, each entry
    (report.json, report.md, meta/, artifacts/) replaces the previous one by a rename, the previous ones moved
    aside first and put back if a rename fails. An existing entry that is the run or holds it is refused."""
    names = sorted(os.listdir(stage))
    if not os.path.lexists(target):
        mask = os.umask(0)
        os.umask(mask)
        os.chmod(stage, 0o777 & ~mask)  # as os.makedirs would have made it, not mkdtemp's 0700
        os.rename(stage, target)
        return
    for name in names:
        dst = os.path.join(target, name)
        if os.path.lexists(dst) and not os.path.islink(dst) and (_inside(run_root, dst) or _inside(dst, run_root)):
            raise OutError(f"--out {target}: {name} there is or holds the run directory; trainwreck never "
                           "writes there. Choose another folder.")
    aside = tempfile.mkdtemp(prefix=".previous.", dir=stage)
    placed, moved = [], []
    try:
        for name in names:
            dst = os.path.join(target, name)
            if os.path.lexists(dst):
                os.rename(dst, os.path.join(aside, name))  # a link is moved itself, never followed
                moved.append(name)
            os.rename(os.path.join(stage, name), dst)
            placed.append(name)
    except OSError:
        for name in placed:
            dst = os.path.join(target, name)
            if os.path.isdir(dst) and not os.path.islink(dst):
                shutil.rmtree(dst, ignore_errors=True)
            else:
                os.unlink(dst)
        for name in moved:
            os.rename(os.path.join(aside, name), os.path.join(target, name))
        raise
