"""Outcome markers: the lines (and facts) that say how a run ended, before anyone asks whether it failed.

- completed: a trainer's own end-of-training message, HF Trainer's final summary entry (`train_runtime`), the
  state's `global_step == max_steps`, the last logged step or epoch equal to the configured length;
- interrupted: stopped from outside — the user (Ctrl-C, `KeyboardInterrupt`, SIGINT), a scheduler's time limit,
  a preemption, a cancellation (scancel, bkill), a Kubernetes eviction, a SIGTERM / SIGHUP from elsewhere;
- running: a live process holds the run's files open (only the `live` probe can say so; with --no-probe the
  files cannot tell a live run from a dead one).

Each marker is a Finding of kind "outcome" with the typed fields `outcome`, `outcome_by` and `progress`; it
suggests no class (role "context"). decide/outcome.py weighs them against the failures found.
The wording of every marker is the framework's or scheduler's own; see tests/fixtures/outcome/README.md."""
from __future__ import annotations

import re
from typing import Callable, Dict, List, Optional, Tuple

from trainwreck import lazy_re
from trainwreck.analyze.outcome_gap import silent_before_stop
from trainwreck.analyze.outcome_progress import progress_markers
from trainwreck.analyze.tracebacks import vocab
from trainwreck.collect.bundle import Bundle
from trainwreck.model import DIRECT, Finding, Line, Source

_SIGNALS = {"2": "user", "15": "signal", "1": "hangup", "9": "signal", "SIGINT": "user", "SIGTERM": "signal",
            "SIGHUP": "hangup", "SIGKILL": "signal"}
_SLURM_REASON = {"TIME LIMIT": "time-limit", "PREEMPTION": "preemption", "NODE FAILURE": "node-failure",
                 "JOB REQUEUE": "requeue", None: "cancelled"}
_LSF_REASON = {"RUNLIMIT": "time-limit", "CPULIMIT": "time-limit", "DEADLINE": "time-limit", "WINDOW": "time-limit",
               "OWNER": "cancelled", "FORCE_OWNER": "cancelled", "ADMIN": "cancelled", "FORCE_ADMIN": "cancelled",
               "PREEMPT": "preemption", "REQUEUE_OWNER": "requeue", "REQUEUE_ADMIN": "requeue"}

