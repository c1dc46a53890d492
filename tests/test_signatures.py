"""The catalog detector on small real-looking logs: what a user would notice in the findings."""
from __future__ import annotations

import glob
import json
import os
import time

import pytest

from trainwreck.analyze import signatures
from trainwreck.analyze.signatures import detect, parse_rank
from trainwreck.collect.bundle import Bundle
from trainwreck.model import DIRECT, Line, LogText

CORPUS = os.path.join(os.path.dirname(__file__), "corpus")


def bundle(*logs, extra=()):
    """Bundle from (path, [text, ...]) pairs; lines are numbered from 1."""
    texts = []
    for path, lines in logs:
        texts.append(LogText(path, 0, [Line(path, i + 1, t) for i, t in enumerate(lines)], True))
    return Bundle(root="/run", target="/run", logs=texts, extra_lines=list(extra))


def by_id(findings):
    return {f.id: f for f in findings}


OOM_LOG = [
    "{'loss': 1.2, 'grad_norm': 0.9, 'learning_rate': 2e-05, 'epoch': 0.01}",
    "  3%|▎         | 12/400 [00:31<16:40,  2.58s/it]Traceback (most recent call last):",
    '  File "/opt/train.py", line 219, in train',
    "    trainer.train()",
    "[rank3]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 4.00 GiB. GPU 3 has a total capacity of "
    "79.15 GiB of which 1.81 MiB is free. Including non-PyTorch memory, this process has 79.14 GiB memory in use. Of "
    "the allocated memory 74.10 GiB is allocated by PyTorch, and 3.52 GiB is reserved by PyTorch but unallocated. If "
    "reserved but unallocated memory is large try setting PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True to avoid "
    "fragmentation.",
    "E0101 12:00:00.000000 1234 torch/distributed/elastic/multiprocessing/api.py:869] failed (exitcode: 1) "
    "local_rank: 3 (pid: 1234) of binary: /usr/bin/python",
]


def test_cuda_oom_found_with_line_rank_and_details():
    f = by_id(detect(bundle(("train.log", OOM_LOG))))
    oom = f["cuda-oom"]
    assert oom.suggests == "OOM" and oom.role == "cause" and oom.label == DIRECT
    assert oom.evidence[0].path == "train.log" and oom.evidence[0].line == 5
    assert oom.rank == 3
    assert "tried to allocate 4.00 GiB on GPU 3" in oom.claim
    assert oom.signature == "cuda-oom" and oom.order == 4.0
    assert oom.verify_skill == "activation-recompute" and oom.fixes
    # the fragmentation hint is a factor, the launcher summary a terminal echo
    assert f["cuda-oom-fragmentation"].role == "factor" and "3.52 GiB" in f["cuda-oom-fragmentation"].claim
    assert f["torchrun-child-failed"].role == "terminal"
    assert f["torchrun-child-failed"].confidence < oom.confidence


def test_findings_come_in_log_order():
    fs = detect(bundle(("train.log", OOM_LOG)))
    assert [x.order for x in fs] == sorted(x.order for x in fs)


def test_fp16_overflow_below_min_count_is_not_a_nan():
    lines = ["Gradient overflow.  Skipping step, loss scaler 0 reducing loss scale to 32768.0",
             "step 10 loss 2.31", "Gradient overflow.  Skipping step, loss scaler 0 reducing loss scale to 16384.0",
             "step 20 loss 2.28"]
    f = by_id(detect(bundle(("train.log", lines))))
    ov = f["fp16-overflow-skipped-steps"]
    assert ov.suggests is None and ov.role == "context" and not ov.fixes
    assert "below the 10" in ov.claim
    assert "fp16-loss-scale-collapse" not in f
    assert not [x for x in f.values() if x.suggests == "NaN"]


def test_fp16_loss_scale_collapse_is_a_nan_cause():
    scales = [2.0 ** e for e in range(15, -4, -1)]
    lines = [f"Gradient overflow.  Skipping step, loss scaler 0 reducing loss scale to {s}" for s in scales]
    f = by_id(detect(bundle(("train.log", lines))))
    assert f["fp16-overflow-skipped-steps"].suggests == "NaN"
    collapse = f["fp16-loss-scale-collapse"]
    assert collapse.suggests == "NaN" and collapse.role == "cause"
    assert collapse.evidence[0].line == lines.index(
        "Gradient overflow.  Skipping step, loss scaler 0 reducing loss scale to 8.0") + 1
    assert "times" in collapse.claim


