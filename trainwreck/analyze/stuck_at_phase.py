"""A run whose last sign of life is the entry of a phase: it started a phase and nothing advanced after it.

Trainers announce each phase before its first unit of work: HF's "***** Running training *****", detectron2's
"Starting training from iteration 0", tensorpack's "Start training with global_step=0", Keras' "Epoch 1/10", a
progress bar at 0 % ("Epoch 0:   0%| | 0/4", "Validation DataLoader 0:   0%|"), "Saving model checkpoint to …",
"Using PyTorch DDP", a store-based barrier's "Waiting in store based barrier …". When such a line is the last
progress a log shows — no step, metric or progress bar advances after it, and no error, completion or
interruption follows — the run stopped at the start of that phase. Whether it still hangs there or was killed
while it waited, the log cannot say: the finding is a hypothesis of modest weight, naming the phase, and the
probe is one that fits a hang (a stack dump of every rank; NCCL_DEBUG=INFO for distributed phases;
num_workers=0 where a DataLoader feeds the phase). The same wait line repeated with nothing between the repeats
is the run reporting that it waits: direct evidence of a wait.

A phase announced with the step it runs at ("Saving checkpoint at step 9485") is still an entry: the number dates
it (the same line counting up is progress). A user's Ctrl-C is how a run that stood still is usually ended, so the
log is read up to the interrupt: an entry that is the last progress before it is a stall the user ended (outcome
interrupted). A log that progresses normally and simply stops mid-phase carries no phase entry at its end: it stays
unclear (a hang, or a kill) here. A completed run, one a scheduler stopped, or one whose other logs or metric files
show progress past the entry, is left alone.
"""
from __future__ import annotations

import re
from itertools import islice
from typing import List, Optional, Tuple

from trainwreck import lazy_re
from trainwreck.analyze import outcome, stuck_after_init
from trainwreck.analyze.signatures import scan
from trainwreck.catalog import family_ref
from trainwreck.collect.bundle import Bundle
from trainwreck.model import DIRECT, HYPOTHESIS, Finding, Line, LogText

TAIL = 60  # the entry must be among the log's last TAIL non-blank lines
AFTER = 25  # at most this many (setup, warning) lines after it, none of them progress

# A line that announces the start of a phase (the framework's own words; see tests/fixtures/stuck/README.md).
_ANNOUNCE: List[Tuple[str, "re.Pattern[str]"]] = [
    ("distributed", lazy_re(r"(?i)\busing (?:pytorch )?(?:ddp|distributed(?:dataparallel)?|torch\.distributed)\b|"
                            r"\binit(?:ializ(?:e|ing))?[_ ]process[_ ]group\b|\binitializing (?:distributed|ddp)\b|"
                            r"\brendezvous\b|store.based.barrier|\bdistributed environment:|"
                            r"\bsetting up (?:ddp|distributed)\b|\bNCCL INFO (?:Bootstrap|NET/|comm )")),
    ("evaluation", lazy_re(r"\*{5} Running (?:Evaluation|Prediction|Testing) \*{5}|^\s*(?:Validation|Testing|"
                           r"Predicting|Sanity Checking)(?: DataLoader \d+)?:|(?i:\b(?:validating|sanity "
                           r"checking|(?:validation|testing|predicting) dataloader \d+|evaluating|running (?:the )?"
                           r"(?:validation|evaluation|eval|test)|start(?:s|ing)? (?:the )?(?:evaluation|validation|"
                           r"testing|eval|test)|evaluation (?:starts|begins))\b)")),
    ("checkpoint", lazy_re(r"(?i)\b(?:saving (?:the )?(?:model )?(?:checkpoints?|weights|model|state(?: dict)?)|"
                           r"save (?:the )?(?:model )?checkpoint (?:to|at)|checkpointing\b|writing checkpoint)")),
    ("data", lazy_re(r"(?i)\b(?:loading (?:the )?(?:train(?:ing)? |val(?:idation)? )?(?:data(?:sets?)?|data ?loaders?)|"
                     r"building (?:the )?(?:train(?:ing)? )?(?:data ?loaders?|datasets?)|creating (?:the )?"
                     r"(?:data ?loaders?|datasets?)|preparing (?:the )?(?:data(?:sets?)?|data ?loaders?))\b")),
    ("training", lazy_re(r"\*{5} Running training \*{5}|Reducer buckets have been rebuilt in this iteration|"
                         r"batch_all_reduce: \d+ all-reduces with algorithm|"
                         r"(?i:\b(?:start(?:s|ed|ing)?|begin(?:s|ning)?|launch(?:ing)?)"
                         r"\s+(?:the\s+)?(?:training|train(?:ing)? loop)\b|\bstart running\b)|"
                         r"^\s*Epoch \d+/\d+\s*$")),
]
_WAIT = lazy_re(r"(?i)\bwaiting (?:in|for|on|until|to)\b|\bwaiting [\d.]+ ?s(?:ec(?:ond)?s?)?\b")
# a counter at zero: a progress bar that has not moved, step/iteration/epoch 0
_ZERO = lazy_re(r"(?:^|[\s:|])0%\||\|\s*0/\d+|\b0/\d+\s*\[|\b0it \[|(?i:\b(?:global[_ ]step|step|iter(?:ation)?|batch|"
                r"epoch)\b\s*[=:#\[(]?\s*0\b)")
