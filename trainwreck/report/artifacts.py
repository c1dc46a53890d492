"""The --out snapshot: report.json, report.md, meta/, artifacts/failure.lock.json and a plot when possible.

Refuses to write inside the run directory: trainwreck never changes the evidence it reads.
"""
from __future__ import annotations

import io
import json
import os
import stat
from typing import Any, Dict, List, Optional

from trainwreck import path_inside
from trainwreck.collect.bundle import Bundle
from trainwreck.report import markdown
from trainwreck.report.outdir import Folder, open_made
from trainwreck.report.outpath import fd_holds_run, fd_refusal, refusal, run_chain
from trainwreck.report.safe import json_text


class OutError(Exception):
    pass


def _inside(child: str, parent: str) -> bool:
    return path_inside(os.path.realpath(child), os.path.realpath(parent))


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
    is renamed into place; a failure before that leaves `out` as it was and no partial files behind.

    The folder above `out`, the stage and an existing `out` are held open and checked by descriptor
    (report/outdir.py): every file is created and every entry renamed relative to them, so a folder of the path
    swapped for a link after the last check still cannot send a write into the run."""
    why = refusal(out, bundle.root)  # every path written, every component resolved (report/outpath.py)
    if why:
        raise OutError(why)
    target = os.path.abspath(out)
    if os.path.lexists(target) and not os.path.isdir(target):
        raise OutError(f"--out {out} exists and is not a folder")
    if os.path.islink(target):  # a link to a folder outside the run (checked above): that folder is written
        target = os.path.realpath(target)
    head, name = os.path.split(target)
    check = lambda folder: _check(folder, out, bundle.root)  # noqa: E731
    held: List[Folder] = []
    stage_name = None
    try:
        try:
            parent = open_made(head, check)
            held.append(parent)
            stage_name, stage = parent.mktemp(f".{name}.", ".partial")
            held.append(stage)
            check(stage)
        except OSError as exc:
            raise OutError(f"cannot create --out {out}: {exc.strerror or exc}") from None
        stage_path = os.path.join(head, stage_name)
        try:
            tgt = None
            if parent.lstat(name) is not None:
                tgt = parent.sub(name)  # never through a link: a link there now is a swap since the check
                held.append(tgt)
                check(tgt)
            where = _where(stage_path, target)
            if not _holds(where, parent, stage, tgt):
                raise OutError(_changed(out))
            written = _render(bundle, report, stage)
            # rendering takes a while: the folder (or a component of its path) may have been swapped for a link
            # since the check; check again, and that the stage and the target are still the folders checked
            why = refusal(out, bundle.root)
            if why or _where(stage_path, target) != where:
                raise OutError(why or _changed(out))
            _publish(parent, name, stage, stage_name, tgt, out, bundle.root)
        except OSError as exc:
            raise OutError(f"cannot write --out {out}: {exc.strerror or exc}; it was left as it was") from None
    finally:
        if stage_name is not None:
            parent.remove_tree(stage_name, keep=frozenset(run_chain(bundle.root)))
        for folder in reversed(held):
            folder.close()
    return written


def _changed(out: str) -> str:
    return (f"--out {out} changed while the snapshot was being written (a folder of its path was replaced); "
            "nothing was written there. Run it again.")


def _check(folder: Folder, out: str, run_root: str) -> None:
    """A folder held open, by its descriptor: refused when it is in the run (outpath.fd_refusal)."""
    why = fd_refusal(folder.fd, out, run_root) if folder.fd is not None else None
    if why:
        raise OutError(why)


def _where(stage: str, target: str) -> tuple:
    """What the stage and the target are on disk: resolved paths and (device, inode) of the stage, the target's
    parent and the target (None when it does not exist yet)."""
    def ident(p: str, follow: bool = False):
        try:
            st = os.stat(p) if follow else os.lstat(p)
        except OSError:
            return None
        return (st.st_dev, st.st_ino, os.path.islink(p))
    return (os.path.realpath(stage), ident(stage), os.path.realpath(os.path.dirname(target)),
            ident(os.path.dirname(target), follow=True), ident(target))


def _holds(where: tuple, parent: Folder, stage: Folder, tgt: Optional[Folder]) -> bool:
    """Whether the folders held open are the ones the paths name (`where`): a swap before they were opened."""
    ident = lambda w: w[:2] if w else None  # noqa: E731
    return (ident(where[1]) == stage.ident() and ident(where[3]) == parent.ident()
            and ident(where[4]) == (tgt.ident() if tgt else None))


def _put(stage: Folder, rel: str, data) -> None:
    """A new file of the snapshot, made relative to the stage's descriptor (its folders made as needed)."""
    if isinstance(data, str):  # a lone surrogate that slipped past printable() is written escaped, never raised on
        data = data.encode("utf-8", "backslashreplace")
    *folders, name = rel.split("/")
    held, folder = [], stage
    try:
        for sub in folders:
            if folder.lstat(sub) is None:
                folder.mkdir(sub)
            folder = folder.sub(sub)
            held.append(folder)
        folder.create(name, data)
    finally:
        for f in held:
            f.close()


