"""Probes as commands that run: a catalog signature's verify hint made concrete for this run, and the probes
that need a live process (a hang's stack dump, a silent end's kill record, a launcher's per-rank logs).

A catalog hint is written for any run (`python train.py max_steps=5`, `grep … rank*.log`, `py-spy dump --pid
<pid>`): its script call is rebuilt on the run's own launch with its settings mapped onto the run's keys, its
file patterns become the run's files, its process ids a `pgrep` of the run's script, and a hint whose pieces
cannot be filled from the run (`from mydata import ds`, `model(...)`) gives way to the class's own probe.
"""
from __future__ import annotations

import fnmatch
import os
import re
import shlex
from typing import List, Optional

from trainwreck import lazy_re
from trainwreck.collect.bundle import Bundle
from trainwreck.decide.command import CONCEPTS, Plan, Raw, absolute, build, find_flag, halve, q, value_of, with_comment
from trainwreck.decide.launch import Launch
from trainwreck.model import Finding

ANOMALY = "import torch; torch.autograd.set_detect_anomaly(True)"
MEMORY = ('import atexit, sys, torch; atexit.register(lambda: print(torch.cuda.memory_summary() '
          'if torch.cuda.is_available() else "no CUDA device", file=sys.stderr))')
# what a command must never hold: a stand-in for something the user has to fill in
PLACEHOLDER = lazy_re(r"<[A-Za-z][^<>|]{0,40}>|\.\.\.|…|\bmodel\(|\bfrom mydata\b|\bmydata\b")
_SCRIPT = lazy_re(r"(?:^|/)train\.py$")
_SO = lazy_re(r"(/[\w.+\-/]+\.so(?:\.\d+)*)")
_MODULE = lazy_re(r"No module named '([\w.]+)'")
_CKPT = lazy_re(r"(/[^\s'\"]+\.(?:pt|pth|ckpt|bin|safetensors|pkl|tar))\b")
# commands a hint may run as they are once its stand-ins are filled; any other first word is prose
SHELL_OK = {"python", "python3", "grep", "dmesg", "nvidia-smi", "npu-smi", "sacct", "ls", "df", "du", "py-spy", "head",
            "tail", "quota", "free", "pip", "cat", "ulimit", "all_reduce_perf", "nc", "which", "echo", "ldd", "ray",
            "kubectl", "ps", "pgrep", "top", "strace", "nproc", "lsof", "nvcc", "hostname", "ip", "ping"}
_STATEMENT = lazy_re(r"[A-Za-z_][\w.]*\(.*\)")
_LAUNCHER = lazy_re(r"(?:^|/)(?:python[\d.]*|torchrun|deepspeed|accelerate)$")
RANK_LOG_DIR = '"${TMPDIR:-/tmp}/trainwreck-rank-logs"'


def split_comment(hint: str) -> tuple:
    """(code, comment) at the first `#` that starts a word outside quotes."""
    quote = None
    for i, ch in enumerate(hint):
        if quote:
            if ch == quote and hint[i - 1] != "\\":
                quote = None
        elif ch in "'\"":
            quote = ch
        elif ch == "#" and (i == 0 or hint[i - 1].isspace()):
            return hint[:i].rstrip(), hint[i + 1:].strip()
    return hint.strip(), ""


def _segments(code: str) -> List[str]:
    """The hint's commands, split at top-level `;` (quotes respected)."""
    out, cur, quote = [], "", None
    for i, ch in enumerate(code):
        if quote:
            quote = None if ch == quote and code[i - 1] != "\\" else quote
        elif ch in "'\"":
            quote = ch
        elif ch == ";":
            out.append(cur.strip())
            cur = ""
            continue
        cur += ch
    return [s for s in out + [cur.strip()] if s]


def pattern(la: Launch) -> str:
    """A `pgrep -f` pattern for the run's processes: its script's name, else any python."""
    name = os.path.basename(la.script) if la.script and la.script != "train.py" else (la.module or "")
    return q(re.escape(name)) if name else "python"