# (gate substrings tested first, pattern, outcome, who, how to read the match into (who, progress))
_Read = Callable[["re.Match[str]"], Tuple[str, Dict]]
_MARKERS: List[Tuple[Tuple[str, ...], "re.Pattern[str]", str, str, Optional[_Read]]] = [
    # transformers Trainer._inner_training_loop
    (("Training completed",), lazy_re(r"Training completed\. Do not forget to share your model"), "completed",
     "hf-trainer", None),
    # Trainer.log(metrics) of the final summary: `{'train_runtime': 228.0, ..., 'train_loss': 2.02, 'epoch': 3.0}`
    (("train_runtime",), lazy_re(r"""['"]train_runtime['"]\s*:\s*[\d.]+"""), "completed", "hf-trainer", None),
    # Trainer.log_metrics("train", metrics) after train() returned
    (("train metrics",), lazy_re(r"\*{5} train metrics \*{5}"), "completed", "hf-trainer", None),
    # transformers modelcard.py (Trainer.create_model_card, after train): `model_card += "\n### Training results\n\n"`
    (("### Training results",), lazy_re(r"^### Training results\s*$"), "completed", "hf-model-card", None),
    # lightning/pytorch/loops/fit_loop.py: "`Trainer.fit` stopped: `max_epochs=3` reached."
    (("stopped:",), lazy_re(r"Trainer\.fit`? stopped: `?(max_epochs|max_steps)=(\d+)`? reached"), "completed",
     "lightning", lambda m: ("lightning", {"step": int(m.group(2)), "of": int(m.group(2)),
                                           "unit": "epoch" if m.group(1) == "max_epochs" else "step"})),
    # lightning EarlyStopping: "... did not improve in the last 3 records. Best score: 0.123. Signaling Trainer to stop."
    (("did not improve",), lazy_re(r"Monitored metric \S+ did not improve in the last \d+ records"), "completed",
     "early-stopping", None),
    # ultralytics / yolov5 train.py: f"\n{epoch - start_epoch + 1} epochs completed in {hours:.3f} hours."
    (("epochs completed in",), lazy_re(r"(?<!\d)(\d+) epochs completed in [\d.]+ hours"), "completed", "yolo",
     lambda m: ("yolo", {"step": int(m.group(1)), "unit": "epoch"})),
    # fairseq_cli/train.py: logger.info("done training in {:.1f} seconds".format(train_meter.sum))
    (("done training in",), lazy_re(r"\bdone training in [\d.]+ seconds"), "completed", "fairseq", None),
    # Megatron-LM training.py: print_datetime('after training is done'), exit_interval
    (("after training is done",), lazy_re(r"\[after training is done\]"), "completed", "megatron", None),
    (("exiting program at iteration",), lazy_re(r"exiting program at iteration (\d+)"), "completed", "megatron",
     lambda m: ("megatron", {"step": int(m.group(1)), "unit": "step"})),
    # the scheduler's word that the job exited 0: LSF's job report, a Kubernetes pod description's phase
    (("Successfully completed",), lazy_re(r"^Successfully completed\.\s*$"), "completed", "lsf", None),
    (("Succeeded",), lazy_re(r"^Status:\s+Succeeded\s*$"), "completed", "kubernetes", None),
    # any script's own words
    # (Theano's tutorials: "Optimization complete with best validation score of …"; TF1's "Optimization Finished!")
    (("raining", "RAINING", "ptimization", "ptimisation", "PTIMIZATION"), lazy_re(
        r"(?i)\b(?:training (?:is |has )?(?:completed?|finished|done|ended)|(?:finished|done) training|"
        r"training complete|end of training|optimi[sz]ation (?:is )?(?:complete|finished|done))\b(?!\s*(?:for |of |in )?(?:the )?(?:epoch|step|iter|batch|stage|phase|round|fold))"),
     "completed", "log", None),
    # --- interrupted
    # the exception line (after a rank prefix too), IPython's header, lightning's trainer/call.py warning
    (("KeyboardInterrupt",), lazy_re(r"(?:^|[\]|:]\s)\s*(?:[\w.]+\.)?KeyboardInterrupt\s*(?::.*)?$|"
                                     r"^KeyboardInterrupt\s+Traceback \(most recent call last\)|"
                                     r"Detected KeyboardInterrupt, attempting graceful shutdown"),
     "interrupted", "user", None),
    (("^C",), lazy_re(r"^\^C"), "interrupted", "user", None),  # the terminal's echo of Ctrl-C
    (("srun: ",), lazy_re(r"srun: interrupt \(one more within 1 sec to abort\)|srun: sending Ctrl-C to"),
     "interrupted", "user", None),
    # torch.distributed.elastic: "Received 2 death signal, shutting down workers" / SignalException
    (("death signal", "got signal"), lazy_re(r"Received (\d+) death signal, shutting down workers|"
                                             r"SignalException: Process \d+ got signal: (\d+)"), "interrupted",
     "signal", lambda m: (_SIGNALS.get(m.group(1) or m.group(2), "signal"), {})),
    # Megatron-LM: --exit-signal-handler, --exit-duration-in-mins
    (("exiting program after",), lazy_re(r"exiting program after receiving (SIGTERM|SIGINT)|"
                                         r"exiting program after [\d.]+ minutes"), "interrupted", "signal",
     lambda m: (_SIGNALS.get(m.group(1), "signal") if m.group(1) else "time-limit", {})),
    # slurmstepd req.c: "*** %s ON %s CANCELLED AT %s DUE TO TIME LIMIT ***" (also PREEMPTION, NODE FAILURE …)
    (("CANCELLED",), lazy_re(r"\*\*\* (?:JOB|STEP) [\d.]+\w*(?: ON \S+)? CANCELLED AT \S+"
                             r"(?: DUE TO (TIME LIMIT|PREEMPTION|NODE FAILURE|JOB REQUEUE))?"), "interrupted",
     "cancelled", lambda m: (_SLURM_REASON[m.group(1)], {})),
    # LSF job report: "TERM_RUNLIMIT: job killed after reaching LSF run time limit."
    (("TERM_",), lazy_re(r"\bTERM_(RUNLIMIT|CPULIMIT|DEADLINE|WINDOW|OWNER|FORCE_OWNER|ADMIN|FORCE_ADMIN|PREEMPT|"
                         r"REQUEUE_OWNER|REQUEUE_ADMIN): [Jj]ob killed"), "interrupted", "cancelled",
     lambda m: (_LSF_REASON[m.group(1)], {})),
    # PBS/Torque mom: "=>> PBS: job killed: walltime 3611 exceeded limit 3600"
    (("PBS: job killed",), lazy_re(r"PBS: job killed: (?:walltime|cput) \d+ exceeded limit \d+"), "interrupted",
     "time-limit", None),
    # kubelet eviction (pod status message) and kube-scheduler preemption (event)
    (("low on resource",), lazy_re(r"The node was low on resource: [\w-]+"), "interrupted", "eviction", None),
    (("Preempted by pod",), lazy_re(r"Preempted by pod \S+ on node"), "interrupted", "preemption", None),
    # kubelet nodeshutdown_manager (spot reclaim, maintenance); job controller's activeDeadlineSeconds
    (("imminent node shutdown",), lazy_re(r"Pod was terminated in response to imminent node shutdown"),
     "interrupted", "node-shutdown", None),
    (("specified deadline",), lazy_re(r"Job was active longer than specified deadline"), "interrupted", "time-limit",
     None),
]