# a counter past zero, or a metric value: the run advanced
# (`[20][ 150/1160]`: MMEngine's `Epoch(val) [epoch][iter/total]`, the ImageNet example's `Epoch: [3][ 40/500]`)
_BAR = lazy_re(r"\b(\d{1,3})%\||\b(\d+)/\d+\s*\[|\b(\d+)it \[|\[ *(\d+)/\d+\]")
_COUNT = lazy_re(r"(?i)\b(?:global[_ ]step|step|iter(?:ation)?|batch)\b\s*[=:#\[(]?\s*(\d+)\b")
_METRIC = lazy_re(r"(?i)\b(?:\w*loss\w*|\w*acc(?:uracy)?|ppl|perplexity|m?AP(?:50)?|f1\w*|bleu|wer|cer|reward\w*|"
                  r"top[-_]?[15]\w*)['\"]?\s*[:=]\s*['\"]?[-+]?(?:\d|nan\b|inf\b)")
_TROUBLE = lazy_re(r"Traceback|(?<!\w)\w*Error\b|error:|Exception\b|Killed|killed by|FAILED|CANCELLED|Terminated|"
                   r"Segmentation fault|core dumped|Aborted|timed out|Timed out|TimeoutError")
# a line after the entry that reports a phase finished: the run did not stop at that entry
_DONE = lazy_re(r"(?i)\b(?:saved|done|finished|completed?|loaded|written|took|success(?:fully)?)\b")
_DIST = lazy_re(r"(?i)\b(?:ddp|nccl|hccl|gloo|init_process_group|world_size|torchrun|torch\.distributed|"
                r"torch\.nn\.parallel\.distributed|batch_all_reduce|reducer buckets|"
                r"initializing distributed|distributed (?:init|mode|environment|backend|training|data ?parallel))\b|"
                r"distributed_backend=")
_NOT_DIST = lazy_re(r"(?i)\bnot using distributed\b|\bdistributed[_ ]?(?:mode|training)?\s*[:=]\s*(?:false|none|no)\b")
_DIGITS = re.compile(r"\d+")