def hang_command(la: Launch, bundle: Bundle) -> str:
    pat = pattern(la)
    rerun, said = build(la, [], env=["NCCL_DEBUG=INFO", "TORCH_DISTRIBUTED_DEBUG=DETAIL"])
    return with_comment(f"if pgrep -f {pat} > /dev/null; then pgrep -f {pat} | xargs -r -n1 py-spy dump --pid; "
                        f"else {rerun}; fi",
                        ["on the training host: alive, each process's stack shows where it waits (the rank not "
                         "in the collective is the culprit); gone, the rerun logs every collective"] + said)


def silent_end_command(la: Launch, bundle: Bundle) -> str:
    pat = pattern(la)
    job = job_id(bundle)
    sacct = f"; sacct -j {q(job)} --format=JobID,State,ExitCode,Elapsed,MaxRSS" if job else ""
    notes = ["alive: hung, see where it waits; gone: the kernel's OOM killer or the scheduler ended it"]
    if not job:
        notes.append("no scheduler job id is in the run: on Slurm add sacct -j with the job's id")
    return with_comment(f"if pgrep -f {pat} > /dev/null; then pgrep -f {pat} | xargs -r -n1 py-spy dump --pid; "
                        f"else dmesg -T | grep -i -E 'killed process|out of memory'{sacct}; fi", notes)


def rank_logs_command(la: Launch) -> str:
    """The launch again with each rank's stdout/stderr in its own file (torchrun --redirects/--log-dir)."""
    notes = ["each rank's stdout/stderr lands in its own file, with the worker's own error"]
    if la.opaque:
        return with_comment(f"ls -la {RANK_LOG_DIR}", ["the run was started through a wrapper script: pass "
                                                        "--redirects 3 --log-dir to the torchrun call in it"])
    base = Launch.__new__(Launch)
    base.__dict__.update(la.__dict__)
    at = next((i for i, t in enumerate(la.prefix) if os.path.basename(t) == "torchrun"
               or t == "torch.distributed.run"), None)
    mark = ["--redirects", "3", "--log-dir", Raw(RANK_LOG_DIR)]
    if at is not None:
        base.prefix = la.prefix[:at + 1] + mark + la.prefix[at + 1:]
    else:
        base.prefix = ["torchrun"] + mark
        if la.prefix and not os.path.basename(la.prefix[-1]).startswith("python"):
            notes.append(f"torchrun stands in for the run's launcher `{os.path.basename(la.prefix[0])}`")
    cmd, said = build(base, [])
    return with_comment(cmd + f"; trainwreck diagnose {RANK_LOG_DIR}",
                        notes + said)


def job_id(bundle: Bundle) -> Optional[str]:
    for rec in bundle.files:
        m = re.search(r"(?:^|/)slurm-(\d+)(?:_\d+)?\.(?:out|err)$", rec.path)
        if m:
            return m.group(1)
    for line in bundle.all_lines():
        m = re.search(r"\bSLURM_JOB_?ID[=:\s]+(\d+)", line.text)
        if m:
            return m.group(1)
    return None


def _run_files(bundle: Bundle, glob: str) -> List[str]:
    names = [r.path for r in bundle.files if fnmatch.fnmatch(r.path.rsplit("/", 1)[-1], glob)]
    if not names and "rank" in glob:  # the run's own logs stand in for the per-rank files
        names = [log.path for log in bundle.logs]
    return [q(absolute(bundle.root, n)) for n in names[:16]]


def _evidence(primary: Finding, rx) -> Optional[str]:
    for src in primary.evidence:
        m = rx.search(src.text or "")
        if m:
            return m.group(1)
    return None