# srun's report that a task of the step failed: a plain cancellation after it is srun tearing the step down
_SRUN_TASK_FAILED = lazy_re(r"srun: error: \S+: tasks? [\d,\-\[\]]+: (?:Exited with exit code [1-9]|Killed|"
                            r"Segmentation fault|Aborted|Bus error)")




def _stopped_in(lines: List[Line], i: int) -> Optional[str]:
    """Where the process was when the user stopped it: the innermost frame of the traceback the interrupt printed
    (after a `^CTraceback` line, or before a `KeyboardInterrupt` line). A Ctrl-C traceback is a stack dump."""
    path = lines[i].path
    if vocab.HEADER in lines[i].text:
        span = lines[i + 1:i + 400]
    else:
        start = next((j for j in range(i - 1, max(-1, i - 400), -1) if vocab.HEADER in lines[j].text), None)
        span = lines[start + 1:i] if start is not None else []
    frame = None
    for ln in span:
        if ln.path != path:
            break
        m = vocab.FRAME.match(ln.text)
        if m is not None:
            frame = m
        elif frame is not None and not ln.text.startswith((" ", "\t", ".")):
            break  # the traceback ended
    if frame is None:
        return None
    file = frame.group(1).replace("\\", "/")
    lib = next((k for k in ("site-packages/", "dist-packages/") if k in file), None)
    short = file.rsplit(lib, 1)[-1] if lib else file.rsplit("/", 1)[-1]  # torch/utils/data/dataloader.py
    return f"{short}:{frame.group(2)} ({frame.group(3)})"


# a counter before a script's "training completed" makes it a per-epoch (per-step …) message
_PER_UNIT = lazy_re(r"(?i)\b(?:epoch|step|iter(?:ation)?|batch|stage|phase|round|fold)\s*[\[#:]?\s*\d+")
_ANY_GATE = lazy_re("|".join(sorted({re.escape(g) for gates, *_ in _MARKERS for g in gates}, key=len, reverse=True)))


