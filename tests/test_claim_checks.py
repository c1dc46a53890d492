"""No [DIRECT] claim that the evidence it cites contradicts (issue 9, "What was measured" pattern 6).

Each false claim the issue lists is reproduced as a run under tests/fixtures/claims/ (real message text, sources
in its README) and shown gone, next to its true counterpart, which stays DIRECT. The runs go through the whole
pipeline, as `trainwreck diagnose` runs them."""
import os

import pytest
from twtest import EXAMPLES, ROOT

from trainwreck.analyze import oom_arithmetic as oa
from trainwreck.analyze.knobs import knobs
from trainwreck.analyze.run_setup import optimizer, precision
from trainwreck.analyze.trajectory_schedule import lr_anomalies
from trainwreck.collect.bundle import Bundle
from trainwreck.decide.fixes import rank_fixes
from trainwreck.model import ConfigEntry, Finding, Line, LogText, Point, Source
from trainwreck.pipeline import diagnose

FIX = os.path.join(ROOT, "tests", "fixtures", "claims")


def _run(name):
    path = os.path.join(EXAMPLES, name[len("example:"):]) if name.startswith("example:") else os.path.join(FIX, name)
    res = diagnose(path, probe=False)
    return res.diagnosis.to_json(), res.bundle


def _claims(d):
    """(label, text, id) of every claim anywhere in the report: causes, factors, precursors, trajectories."""
    out = []

    def walk(x):
        if isinstance(x, dict):
            text = x.get("summary") if isinstance(x.get("summary"), str) else x.get("claim")
            if isinstance(text, str) and x.get("label"):
                out.append((x["label"], text, x.get("id") or x.get("signature")))
            for v in x.values():
                walk(v)
        elif isinstance(x, list):
            for v in x:
                walk(v)
    walk(d)
    return out


def _direct(d, words):
    return [t for label, t, _ in _claims(d) if label == "DIRECT" and words.lower() in t.lower()]


def _fixes(d):
    return [f["fix"] for f in d["fix_candidates"]]


def _factor_ids(d):
    return [c.get("id") for c in d["contributing_factors"]]


# ---- OOM arithmetic: which process holds the memory --------------------------------------------------------------
@pytest.mark.parametrize("run", ["gpu-oom-bf16-container", "example:oom-cuda"])
def test_the_trainer_listed_by_its_container_pid_is_not_another_process(run):
    """'Process 2722 has 22.22 GiB' while PyTorch itself holds 20.13 + 1.75 GiB: that process is the trainer."""
    d, _ = _run(run)
    assert d["classification"] == "OOM"
    assert not _direct(d, "another process holds")
    assert any("is the trainer itself" in t for _, t, _ in _claims(d))
    assert not any("nvidia-smi" in f for f in _fixes(d))


def test_another_process_stays_direct_when_the_numbers_show_it():
    d, _ = _run("gpu-oom-fp32-other-process")  # "Process 43872 has 4.97 GiB" next to "this process has 17.05 GiB"
    assert _direct(d, "another process holds GPU memory (process 43872 holds 4.97 GiB)")
    assert any("nvidia-smi" in f for f in _fixes(d))


def test_of_two_processes_the_one_pytorch_does_not_account_for_is_the_other_one():
    d, _ = _run("gpu-oom-two-processes")  # 247516: 50.52 GiB; 477367: 28.19 GiB ≈ PyTorch's 27.48 GiB
    got = _direct(d, "another process holds")
    assert got and "247516" in got[0] and "477367" not in got[0]