def _fill(segment: str, la: Launch, bundle: Bundle, primary: Finding) -> Optional[str]:
    """A non-script hint command with its stand-ins replaced by the run's own files and processes."""
    job = job_id(bundle)
    if "<jobid>" in segment and job:
        segment = segment.replace("<jobid>", q(job))
    out = value_of(la, "output")
    if "<output_dir>" in segment and out and out.startswith("/"):
        segment = segment.replace("<output_dir>", q(out))
    for glob in sorted(set(re.findall(r"[\w.\-/]*(?:\w\*|\*\w)[\w.\-*]*", segment)), key=len, reverse=True):
        files = _run_files(bundle, glob.rsplit("/", 1)[-1])
        if not files:
            return None
        segment = segment.replace(glob, " ".join(files))
    segment = re.sub(r"py-spy dump --pid <[^>]*>", f"pgrep -f {pattern(la)} | xargs -r -n1 py-spy dump --pid", segment)
    segment = re.sub(r"<[^<>]*pid[^<>]*>", f'"$(pgrep -f -o {pattern(la)})"', segment)
    mod = _evidence(primary, _MODULE)
    if mod:
        segment = re.sub(r"<(?:module|mod|extension)>", mod, segment).replace("<package>", mod.split(".")[0])
    so = _evidence(primary, _SO)
    if so:
        segment = segment.replace("<failing .so>", q(so))
    ck = _evidence(primary, _CKPT)
    if ck and re.search(r"<ckpt(?:_dir)?>|<file>|\bckpt\.pt\b", segment):
        segment = _with_path(segment, ck)
    if segment is None or PLACEHOLDER.search(segment) or re.search(r"\bckpt\.pt\b", segment):
        return None  # a stand-in the run cannot fill (ckpt.pt: the hint's name for "your checkpoint")
    return segment


def _with_path(segment: str, path: str) -> Optional[str]:
    try:
        words = shlex.split(segment)
    except ValueError:
        return None
    out = []
    for i, w in enumerate(words):
        if i > 0 and words[i - 1] == "-c" and re.search(r"ckpt\.pt|<ckpt>|<file>", w):
            out.append(q("import sys; " + re.sub(r"[\"'](?:ckpt\.pt|<ckpt>|<file>)[\"']", "sys.argv[1]", w)))
            out.append(q(path))  # the file as the script's argument: no quoting inside the Python string
            continue
        w = w.replace("<ckpt_dir>", os.path.dirname(path)).replace("<ckpt>", path).replace("<file>", path)
        out.append(q(w) if not re.fullmatch(r"[|;&]+|2>&1|>|>>", w) else w)
    return " ".join(out)