_PHASE = {  # phase: (what the claim calls it, stage, family id, fixes, probe)
    "distributed": (
        "distributed setup (process group / barrier)", "startup", "rendezvous-timeout",
        ["check that every rank and node started and agrees on the world size (WORLD_SIZE, nnodes x nproc_per_node, "
         "MASTER_ADDR/MASTER_PORT); a rank that never started, or a second job on the same port, leaves the others "
         "waiting",
         "rerun with NCCL_DEBUG=INFO TORCH_DISTRIBUTED_DEBUG=DETAIL to see the last setup step each rank reached"],
        "py-spy dump --pid <pid>  # on every rank while it waits; next launch with NCCL_DEBUG=INFO "
        "TORCH_DISTRIBUTED_DEBUG=DETAIL"),
    "training": (
        "training (its first step)", "runtime", None,
        ["rerun with num_workers=0: if the first step then runs, a DataLoader worker hangs (fork with open handles, "
         "a lock, a shared-memory limit)",
         "take a stack dump of every process of the run while it is silent (py-spy dump --subprocesses): it shows "
         "whether the first batch, the first forward/backward or a collective never returned"],
        "py-spy dump --subprocesses --pid <pid>  # while it is silent: the main process and each DataLoader worker"),
    "evaluation": (
        "evaluation / validation", "evaluation", None,
        ["rerun validation with num_workers=0 for the validation DataLoader, and in DDP make every rank run the "
         "same evaluation loop (a collective inside a rank-0-only branch waits forever)",
         "take a stack dump of every rank while it is silent: a hung data fetch, or a metric sync that only some "
         "ranks reach, shows there"],
        "py-spy dump --subprocesses --pid <pid>  # on every rank while validation is silent"),
    "checkpoint": (
        "a checkpoint save", "checkpoint", None,
        ["take a stack dump of every rank while it is silent: a save waiting on storage (NFS, a full disk), on the "
         "data pipeline or on a collective that only rank 0 reaches shows there",
         "save from every rank's code path with a barrier outside any rank-0-only branch, to local disk first"],
        "py-spy dump --subprocesses --pid <pid>  # on every rank while the save is silent"),
    "data": (
        "data loading", "startup", "data-pipeline-deadlock",
        ["rerun with num_workers=0: if it then proceeds, a DataLoader worker hangs (fork with open handles or "
         "locks, a shared-memory limit in a container: --shm-size)",
         "take a stack dump of every process of the run while it is silent (py-spy dump --subprocesses)"],
        "py-spy dump --subprocesses --pid <pid>  # while loading is silent: the main process and each worker"),
}
_PHASE["wait"] = (
    "a wait (on a lock, a queue or another process)", "runtime", None,
    ["take a stack dump while it waits: it names what it waits for (a file lock, a queue, another rank)",
     "a file lock left by a killed run (e.g. a .lock file in the Hugging Face cache) blocks every later run: check "
     "that no live process holds it (lsof <lock file>) before removing it"],
    "py-spy dump --pid <pid>  # while it waits: the frame it is blocked in names what it waits for")
_LATER = {"training": ("a training epoch or step", "runtime")}  # the same phase entered after progress


def _parts(text: str) -> List[str]:
    """A line's visible states: a progress bar rewritten in place leaves \\r-separated states on one line."""
    return [p for p in text[:2000].split("\r") if p.strip()] or [""]


def advances(text: str) -> bool:
    """The line shows the run moving: a bar past 0, a step counter past 0, or a metric value."""
    for part in _parts(text):
        if _METRIC.search(part):
            return True
        for m in _BAR.finditer(part):
            if any(g is not None and int(g) > 0 for g in m.groups()):
                return True
        if any(int(m.group(1)) > 0 for m in _COUNT.finditer(part)):
            return True
    return False


_AT_STEP = ("checkpoint", "evaluation")  # phases announced with the step they run at ("Saving checkpoint at step 9485")


def _at_step(text: str) -> Optional[str]:
    """The phase a line announces for the step it names: a step counter there dates the phase, it is not progress
    (a metric value or a moving bar still is)."""
    part = _parts(text)[-1]
    if _METRIC.search(part) or any(g is not None and int(g) > 0 for m in _BAR.finditer(part) for g in m.groups()):
        return None
    return next((phase for phase, rx in _ANNOUNCE if phase in _AT_STEP and rx.search(part)), None)


def entry(text: str) -> Optional[str]:
    """The phase this line enters ("" when it is a counter at zero that names no phase), else None."""
    if advances(text):
        return _at_step(text)
    part = _parts(text)[-1]
    for phase, rx in _ANNOUNCE:
        if rx.search(part):
            return phase
    if _WAIT.search(part):
        return "wait"
    if _ZERO.search(part):
        return "training" if re.search(r"(?i)\b(?:epoch|step|iter|train)", part) else ""
    return None


def _norm(text: str) -> str:
    return _DIGITS.sub("#", text.strip())