def test_a_single_process_far_above_pytorchs_memory_is_not_called_either_way():
    # vllm-project/vllm#27508: "Process 3270336 has 78.96 GiB" and PyTorch holds 68.83 + 0.33 GiB of a 79.11 GiB card:
    # the card cannot hold that process and a separate 69 GiB trainer, so it is the trainer
    n = oa.parse("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 786.00 MiB. GPU 0 has a total capacity "
                 "of 79.11 GiB of which 140.75 MiB is free. Process 3270336 has 78.96 GiB memory in use. Of the "
                 "allocated memory 68.83 GiB is allocated by PyTorch, with 660.00 MiB allocated in private pools "
                 "(e.g., CUDA Graphs), and 331.08 MiB is reserved by PyTorch but unallocated.")
    assert oa.trainer_pid(n) == "3270336" and oa.other_processes(n)[0] == oa.CONTRADICTED
    n.allocated, n.unallocated, n.total = 39 << 30, 1 << 30, 100 << 30  # 40 + 78.96 GiB do not fit in 100 GiB
    assert oa.trainer_pid(n) == "3270336"
    n.total = 200 << 30  # on a 200 GiB card they would: the 78.96 GiB process may be the trainer or another one
    assert oa.trainer_pid(n) is None and oa.other_processes(n)[0] == oa.HYPOTHESIS_ONLY


# ---- OOM arithmetic: fragmentation ---------------------------------------------------------------------------------
@pytest.mark.parametrize("run", ["gpu-oom-bf16-container", "gpu-oom-fragmentation-short", "example:oom-cuda"])
def test_no_fragmentation_when_reserved_plus_free_is_less_than_the_request(run):
    d, _ = _run(run)
    assert not _direct(d, "GPU memory fragmentation")
    assert any(t.startswith("not fragmentation") for _, t, _ in _claims(d))
    assert not any("expandable_segments" in f or "max_split_size" in f for f in _fixes(d))
    meanings = [c.get("meaning", "") for c in d["causes"] + d["contributing_factors"]]
    assert not any("fragmentation rather than raw demand" in m for m in meanings)  # nor in what it "means"


@pytest.mark.parametrize("run", ["gpu-oom-fragmentation-real", "gpu-oom-fp32-other-process"])
def test_fragmentation_stays_direct_when_reserved_unallocated_covers_the_request(run):
    d, _ = _run(run)  # 4.84 GiB unallocated vs a 3.00 GiB request (20 % of the card); 1.07 GiB vs 238 MiB (4.9 %)
    assert _direct(d, "GPU memory fragmentation")
    assert any("expandable_segments" in f for f in _fixes(d))


def test_fragmentation_at_a_sliver_of_the_card_is_only_a_hypothesis():
    # pytorch/pytorch#16417: 194.87 MiB reserved but unallocated covers a 22 MiB request, but it is 0.8 % of the card
    n = oa.parse("torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 22.00 MiB. GPU 0 has a total "
                 "capacity of 23.65 GiB of which 11.06 MiB is free. Including non-PyTorch memory, this process has "
                 "23.60 GiB memory in use. Of the allocated memory 22.90 GiB is allocated by PyTorch, and 194.87 MiB "
                 "is reserved by PyTorch but unallocated.")
    assert oa.fragmentation(n)[0] == oa.HYPOTHESIS_ONLY
    n.unallocated = int(n.total * 0.05)  # the same request with 5 % of the card held in cached blocks
    assert oa.fragmentation(n)[0] == oa.DIRECT_OK


def test_allocator_advice_goes_when_the_numbers_rule_fragmentation_out():
    d, _ = _run("hip-oom-small-cache")  # 75.82 MiB reserved-unallocated + 780.24 MiB free < the 3.31 GiB request
    assert d["classification"] == "OOM" and not any("expandable_segments" in f for f in _fixes(d))
    d, _ = _run("npu-oom-fragmented")  # 57.55 GiB reserved − 49.47 GiB allocated = 8.08 GiB > the 5.03 GiB request
    assert any("PYTORCH_NPU_ALLOC_CONF=expandable_segments" in f for f in _fixes(d))