def _scan(bundle: Bundle) -> List[Finding]:
    out: List[Finding] = []
    last: Dict[Tuple[str, str, str], Finding] = {}  # one marker per (file, outcome, who): its last line
    task_failed = set()  # files in which srun reported a failed task
    lsf_marks: List[Finding] = []
    output_follows: Dict[str, int] = {}  # LSF's "The output (if any) follows:": the job's output comes after
    lines = list(bundle.all_lines())
    for order, line in enumerate(lines):
        text = line.text
        if not text or len(text) > 4000:
            continue
        if "srun: error:" in text and _SRUN_TASK_FAILED.search(text):
            task_failed.add(line.path)
            continue
        if text.startswith("The output (if any) follows:"):
            output_follows[line.path] = order
            continue
        if _ANY_GATE.search(text) is None:
            continue  # none of the markers' literals: no marker can match (one search instead of one per marker)
        for gates, rx, outcome, who, read in _MARKERS:
            if not any(g in text for g in gates):
                continue
            m = rx.search(text)
            if m is None:
                continue
            if who == "log" and _PER_UNIT.search(text[:m.start()]):
                continue  # "Epoch 0 training completed": one epoch's end, not the run's
            by, progress = read(m) if read else (who, {})
            if by == "cancelled" and line.path in task_failed and "TERM_" not in text:
                break  # not somebody stopping the run: the step failed
            key = (line.path, outcome, by)
            f = last.get(key)
            if f is None:
                f = Finding(id=f"outcome.{outcome}", kind="outcome", role="context", label=DIRECT, confidence=0.9,
                            claim=_claim(outcome, by), evidence=[line.source()], order=float(order),
                            outcome=outcome, outcome_by=by, progress=dict(progress))
                last[key] = f
                out.append(f)
            else:  # the last occurrence is where the run ended; keep the first as context
                f.evidence = [line.source(), f.evidence[-1]]
                f.order = float(order)
                f.progress.update(progress)
            if "TERM_" in text or text.startswith("Successfully completed"):
                lsf_marks.append(f)
            where = _stopped_in(lines, order) if by == "user" else None
            if where:
                f.claim = f"{_claim(outcome, by)} while it was in {where}"
            break  # one marker per line
    for f in lsf_marks:  # the job report sits above the job's output: it happened after all of it
        if output_follows.get(f.evidence[0].path, -1) > (f.order or 0):
            f.progress["at_end"] = True
    return out


_CLAIMS = {
    "user": "the user stopped the run (Ctrl-C / SIGINT)",
    "time-limit": "the scheduler stopped the run at its time limit",
    "preemption": "the scheduler preempted the run",
    "cancelled": "the job was cancelled (scancel / bkill / an administrator)",
    "requeue": "the scheduler requeued the job",
    "node-failure": "the scheduler stopped the run because a node failed",
    "node-shutdown": "the node shut down under the run (a spot / preemptible node reclaimed, or maintenance)",
    "eviction": "Kubernetes evicted the pod (the node ran low on a resource)",
    "signal": "the run received a termination signal from outside (SIGTERM: a scheduler, a launcher or kill)",
    "hangup": "the run received SIGHUP (its terminal or ssh session closed)",
}


def _claim(outcome: str, by: str) -> str:
    if outcome == "completed":
        return "the run reached the end of training" + ("" if by == "log" else f" ({by})")
    if outcome == "running":
        return "a live process holds the run's files open"
    return _CLAIMS.get(by, "the run was stopped from outside")


def _running(bundle: Bundle) -> List[Finding]:
    live = (bundle.probes or {}).get("live")
    if not isinstance(live, dict) or not live.get("path"):
        return []
    age = live.get("age_s")
    text = f"pid {live.get('pid')} has {live['path']} open; last written {age} s ago"
    if live.get("cmd"):
        text += f" (command: {live['cmd'][:120]})"
    state = "progressing" if live.get("progressing") else "stuck"
    claim = (f"process {live.get('pid')} is alive and still writing {live['path']} ({age} s ago)" if state ==
             "progressing" else f"process {live.get('pid')} is alive but has not written {live['path']} for {age} s")
    return [Finding(id="outcome.running", kind="outcome", role="context", label=DIRECT, confidence=0.9, claim=claim,
                    evidence=[Source(live["path"], None, text)], outcome="running", outcome_by=state)]


def detect(bundle: Bundle) -> List[Finding]:
    marks = _scan(bundle)
    stops = [m for m in marks if m.outcome == "interrupted" and m.outcome_by not in ("user", "hangup")]
    return marks + progress_markers(bundle) + _running(bundle) + silent_before_stop(bundle, stops)