def _counting(lines: List[Line]) -> bool:
    """The last line repeats an earlier one with another step count: the same announcement counting up."""
    key, steps = _norm(lines[-1].text), [m.group(1) for m in _COUNT.finditer(lines[-1].text)]
    return any(_norm(x.text) == key and [m.group(1) for m in _COUNT.finditer(x.text)] != steps for x in lines[:-1])


def _scan(log: LogText, cut: Optional[int] = None) -> Optional[dict]:
    """The log's last entry line when nothing advances after it; None when the log ends in progress or trouble.
    `cut`: the line where someone interrupted the run; what follows it is the interrupt, not the run."""
    tail = [x for x in log.lines if x.text.strip() and (cut is None or x.line is None or x.line < cut)][-TAIL:]
    last = None
    for i in range(len(tail) - 1, -1, -1):
        text = tail[i].text
        got = entry(text)  # once: entry() runs advances() itself
        if got is None and advances(text) or _TROUBLE.search(text[:2000]) and not _WAIT.search(text):
            return None  # the log's last word is progress, or an error other detectors read
        if got is not None:
            last = i
            break
    if last is None or len(tail) - 1 - last > AFTER:
        return None
    if any(_DONE.search(x.text[:2000]) for x in tail[last + 1:]):
        return None  # the phase it entered reports that it finished
    if advances(tail[last].text) and _counting(tail[max(0, last - 12):last + 1]):
        return None  # "Evaluating step 10", "… step 20": a phase counting its own steps is progress, not its entry
    for x in reversed(tail[max(0, last - 12):last]):
        if advances(x.text):
            break
        if _TROUBLE.search(x.text[:2000]) and not _WAIT.search(x.text):
            return None  # an error just before the entry: the line after it is teardown (a progress bar closing)
    phase = entry(tail[last].text)
    named = last  # an anonymous bar at zero takes the phase of the announcement just before it
    j = last
    while not phase and j > 0 and last - j < 12:
        j -= 1
        p = entry(tail[j].text)
        if p:
            phase, named = p, j
        elif advances(tail[j].text):
            break
    waits = 1
    if _WAIT.search(tail[last].text):
        key = _norm(tail[last].text)
        k = last - 1
        while k >= 0 and _norm(tail[k].text) == key:
            waits, k = waits + 1, k - 1
        if phase == "wait" and re.search(r"(?i)barrier|rendezvous|process group|/job:\w+/replica:\d+/task:\d+",
                                         tail[last].text):  # TF/JAX name their tasks /job:worker/replica:0/task:1
            phase = "distributed"
    before = log.head + [x for x in log.lines if x.line is None or tail[last].line is None
                         or x.line < tail[last].line]
    return {"line": tail[last], "named": tail[named], "from": tail[min(named, last - waits + 1):], "phase": phase or "training", "after": len(tail) - 1 - last,
            "waits": waits, "progressed": any(advances(x.text) for x in before[-400:] + [tail[last]]),
            "distributed": any(_DIST.search(x.text[:2000]) and not _NOT_DIST.search(x.text[:2000])
                               for x in (log.lines[-400:] if len(log.lines) >= 400 else log.head + log.lines)[-400:])}


def _ended(earlier: List[Finding]) -> bool:
    """A completion or interruption marker, or a live process still writing: the run did not stop at the entry.
    A user's interrupt (Ctrl-C) is not one: it is how a run that stood still is usually ended (see _cuts)."""
    for m in earlier:
        if m.kind == "outcome" and (m.outcome == "completed" or m.outcome == "interrupted" and m.outcome_by != "user"
                                    or (m.outcome == "running" and m.outcome_by == "progressing")):
            return True
    return False


def _cuts(earlier: List[Finding]) -> dict:
    """{log path: (line, marker)} of each user interrupt: the log is read up to it."""
    out: dict = {}
    for m in earlier:
        if m.kind == "outcome" and m.outcome == "interrupted" and m.outcome_by == "user":
            for e in m.evidence[:1]:
                if e.line is not None and e.path not in out:
                    out[e.path] = (e.line, e)
    return out


def _family(fid: Optional[str]) -> Optional[dict]:
    return family_ref(fid)


LATE = True  # stands down on the outcome markers and the init-stall finding the other detectors already made


