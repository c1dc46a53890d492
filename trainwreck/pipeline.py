"""The one pipeline every entry point uses: locate → collect → analyze → decide.

Every verb runs it once and shows a slice of the Diagnosis it returns; none recomputes a derived fact."""
from __future__ import annotations

import os
from typing import List, Optional

from trainwreck import __version__, record
from trainwreck.analyze import analyze
from trainwreck.collect import collect
from trainwreck.collect.bundle import Bundle
from trainwreck.collect.redact import redact_path
from trainwreck.decide import decide
from trainwreck.decide.shellvar import name_path
from trainwreck.locate import NotFound, Run, locate
from trainwreck.model import Diagnosis, Finding


@record
class Result:
    def __init__(self, run: Run, bundle: Bundle, findings: List[Finding], diagnosis: Diagnosis) -> None:
        self.run = run
        self.bundle = bundle
        self.findings = findings
        self.diagnosis = diagnosis


def diagnose(path: Optional[str], cwd: Optional[str] = None, probe: bool = True,
             hide: frozenset = frozenset()) -> Result:
    run = locate(path, cwd)
    bundle = collect(run, hide)
    if not bundle.files:
        why = "; ".join(bundle.notes[:3]) or "no logs, metrics, configs or checkpoints in it"
        raise NotFound(f"nothing to diagnose in {redact_path(run.target)}: {why}")
    findings: List[Finding] = []
    if probe:
        from trainwreck.probes import probe_system
        try:
            findings.extend(probe_system(bundle))
        except Exception as exc:  # the live machine answering oddly never costs the diagnosis of the files
            bundle.probes = {"notes": [f"system probe failed ({type(exc).__name__}: {str(exc)[:100]}); the "
                                       "live machine was not examined"]}
    else:
        bundle.probes = {"skipped": "--no-probe: the live machine (GPU, processes, kernel log) was not examined"}
    findings.extend(analyze(bundle))
    diag = decide(bundle, findings)
    diag.run = run.root
    diag.target = run.target
    _hide_path_secrets(diag, run, cwd)
    diag.tool = {"name": "trainwreck", "version": __version__, "located": run.how}
    if probe:
        diag.notes.extend(n for n in bundle.probes.get("notes", []) if n not in diag.notes)
    else:
        diag.notes.append(bundle.probes["skipped"])
    return Result(run, bundle, findings, diag)


RUN_VAR = "RUN"
RUN_SAYS = "the run directory: its path holds a secret and is not printed"


def _hide_path_secrets(diag: Diagnosis, run: Run, cwd: Optional[str] = None) -> None:
    """A secret in the run's own path (a Hydra sweep directory `lr=0.1,wandb.api_key=<hex>`) is redacted wherever
    the path was written into the Diagnosis (run, target, notes), as every file path inside the run already was
    when it was read. A command names the run through a shell variable instead (`"$RUN"/train.log`), so that it
    still runs: verification.variables says what to set first, and the path itself is printed nowhere."""
    swap = {p: redact_path(p) for p in {run.root, run.target, run.single_file or ""} if p and redact_path(p) != p}
    if not swap:
        return
    _name_run_in_commands(diag, run, swap, cwd)
    olds = sorted(swap, key=len, reverse=True)

    def clean(v):
        if isinstance(v, str):
            for old in olds:
                if old in v:
                    v = v.replace(old, swap[old])
            return v
        if isinstance(v, list):
            return [clean(x) for x in v]
        if isinstance(v, tuple):
            return tuple(clean(x) for x in v)
        if isinstance(v, dict):
            return {clean(k): clean(x) for k, x in v.items()}
        return v
    for name, value in vars(diag).items():
        setattr(diag, name, clean(value))


def _name_run_in_commands(diag: Diagnosis, run: Run, secret: dict, cwd: Optional[str]) -> None:
    """Every path of the run that holds a secret, in the verification's commands, becomes `"$RUN"` (plus its
    place inside the run): absolute paths first, so that a relative target is not found inside one."""
    names = []
    for p in sorted(secret, key=lambda p: (not os.path.isabs(p), -len(p))):
        full = os.path.realpath(p if os.path.isabs(p) else os.path.join(cwd or os.getcwd(), p))
        rel = "" if p == run.root else os.path.relpath(full, run.root)
        if rel == "." or rel == "":
            names.append((p, ""))
        elif rel != ".." and not rel.startswith(".." + os.sep):
            rest = "/" + rel.replace(os.sep, "/")
            if redact_path(rest) == rest:  # a secret in the part inside the run stays redacted (clean() below)
                names.append((p, rest))
    v = diag.verification or {}
    named = False
    for holder in (v, v.get("launch") if isinstance(v.get("launch"), dict) else None):
        if holder and isinstance(holder.get("command"), str):
            cmd = holder["command"]
            for path, rest in names:
                cmd = name_path(cmd, path, RUN_VAR, rest)
            named = named or cmd != holder["command"]
            holder["command"] = cmd
    if named:
        v["variables"] = {RUN_VAR: RUN_SAYS}
