"""The UserPromptSubmit router, run through the hooks.json command."""
import json
import os
import time

import pytest
from hookrun import run_hook

POSITIVE = [
    "my loss is NaN at step 400, any idea why?",
    "why is my loss NaN? the run is in runs/exp1",
    "training OOMs at step 1200 on 8xA100",
    "OOM at step 3k, batch size 32",
    "RuntimeError: CUDA out of memory. Tried to allocate 2.00 GiB",
    "gradients exploded after the warmup ended",
    "my training hangs after the first epoch",
    "the run is stuck at step 5000 and GPU util is 0%",
    "training stalled overnight, no error in the log",
    "loss is flat at 6.9 and not decreasing",
    "the loss isn't going down at all after 10k steps",
    "why did this crash?",
    "NCCL timeout on rank 3 after 30 minutes",
    "[rank0]:[E321 02:07:08] ProcessGroupNCCL.cpp:607 Watchdog caught collective operation timeout",
    "Traceback (most recent call last):\n  File \"train.py\", line 88\n    loss.backward()\n"
    "torch.OutOfMemoryError: CUDA out of memory.",
    "RuntimeError: CUDA error: device-side assert triggered",
    "deepspeed: Current loss scale already at minimum - cannot decrease scale anymore",
    "grad_norm is nan on every step of my fine-tune",
    "DataLoader worker (pid 1234) is killed by signal: Killed.",
    "the loss diverged around step 22k",
    "mi entrenamiento se cuelga después de la época 3",
    "训练卡住了，日志没有报错",
    "显存不足，batch size 已经是 1 了",
    "学習が止まった、lossがnanになる",
]
NEGATIVE = [
    "write a haiku about autumn",
    "how do I drop NaN rows in pandas?",
    "rename train_step to training_step",
    "add a --seed flag to train.py",
    "the CI job failed on the lint step",
    "why does git say my branch diverged?",
    "explain the difference between bf16 and fp16",
    "write a unit test for the tokenizer",
    "my React app crashes when I click save",
    "what's the weather like in Lisbon?",
    "/trainwreck:diagnose runs/exp1",
    "",
]


def _ctx(prompt, cwd):
    rc, out, err = run_hook("UserPromptSubmit", {"session_id": "s", "transcript_path": "/nonexistent",
                                                 "cwd": str(cwd), "hook_event_name": "UserPromptSubmit",
                                                 "prompt": prompt})
    assert rc == 0, err
    return out


@pytest.mark.parametrize("prompt", POSITIVE)
def test_failure_prompts_get_one_line_of_context(tmp_path, prompt):
    out = _ctx(prompt, tmp_path)
    obj = json.loads(out)
    hso = obj["hookSpecificOutput"]
    assert hso["hookEventName"] == "UserPromptSubmit"
    assert "/trainwreck:diagnose" in hso["additionalContext"]
    assert "\n" not in hso["additionalContext"]


@pytest.mark.parametrize("prompt", NEGATIVE)
def test_other_prompts_get_nothing(tmp_path, prompt):
    assert _ctx(prompt, tmp_path) == ""


def _mk(path, mtime):
    os.makedirs(path, exist_ok=True)
    os.utime(path, (mtime, mtime))


def test_names_the_newest_run_directory(tmp_path):
    now = time.time()
    _mk(tmp_path / "runs" / "exp1", now - 500)
    _mk(tmp_path / "lightning_logs" / "version_3", now - 300)
    _mk(tmp_path / "outputs" / "2026-11-01" / "10-00-00", now - 100)
    _mk(tmp_path / "outputs" / "2026-11-01", now - 100)
    out = json.loads(_ctx("my loss is NaN", tmp_path))
    assert "outputs/2026-11-01/10-00-00" in out["hookSpecificOutput"]["additionalContext"]
    _mk(tmp_path / "runs" / "exp2", now)
    out = json.loads(_ctx("my loss is NaN", tmp_path))
    assert "runs/exp2" in out["hookSpecificOutput"]["additionalContext"]


def test_wandb_latest_run(tmp_path):
    target = tmp_path / "wandb" / "run-20261101_100000-abc"
    target.mkdir(parents=True)
    os.symlink(target, tmp_path / "wandb" / "latest-run")
    out = json.loads(_ctx("training hangs", tmp_path))
    assert "wandb/latest-run" in out["hookSpecificOutput"]["additionalContext"]


def test_no_run_directory_still_points_to_diagnose(tmp_path):
    out = json.loads(_ctx("CUDA out of memory at step 10", tmp_path))
    assert "/trainwreck:diagnose" in out["hookSpecificOutput"]["additionalContext"]


def test_listing_is_bounded(tmp_path):
    runs = tmp_path / "runs"
    runs.mkdir()
    for i in range(3000):
        (runs / ("r%05d" % i)).mkdir()
    deep = tmp_path / "outputs"
    p = deep
    for _ in range(50):
        p = p / "d"
    p.mkdir(parents=True)
    t0 = time.perf_counter()
    out = _ctx("loss is NaN", tmp_path)
    assert time.perf_counter() - t0 < 3
    assert "/trainwreck:diagnose" in out


@pytest.mark.parametrize("stdin", ["", "{bad", "[]", '{"prompt": 12}', '{"prompt": null}',
                                   '{"prompt": "loss is NaN", "cwd": 5}'])
def test_fail_open(stdin):
    rc, out, err = run_hook("UserPromptSubmit", stdin)
    assert rc == 0 and "Traceback" not in err
    if out:
        json.loads(out)