def test_deepspeed_minimum_loss_scale():
    lines = [
        "[2023-06-07 22:24:46,260] [INFO] [loss_scaler.py:181:update_scale] [deepspeed] OVERFLOW! Rank 0 Skipping "
        "step. Attempted loss scale: 2, reducing to 1",
        "Exception: Current loss scale already at minimum - cannot decrease scale anymore. Exiting run.",
    ]
    f = by_id(detect(bundle(("train.log", lines))))
    assert f["loss-scale-at-minimum"].suggests == "NaN"
    assert f["loss-scale-at-minimum"].evidence[0].line == 2
    assert f["fp16-loss-scale-collapse"].rank == 0


def test_nccl_watchdog_on_many_ranks_is_one_terminal_stall():
    tmpl = ("[rank{r}]:[E321 02:07:08.408271257 ProcessGroupNCCL.cpp:607] [Rank {r}] Watchdog caught collective "
            "operation timeout: WorkNCCL(SeqNum=1580, OpType=ALLREDUCE, NumelIn=466119168, NumelOut=466119168, "
            "Timeout(ms)=600000) ran for 6000{r} milliseconds before timing out.")
    lines = ["step 1580 loss=1.9"] + [tmpl.format(r=r) for r in (4, 0, 1, 2, 3, 5, 6, 7)]
    f = by_id(detect(bundle(("train.log", lines))))
    wd = f["nccl-watchdog-timeout"]
    assert wd.suggests == "stall" and wd.role == "terminal"
    assert wd.rank == 4 and wd.evidence[0].line == 2
    assert "8 times, ranks 0\u20137" in wd.claim and "ALLREDUCE" in wd.claim
    assert len(wd.evidence) == 3 and len({e.line for e in wd.evidence}) == 3


def test_peer_crash_is_earlier_than_the_watchdog_timeouts():
    crash = ["[rank5]: RuntimeError: CUDA error: an illegal memory access was encountered"]
    wd = ["[rank0]:[E321 02:07:08.408271257 ProcessGroupNCCL.cpp:607] [Rank 0] Watchdog caught collective operation "
          "timeout: WorkNCCL(SeqNum=9, OpType=ALLREDUCE, NumelIn=1, NumelOut=1, Timeout(ms)=600000) ran for 600060 "
          "milliseconds before timing out."]
    f = by_id(detect(bundle(("rank5.log", crash), ("rank0.log", wd))))
    assert f["cuda-illegal-memory-access"].order < f["nccl-watchdog-timeout"].order
    assert f["cuda-illegal-memory-access"].rank == 5
    assert f["cuda-illegal-memory-access"].evidence[0].path == "rank5.log"


@pytest.mark.parametrize("line,rank", [
    ("[rank3]: torch.OutOfMemoryError: CUDA out of memory.", 3),
    ("[default3]:RuntimeError: CUDA error: out of memory", 3),
    ("[3]<stderr>: RuntimeError: CUDA error: out of memory", 3),
    ("[E ProcessGroupNCCL.cpp:737] [Rank 6] Watchdog caught collective operation timeout", 6),
    ("[PG 1 Rank 2] Exception (either an error or timeout) detected by watchdog at work: 1580", 2),
    ("[ERROR] 2024-05-21-11:57:54 (PID:927000, Device:3, RankID:7) ERR02200 DIST call hccl api failed.", 7),
    ("[deepspeed] OVERFLOW! Rank 0 Skipping step.", 0),
    ("12: slurmstepd: error: Detected 1 oom_kill event", 12),
    ("failed (exitcode: -9) local_rank: 0 (pid: 10398)", None),
    ("RuntimeError: CUDA error: out of memory", None),
])
def test_rank_parsing(line, rank):
    assert parse_rank(line) == rank


def test_heads_and_extra_lines_are_scanned_in_order():
    head = [Line("big.log", 1, "RuntimeError: CUDA error: device-side assert triggered")]
    tail = [Line("big.log", None, "OSError: [Errno 28] No space left on device", byte=10_000)]
    log = LogText("big.log", 20_000, tail, False, head=head)
    extra = [Line("error.json", 3, '"message": "ncclSystemError: System call (socket, malloc, munmap, etc) failed"')]
    b = Bundle(root="/run", target="/run", logs=[log], extra_lines=extra)
    f = by_id(detect(b))
    assert f["cuda-device-side-assert"].order == 0
    assert f["disk-full"].order == 1 and f["disk-full"].evidence[0].byte == 10_000
    assert f["nccl-system-error"].order == 2 and f["nccl-system-error"].evidence[0].path == "error.json"