def test_older_and_npu_spellings_give_the_same_numbers():
    old = oa.parse("RuntimeError: CUDA out of memory. Tried to allocate 1.69 GiB (GPU 0; 14.56 GiB total capacity; "
                   "649.97 MiB already allocated; 1.31 GiB free; 1.01 GiB reserved in total by PyTorch)")
    assert old.total == int(14.56 * 2 ** 30) and old.free == int(1.31 * 2 ** 30)
    assert old.unallocated == int(1.01 * 2 ** 30) - int(649.97 * 2 ** 20)  # reserved − allocated
    npu = oa.parse("RuntimeError: NPU out of memory. Tried to allocate 5.03 GiB (NPU 3; 60.96 GiB total capacity; "
                   "49.47 GiB already allocated; 49.47 GiB current active; 1.32 GiB free; 57.55 GiB reserved in "
                   "total by PyTorch)")
    assert npu.request == int(5.03 * 2 ** 30) and npu.unallocated == int(57.55 * 2 ** 30) - int(49.47 * 2 ** 30)
    assert oa.fragmentation(npu)[0] == oa.DIRECT_OK


# ---- a setting is a cause only when its mechanism fits the failure -------------------------------------------------
@pytest.mark.parametrize("run", ["gpu-oom-bf16-container", "gpu-oom-fp32-other-process", "gpu-oom-two-processes"])
def test_dataloader_workers_are_never_a_cause_of_a_gpu_oom(run):
    d, _ = _run(run)
    assert "config.many-workers" not in _factor_ids(d)
    assert not any("num_workers" in f for f in _fixes(d))
    assert "config.batch-size" in _factor_ids(d)  # batch size is GPU memory: it stays


@pytest.mark.parametrize("run", ["host-oom-workers", "shm-bus-error-workers"])
def test_dataloader_workers_are_cited_for_host_and_shared_memory_failures(run):
    d, _ = _run(run)
    assert _direct(d, "num_workers: 16 DataLoader workers")
    assert any("num_workers: 8" in f for f in _fixes(d))
    assert "config.batch-size" not in _factor_ids(d)  # per-device batch size is GPU memory, not this failure


# ---- precision advice only where the run does not already use it ---------------------------------------------------
def test_no_mixed_precision_advice_when_the_config_says_bf16_mixed():
    d, _ = _run("gpu-oom-bf16-container")
    assert not any("mixed precision" in f.lower() for f in _fixes(d))
    assert any(f.startswith("ZeRO/FSDP sharding") for f in _fixes(d))  # the other alternative of that fix stays


def test_mixed_precision_advice_stays_when_the_config_says_fp32():
    d, _ = _run("gpu-oom-fp32-other-process")
    assert any("bf16/fp16 mixed precision" in f for f in _fixes(d))


def _bundle(lines=(), configs=None, series=None, facts=None):
    b = Bundle(root="/nonexistent", target="run", facts=dict(facts or {}))
    b.logs = [LogText("train.log", 1, [Line("train.log", i + 1, t) for i, t in enumerate(lines)], True)]
    for path, kv in (configs or {}).items():
        b.configs[path] = [ConfigEntry(k, v, i + 1, path, f"{k}: {v}") for i, (k, v) in enumerate(kv)]
    for name, path, head in series or []:
        b.add_point(name, path, Point(1, 1.0, Source(path, 2, head, step=1, metric=name, value=1.0)))
    return b


@pytest.mark.parametrize("lines,configs,want", [
    (["Using bfloat16 Automatic Mixed Precision (AMP)"], None, "bf16"),
    (["torchrun --nproc_per_node 8 train.py --bf16 --optim adamw_torch"], None, "bf16"),
    (['  "bf16": {"enabled": true},'], None, "bf16"),
    (["[INFO] [config.py:1003:print]   fp16_enabled ................. True"], None, "fp16"),
    (["Namespace(bf16=False, fp16=False, lr=0.0003)"], None, None),
    (["Namespace(use_amp=True, lr=0.0003)"], None, "mixed"),
    ([], {"config.yaml": [("model.torch_dtype", "bfloat16")]}, "bf16"),
    ([], {"config.yaml": [("trainer.precision", "16-mixed")]}, "fp16"),
    ([], {"config.yaml": [("training.fp16", "false"), ("training.bf16", "false")]}, "fp32"),
    ([], {"config.yaml": [("training.fp16", "false"), ("training.bf16", "true")]}, "bf16"),
])
def test_precision_is_read_from_config_arguments_and_log_lines(lines, configs, want):
    got = precision(_bundle(lines, configs))
    assert (got[0] if got else None) == want


