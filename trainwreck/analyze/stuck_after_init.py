"""A job stuck right after distributed initialisation: the log's last words are the process-group setup.

Launchers and frameworks print a line when the process group forms (Lightning's "Initializing distributed:
GLOBAL_RANK: 0, MEMBER: 1/4", torch's store-based barrier, NCCL's "Init COMPLETE", DeepSpeed's and
Accelerate's backend lines). When the log ends a few lines after such a line, with no training step, no
metric and no error after it, the job stopped at initialisation: ranks that never met, or a first collective
that never completed. Whether it hangs or was killed from outside the log cannot say, so the finding is a
hypothesis.
"""
from __future__ import annotations

from typing import List, Optional

from trainwreck import lazy_re
from trainwreck.catalog import family_ref
from trainwreck.collect.bundle import Bundle
from trainwreck.model import HYPOTHESIS, Finding, Line

FINDING_ID = "log.stuck-after-init"

_INIT = lazy_re(r"(?i)Initializing distributed: GLOBAL_RANK: \d+, MEMBER: \d+/\d+|initializing ddp: GLOBAL_RANK: \d+, "
                r"MEMBER: \d+/\d+|All distributed processes registered\. Starting with \d+ processes|Completed "
                r"store-based barrier for key:store_based_barrier_key|Added key: store_based_barrier_key:\d+ to store "
                r"for rank|NCCL INFO .*Init COMPLETE|Initializing TorchBackend in DeepSpeed with backend|Distributed "
                r"environment: (?:MULTI_GPU|DEEPSPEED|FSDP|MULTI_NPU|MULTI_XPU)")
_PROGRESS = lazy_re(r"(?i)\b(?:step|iter(?:ation)?|epoch|loss|batch|train(?:ing)?)\b|it/s|s/it|\d+%\||\bval")
_TROUBLE = lazy_re(r"Traceback|Error|error:|Exception|Killed|FAILED|CANCELLED|Terminated|timed out|[Tt]imeout")
TAIL = 40  # the init line must be among the log's last TAIL non-blank lines
AFTER = 25  # at most this many (setup) lines after it


def _family() -> Optional[dict]:
    return family_ref("rendezvous-timeout")


def _stuck_at(lines: List[Line]) -> Optional[tuple]:
    tail = [x for x in lines if x.text.strip()][-TAIL:]
    last = max((i for i, x in enumerate(tail) if _INIT.search(x.text[:2000])), default=None)
    if last is None:
        return None
    after = tail[last + 1:]
    if len(after) > AFTER or any(_PROGRESS.search(x.text[:2000]) or _TROUBLE.search(x.text[:2000]) for x in after):
        return None
    return tail[last], len(after)


def detect(bundle: Bundle) -> List[Finding]:
    if any(len(s.points) > 1 for ss in bundle.series.values() for s in ss):
        return []  # metrics were logged: the run got past initialisation
    hits = []
    for log in bundle.logs:
        lines = log.head + log.lines
        if any(_PROGRESS.search(x.text[:2000]) and not _INIT.search(x.text[:2000]) and "Seed set" not in x.text
               for x in lines[-400:]):
            continue  # this log shows training (or data) progress: not stuck at init
        hit = _stuck_at(lines)
        if hit is not None:
            hits.append(hit)
    if not hits:
        return []
    line, n_after = hits[0]
    return [Finding(
        id=FINDING_ID, kind="", label=HYPOTHESIS, confidence=0.5,
        claim=(f"the log ends {n_after} line{'s' if n_after != 1 else ''} after distributed initialisation, with no "
               "training step, metric or error after it: the job stopped right after init (ranks that never met, "
               "or a first collective that never completed)"),
        evidence=[line.source()], suggests="stall", role="cause", stage="startup", family=_family(),
        meaning="A job whose output ends at process-group setup never reached its first step.",
        fixes=["check that every rank and node started and prints the same world size (MEMBER i/N, WORLD_SIZE, "
               "NODE_RANK); a rank that never started leaves the others waiting",
               "rerun with NCCL_DEBUG=INFO TORCH_DISTRIBUTED_DEBUG=DETAIL to see the last setup or collective step",
               "if it stops at the first collective, try NCCL_P2P_DISABLE=1 or NCCL_IB_DISABLE=1 and set "
               "NCCL_SOCKET_IFNAME to the interface that connects the nodes"],
        verify_skill="debug",
        verify_hint="py-spy dump --pid <pid>  # on every rank while it waits, plus NCCL_DEBUG=INFO on the next launch")]