def _script_call(segment: str, la: Launch, bundle: Bundle, plan: Optional[Plan]) -> Optional[tuple]:
    """`ENV=1 python train.py max_steps=5 num_workers=0 2>&1 | grep X` → the same on the run's own launch, with
    the class's rerun (`plan`) filling what the hint leaves open: its checkpoint, step limit, preamble."""
    plan = plan if plan is not None else Plan()
    ckpt = next((v for c, v in plan.sets if c == "resume"), "")
    pipe = ""
    m = re.search(r"\s(2>&1\s*)?\|\s", segment)
    if m:
        segment, pipe = segment[:m.start()], segment[m.start():].strip()
        if PLACEHOLDER.search(pipe):
            pipe = ""
    try:  # a stand-in with spaces (`<checkpoint before the first NaN>`) stays one word
        words = [w.replace("\x01", " ") for w in
                 shlex.split(re.sub(r"<[^<>]*>", lambda m: m.group(0).replace(" ", "\x01"), segment))]
    except ValueError:
        return None
    at = next((i for i, w in enumerate(words) if _SCRIPT.search(w)), None)
    if at is None:
        return None
    env = [w for w in words[:at] if re.fullmatch(r"[A-Z_][A-Z0-9_]*=\S*", w)]
    first = next((i for i, w in enumerate(words[:at]) if _LAUNCHER.search(w)), at)
    wrappers = [q(w) for w in words[:first] if w not in env]  # /usr/bin/time -v
    sets, extra, notes = [], [], []
    rest = words[at + 1:]
    i = 0
    while i < len(rest):
        w = rest[i]
        if w.startswith("--") and "=" not in w and i + 1 < len(rest) and not rest[i + 1].startswith("-") \
                and "=" not in rest[i + 1] and w not in ("--cfg", "--help"):
            name, value, i = w[2:], rest[i + 1], i + 2
        elif "=" in w:
            name, value, i = w.lstrip("-+").split("=", 1)[0], w.split("=", 1)[1], i + 1
        else:
            i += 1
            if w == "--cfg" and i < len(rest):  # Hydra's own flag: the hint is a Hydra one
                extra += ["--cfg", q(rest[i])]
                i += 1
            elif w == "--help":
                extra.append("--help")
            continue
        concept = next((c for c, names in CONCEPTS.items() if name.replace("-", "_") in names), None)
        if value.startswith("<"):  # <half>, <lr/3>, <checkpoint before the first NaN>: filled from the run
            stand_in = value.strip("<>")
            by = re.search(r"/\s*(\d+)", stand_in)
            if concept == "resume":
                value = ckpt or ""
            elif concept:
                value = halve(value_of(la, concept), int(by.group(1)) if by else 2) or ""
            if not value and concept not in ("resume",) + tuple(c for c, _v in plan.sets):
                notes.append(f"set {name} to {stand_in} (the run shows neither the setting nor its value)")
        if not value or PLACEHOLDER.search(value):
            continue
        if concept:
            sets.append((concept, value))
        elif name in la.keys or find_flag(la.args, name) is not None:
            extra.append(q(f"{name}={value}") if la.style in ("hydra", "kv") else f"--{q(name)} {q(value)}")
        else:
            notes.append(f"and set {name} to {value} if your script has such a setting")
    env = env or plan.env
    env_words = [f"{e.split('=', 1)[0]}={q(e.split('=', 1)[1])}" for e in env] + wrappers
    given = {c for c, _v in sets}
    sets += [(c, v) for c, v in plan.sets if c not in given]
    cmd, said = build(la, sets, env=env_words, pre=plan.pre, extra=extra)
    return cmd + (" " + pipe if pipe else ""), notes + said, plan.notes


def adapt_hint(hint: str, la: Launch, bundle: Bundle, primary: Finding, plan: Optional[Plan] = None) -> tuple:
    """(the hint as a command on this run, or None when a piece of it cannot be filled from the run; the hint's
    own words when it is prose rather than a command). `plan`: the class's rerun, merged into a hint that reruns
    the script (the hint's own settings win)."""
    code, comment = split_comment(hint)
    parts, notes, class_notes = [], [], []
    for seg in _segments(code):
        call = _script_call(seg, la, bundle, plan)
        if call is not None:
            parts.append(call[0])
            notes += call[1]
            class_notes = call[2]
            continue
        if _STATEMENT.fullmatch(seg):  # a Python statement: run it before the script, on the run's own launch
            root = seg.split(".", 1)[0].split("(", 1)[0]
            cmd, said = build(la, [], pre=(f"import {root}; " if "." in seg.split("(", 1)[0] else "") + seg)
            parts.append(cmd)
            notes += said
            continue
        first = next((w for w in seg.split() if not re.fullmatch(r"[A-Z_][A-Z0-9_]*=\S*", w)), "")
        if first not in SHELL_OK:
            prose = hint if not PLACEHOLDER.search(hint) else None
            return None, prose
        filled = _fill(seg, la, bundle, primary)
        if filled is None:
            return None, None
        parts.append(filled)
    if not parts:
        return None, None
    if comment and not PLACEHOLDER.search(comment):
        notes.insert(0, comment)  # the signature's own words on what to look for stand for the class's
    elif class_notes:
        notes = class_notes + notes
    return with_comment("; ".join(parts), notes), None