def test_a_logged_loss_scale_shows_fp16_amp():
    got = precision(_bundle(series=[("loss_scale", "metrics.jsonl", '{"step": 1, "loss_scale": 65536}')]))
    assert got and got[0] == "fp16"


# ---- optimizer-specific advice only for the optimizer the run uses -------------------------------------------------
def test_no_adam_advice_on_an_sgd_run_named_only_by_its_lr_column():
    d, b = _run("sgd-lr-nan")  # hparams: lr 0.1, momentum 0.9; metrics.csv column "lr-SGD"
    assert optimizer(b)[0] == "sgd"
    assert not any("adam" in t.lower() for _, t, _ in _claims(d))


def test_adam_advice_stays_on_an_adamw_run():
    d, _ = _run("adamw-lr-nan")
    assert any(label == "HYPOTHESIS" and "lr 0.01 is high for an Adam-type optimizer" in t
               for label, t, _ in _claims(d))


@pytest.mark.parametrize("lines,configs,want", [
    (["AdamW (", "Parameter Group 0", "    amsgrad: False"], None, "adam"),
    (["SGD (", "Parameter Group 0", "    momentum: 0.9"], None, "sgd"),
    (["optimizer: SGD(lr=0.01, momentum=0.937) with parameter groups 57 weight(decay=0.0)"], None, "sgd"),
    (["optim=OptimizerNames.ADAMW_TORCH,"], None, "adam"),
    ([], {"config.yaml": [("optimizer._target_", "torch.optim.SGD"), ("optimizer.lr", "0.1")]}, "sgd"),
    ([], {"config.yaml": [("optimizer.momentum", "0.9")]}, "sgd"),
    ([], {"config.yaml": [("optimizer.betas", "[0.9, 0.999]"), ("optimizer.momentum", "0.9")]}, None),
    ([], {"config.yaml": [("model.bn.momentum", "0.1")]}, None),
    (["step 10 loss 2.3"], {"config.yaml": [("lr", "0.01")]}, None),
])
def test_optimizer_is_read_from_config_log_lines_and_never_assumed(lines, configs, want):
    got = optimizer(_bundle(lines, configs))
    assert (got[0] if got else None) == want


@pytest.mark.parametrize("header,want", [("epoch,lr-SGD,step,train_loss", "sgd"),
                                         ("epoch,lr-AdamW/pg1,step,train_loss", "adam"), ("epoch,lr,step", None)])
def test_the_lr_column_name_shows_the_optimizer(header, want):
    b = _bundle(facts={"metric_names:metrics.csv": Source("metrics.csv", 1, header)})
    got = optimizer(b)
    assert (got[0] if got else None) == want


def test_an_unknown_optimizer_is_not_called_adam():
    b = _bundle(["step 10 loss nan"], {"config.yaml": [("lr", "0.01")]})
    from trainwreck.analyze.config_checks import detect
    assert not [f for f in detect(b) if f.id == "config.high-lr"]


# ---- "peak" is the series maximum ----------------------------------------------------------------------------------
def test_no_peak_while_the_lr_keeps_rising():
    d, _ = _run("nan-during-warmup")  # NaN at step 1100 at lr 1.1e-5, the warmup goes on to 2e-5
    assert not any("reached its peak" in t for _, t, _ in _claims(d))
    assert not d["precursors"]
    assert any(label == "HYPOTHESIS" and "still rising" in t for label, t, _ in _claims(d))