def _render(bundle: Bundle, d: Dict[str, Any], stage: Folder) -> List[str]:
    """Every file of the snapshot into `stage`; report.json last, so that it holds the notes of the others."""
    _validate(d)
    written = []
    try:
        from trainwreck.report.plot import plot
        png = io.BytesIO()  # rendered to bytes, written through the stage's descriptor like every other file
        if plot(bundle, d, png):
            _put(stage, "artifacts/curves.png", png.getvalue())
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


def _publish(parent: Folder, name: str, stage: Folder, stage_name: str, tgt: Optional[Folder], out: str,
             run_root: str) -> None:
    """Move the rendered snapshot into `name` in `parent`: a new folder by one rename; into an existing one (`tgt`),
    each entry (report.json, report.md, meta/, artifacts/) replaces the previous one by a rename, the previous ones
    moved aside first and put back if a rename fails. An existing entry that is the run or holds it is refused.
    Every rename is relative to the folders held open, checked once more here, just before the renames."""
    for folder in (parent, tgt):
        if folder is not None:
            _check(folder, out, run_root)
    names = stage.names()
    if tgt is None:
        mask = os.umask(0)
        os.umask(mask)
        stage.chmod(0o777 & ~mask)  # as os.makedirs would have made it, not mkdtemp's 0700
        parent.rename(stage_name, parent, name)
        return
    chain = run_chain(run_root)
    for entry in names:
        st = tgt.lstat(entry)
        if st is not None and stat.S_ISDIR(st.st_mode) and _holds_run(tgt, entry, run_root, chain):
            raise OutError(f"--out {out}: {entry} there is or holds the run directory; trainwreck never "
                           "writes there. Choose another folder.")
    _aside_name, aside = stage.mktemp(".previous.", "")
    placed, moved = [], []
    try:
        for entry in names:
            if tgt.lstat(entry) is not None:
                tgt.rename(entry, aside, entry)  # a link is moved itself, never followed
                moved.append(entry)
            stage.rename(entry, tgt, entry)
            placed.append(entry)
    except OSError:
        for entry in placed:  # back into the stage, which is removed
            tgt.rename(entry, stage, entry)
        for entry in moved:
            aside.rename(entry, tgt, entry)
        raise
    finally:
        aside.close()


def _holds_run(tgt: Folder, entry: str, run_root: str, chain: set) -> bool:
    if tgt.fd is None:
        dst = os.path.join(tgt.path, entry)
        return _inside(run_root, dst) or _inside(dst, run_root)
    sub = tgt.sub(entry)
    try:
        return fd_holds_run(sub.fd, run_root, chain)
    finally:
        sub.close()