def detect(bundle: Bundle, earlier: Optional[List[Finding]] = None) -> List[Finding]:
    if earlier is None:  # called on its own (not from analyze()): make the findings it stands down on
        earlier = outcome.detect(bundle) + stuck_after_init.detect(bundle)
    hits, moving = [], False
    cuts = _cuts(earlier)
    for log in bundle.logs:
        line, stop = cuts.get(log.path, (None, None))
        hit = _scan(log, line)
        if hit is not None:
            hit["interrupt"] = stop
            hits.append((log, hit))
        elif any(advances(x.text) for x in islice((x for x in reversed(log.lines) if x.text.strip()), 5)):
            moving = True  # another log ends in progress: the run went on past the entry
    if not hits or moving or _ended(earlier) or any(f.id == stuck_after_init.FINDING_ID for f in earlier):
        return []
    log, hit = hits[0]
    if any(h.count >= h.sig.min_count for h in scan(hit["from"]).values()):
        return []  # the catalog reads the run's last lines with its own meaning (a stall warning, an error)
    other_metrics = any(p.source.path != log.path for ss in bundle.series.values() for s in ss for p in s.points)
    if other_metrics and not hit["progressed"]:
        return []  # a metrics file shows steps the log does not: the run got past this entry
    return [_finding(log, hit)]


def _finding(log: LogText, hit: dict) -> Finding:
    phase = hit["phase"] if hit["phase"] in _PHASE else "distributed" if hit["distributed"] else "training"
    what, stage, fam, fixes, probe = _PHASE[phase]
    if hit["progressed"] and phase in _LATER:
        what, stage = _LATER[phase]
    line: Line = hit["line"]
    where = f"line {line.line}" if line.line is not None else "its last lines"
    after = hit["after"]
    stop = hit.get("interrupt")
    tail = (f", {after} line{'s' if after != 1 else ''} of setup or warnings after it" if after else
            ", the log's last line" if stop is None else "")
    repeated = hit["waits"] >= 2
    if stop is not None:
        claim = (f"stuck at the start of {what}: its entry is the last progress {log.path} shows ({where}{tail}) "
                 f"before the user interrupted the run (line {stop.line}), with no step, metric or error between "
                 "them (it stood still until it was stopped by hand, or was stopped just after entering the phase: "
                 "the log alone cannot say which)")
    elif _WAIT.search(line.text):
        in_what = " on a lock, a queue or another process" if phase == "wait" else f" in {what}"
        claim = (f"stuck waiting{in_what}: the same wait is logged {hit['waits']} times in a row with no progress "
                 f"between the repeats ({log.path} {where}{tail})" if repeated else
                 f"stuck waiting{in_what}: {log.path} ends on a wait ({where}{tail}) with no progress, error, "
                 "completion or interruption after it (still hung, or killed while it waited)")
    else:
        claim = (f"stuck at the start of {what}: its entry is the last progress {log.path} shows ({where}{tail}), "
                 "and no step, metric, error, completion or interruption follows (still hung, or killed while "
                 "stuck: the log alone cannot say which)")
    fixes = list(fixes)
    if hit["distributed"] and phase != "distributed":
        fixes.append("the run is distributed: rerun with NCCL_DEBUG=INFO TORCH_DISTRIBUTED_DEBUG=DETAIL and dump "
                     "every rank; a rank that is not where the others are is the one to read")
    evidence = [line.source()]
    if hit["named"] is not line:
        evidence.insert(0, hit["named"].source())
    if stop is not None:
        evidence.append(stop)
    return Finding(
        id="log.stuck-at-phase", kind="", label=DIRECT if repeated else HYPOTHESIS,
        confidence=0.55 if repeated else (0.4 if hit["progressed"] else 0.45),
        claim=claim, evidence=evidence, suggests="stall", role="cause", stage=stage, family=_family(fam),
        meaning=("A run whose output ends at the start of a phase, with nothing after it, never completed the "
                 "phase's first unit of work: it waits on something (a DataLoader worker, a collective, a rank "
                 "that never arrived, storage) or was killed while it waited."),
        fixes=fixes, verify_skill="debug", verify_hint=probe)