def test_the_peak_stays_when_it_is_the_series_maximum():
    d, _ = _run("nan-at-peak")  # warmup to 2e-5 at step 1000, NaN at 1010, then the lr decays
    assert _direct(d, "lr reached its peak 2e-5 at step 1000")


def test_a_first_lr_below_the_maximum_is_not_called_the_peak():
    pts = [Point(s, v, Source("m.jsonl", i + 1, "", step=s, metric="lr", value=v))
           for i, (s, v) in enumerate([(1, 0.95e-3), (10, 1e-3), (20, 1e-3), (30, 1e-3)])]
    got = [f.claim for f in lr_anomalies(pts, unstable=True) if "warmup" in f.claim]
    assert got and "at its peak" not in got[0] and "95% of its maximum" in got[0]
    pts[0].value = 1e-3
    assert "at its peak 0.001 at step 1" in [f.claim for f in lr_anomalies(pts, unstable=True) if "warmup" in f.claim][0]


# ---- fixes de-duplicated by the knob they turn ---------------------------------------------------------------------
@pytest.mark.parametrize("run", ["gpu-oom-bf16-container", "example:oom-cuda", "host-oom-workers"])
def test_one_fix_per_knob(run):
    d, _ = _run(run)
    for knob in ("batch", "workers", "recompute"):
        assert sum(knob in knobs(f) for f in _fixes(d)) <= 1, (knob, _fixes(d))


def test_the_config_fix_wins_over_the_generic_one_and_a_fix_that_says_more_stays():
    factor = Finding("config.batch-size", "batch_size: 64 per device", evidence=[Source("config.yaml", 4, "")],
                     role="factor", fixes=["data.batch_size: 32 with gradient accumulation doubled"])
    primary = Finding("cuda-oom", "CUDA out of memory", evidence=[Source("train.log", 9, "")],
                      fixes=["halve the micro-batch size and double gradient accumulation steps",
                             "reduce DataLoader workers", "reduce host memory: fewer DataLoader workers, mmap "
                             "checkpoints, stream the dataset", "use bf16 instead of fp16, or reduce the batch size"])
    got = [f["fix"] for f in rank_fixes(primary, [primary], [factor])]
    assert got == ["data.batch_size: 32 with gradient accumulation doubled", "reduce DataLoader workers",
                   "reduce host memory: fewer DataLoader workers, mmap checkpoints, stream the dataset",
                   "use bf16 instead of fp16"]


def test_workers_are_no_cause_of_a_data_bug_raised_inside_a_worker():
    """An exception raised in a worker is the dataset's bug (pytorch's "Caught KeyError in DataLoader worker
    process 0"): more or fewer workers change nothing, unlike a worker killed for memory."""
    from trainwreck.analyze.claim_checks import check

    def run(text, sig):
        crash = Finding(sig, sig, signature=sig, suggests="crash", role="cause", evidence=[Source("train.log", 9, text)])
        workers = Finding("config.many-workers", "num_workers: 16 DataLoader workers", role="factor",
                          relevant=["OOM", "crash"], evidence=[Source("config.yaml", 3, "num_workers: 16")])
        return [f.id for f in check(_bundle(), [crash, workers])]

    assert "config.many-workers" not in run("RuntimeError: Caught KeyError in DataLoader worker process 0.",
                                            "dataloader-worker-exception")
    assert "config.many-workers" in run("RuntimeError: DataLoader worker (pid 19597) is killed by signal: Killed.",
                                        "dataloader-worker-killed")


def test_when_the_checks_fail_no_claim_stays_direct(monkeypatch):
    from trainwreck.analyze import claim_checks

    def broken(bundle, findings):
        raise RuntimeError("broken check")
    monkeypatch.setattr(claim_checks, "check", broken)
    res = diagnose(os.path.join(FIX, "gpu-oom-bf16-container"), probe=False)
    assert res.diagnosis.classification == "OOM"
    assert {f.label for f in res.findings} == {"HYPOTHESIS"}
    assert any("claim checks failed" in n for n in res.diagnosis.notes)