def test_host_oom_killer_and_dataloader_worker_killed_suggest_oom():
    lines = ["RuntimeError: DataLoader worker (pid 19597) is killed by signal: Killed.",
             "[2059991.491542] Out of memory: Killed process 25315 (python3) total-vm:53312244kB, "
             "anon-rss:31451456kB, file-rss:74816kB"]
    f = by_id(detect(bundle(("train.log", lines))))
    assert f["dataloader-worker-killed"].suggests == "OOM"
    assert f["host-oom-killer"].suggests == "OOM"
    assert "python3" in f["host-oom-killer"].claim


def test_shm_bus_error_is_a_crash_not_oom():
    lines = ["ERROR: Unexpected bus error encountered in worker. This might be caused by insufficient shared memory "
             "(shm)", "RuntimeError: DataLoader worker (pid(s) 3216) exited unexpectedly"]
    f = by_id(detect(bundle(("train.log", lines))))
    assert f["dataloader-shm-bus-error"].suggests == "crash"
    assert f["dataloader-exited-unexpectedly"].role == "symptom"
    assert not [x for x in f.values() if x.suggests == "OOM"]


def test_ordinary_run_has_no_findings():
    lines = [f"step {i} loss={2.5 - i * 1e-4:.4f} lr=3.000e-04 grad_norm=0.8{i % 10}" for i in range(2000)]
    lines += ["[INFO] saving checkpoint to out/ckpt_2000.pt", " 50%|█████     | 1000/2000 [10:00<10:00, 1.66it/s]"]
    assert detect(bundle(("train.log", lines))) == []


def test_very_long_lines_are_cut_for_matching():
    line = "x" * (signatures.MAX_MATCH_CHARS * 4) + " RuntimeError: CUDA error: out of memory"
    assert detect(bundle(("train.log", [line]))) == []
    line = "RuntimeError: CUDA error: out of memory " + "x" * (signatures.MAX_MATCH_CHARS * 4)
    assert [x.id for x in detect(bundle(("train.log", [line])))] == ["cuda-error-oom"]


def test_speed_on_50k_ordinary_lines():
    lines = [f"step {i} loss={2.0 + (i % 97) / 100:.4f} lr={3e-4 * (1 - i / 50000):.3e} grad_norm={0.5 + (i % 13) / 10:.3f}"
             for i in range(50_000)]
    b = bundle(("train.log", lines))
    detect(b)  # load the catalog once
    t = time.perf_counter()
    assert detect(b) == []
    assert time.perf_counter() - t < 1.0  # about 0.03 s on a laptop; generous for slow CI


def _corpus_cases():
    for case in sorted(glob.glob(os.path.join(CORPUS, "*", "case.json"))):
        log = os.path.join(os.path.dirname(case), "train.log")
        if os.path.exists(log):
            yield case, log


def test_corpus_failures_with_messages_are_recognised():
    """Real logs whose failure prints a message (OOM, crash) get a signature of that classification."""
    total, hits, misses = 0, 0, []
    for case, log in _corpus_cases():
        with open(case, encoding="utf-8") as fh:
            expected = json.load(fh).get("classification")
        if expected not in ("OOM", "crash"):
            continue
        with open(log, encoding="utf-8", errors="replace") as fh:
            text = fh.read().splitlines()
        found = {f.suggests for f in detect(bundle(("train.log", text)))}
        total += 1
        if expected in found:
            hits += 1
        else:
            misses.append(os.path.basename(os.path.dirname(case)))
    if not total:
        pytest.skip("no corpus")
    assert hits / total >= 0.9, misses


def test_a_launcher_summary_is_marked_as_such_by_the_catalog_not_by_its_id():
    """The catalog says which entries are a launcher's report that a worker failed (`launcher_summary: true`);
    their findings carry kind "launcher-summary", so decide treats them as context, whatever the entry's id."""
    from trainwreck.catalog import load
    marked = {s.id for s in load() if s.launcher_summary}
    assert "torchrun-child-failed" in marked
    line = "ERROR:torch.distributed.elastic.multiprocessing.api:failed (exitcode: 1) local_rank: 0 (pid: 123) of binary: /usr/bin/python"
    got = [f for f in detect(bundle(("train.log", ["x", line]))) if f.signature == "torchrun-child-failed"]
    assert got and all(f.kind == "launcher-summary" for f in got)
