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


def _put(path, age, text="step 1 loss=2.3\n"):
    """A file `age` seconds old, in a folder dated like it (when it was populated)."""
    t = time.time() - age
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write(text)
    os.utime(path, (t, t))
    os.utime(os.path.dirname(path), (t, t))


def _named(cwd, prompt="my loss is NaN"):
    return json.loads(_ctx(prompt, cwd))["hookSpecificOutput"]["additionalContext"]


def test_names_the_newest_run_directory(tmp_path):
    _put(tmp_path / "runs" / "exp1" / "train.log", 500)
    _put(tmp_path / "lightning_logs" / "version_3" / "metrics.csv", 300)
    _put(tmp_path / "outputs" / "2026-11-01" / "10-00-00" / "train.log", 100)
    assert "/trainwreck:diagnose outputs/2026-11-01/10-00-00 (the newest run directory here)" in _named(tmp_path)
    _put(tmp_path / "runs" / "exp2" / "train.log", 0)
    assert "/trainwreck:diagnose runs/exp2 (the newest run directory here)" in _named(tmp_path)


def test_a_run_still_writing_is_newer_than_its_folder(tmp_path):
    _put(tmp_path / "lightning_logs" / "version_1" / "metrics.csv", 3600)
    _put(tmp_path / "lightning_logs" / "version_0" / "hparams.yaml", 7200)
    _put(tmp_path / "lightning_logs" / "version_0" / "metrics.csv", 10)  # appended since
    os.utime(tmp_path / "lightning_logs" / "version_0", (time.time() - 7200,) * 2)
    assert "/trainwreck:diagnose lightning_logs/version_0 " in _named(tmp_path)


def test_a_root_log_does_not_make_the_project_the_run(tmp_path):
    _put(tmp_path / "nohup.out", 3600)
    _put(tmp_path / "runs" / "exp1" / "train.log", 60)
    assert "/trainwreck:diagnose runs/exp1 (the newest run directory here)" in _named(tmp_path)
    _put(tmp_path / "nohup.out", 0)  # now the root log is the newest evidence: that one file is named
    assert "/trainwreck:diagnose nohup.out (the newest evidence here, a log file)" in _named(tmp_path)


def test_the_current_directory_as_the_run(tmp_path):
    _put(tmp_path / "metrics.jsonl", 60, '{"step": 1, "loss": 2.3}\n')
    _put(tmp_path / "lightning_logs" / "version_0" / "metrics.csv", 0)  # part of this run
    assert "/trainwreck:diagnose . (the current directory is the run)" in _named(tmp_path)


def test_wandb_latest_run(tmp_path):
    target = tmp_path / "wandb" / "run-20261101_100000-abc"
    _put(target / "run-abc.wandb", 0, "")
    _put(tmp_path / "wandb" / "run-20261031_100000-old" / "run-old.wandb", 86400, "")
    os.symlink(target, tmp_path / "wandb" / "latest-run")
    assert "/trainwreck:diagnose wandb/latest-run (the newest run directory here)" in _named(tmp_path, "training hangs")


def test_a_path_with_spaces_is_quoted(tmp_path):
    _put(tmp_path / "runs" / "my exp" / "train.log", 0)
    assert '/trainwreck:diagnose "runs/my exp" (' in _named(tmp_path)


def test_a_secret_in_the_run_path_is_not_named(tmp_path):
    key = "".join(chr(97 + (i * 7) % 6) + str(i % 10) for i in range(20))  # 40 hex characters, built here
    _put(tmp_path / "multirun" / "2026-11-01" / "10-00-00" / f"0_lr=0.1,wandb.api_key={key}" / "train.log", 0)
    line = _named(tmp_path)
    assert key not in line and "/trainwreck:diagnose with no argument (the newest run here" in line


def test_no_run_directory_still_points_to_diagnose(tmp_path):
    _put(tmp_path / "src" / "model.py", 0)
    line = _named(tmp_path, "CUDA out of memory at step 10")
    assert "/trainwreck:diagnose <run dir or log file> and cite" in line


def test_listing_is_bounded(tmp_path):
    runs = tmp_path / "runs"
    runs.mkdir()
    old = time.time() - 86400
    for i in range(3000):
        (runs / ("r%05d" % i)).mkdir()
        (runs / ("r%05d" % i) / "train.log").write_text("step 1 loss=2.3\n")
        os.utime(runs / ("r%05d" % i) / "train.log", (old + i, old + i))
        os.utime(runs / ("r%05d" % i), (old + i, old + i))
    _put(runs / "r01234" / "train.log", 0)  # the run that is still writing
    p = tmp_path / "outputs"
    for _ in range(50):  # a deep chain is never walked: only outputs/*/* is a Hydra run
        p = p / "d"
    _put(p / "train.log", 0)
    t0 = time.perf_counter()
    line = _named(tmp_path, "loss is NaN")
    assert time.perf_counter() - t0 < 3
    assert "/trainwreck:diagnose runs/r01234 (the newest run directory here)" in line


def test_without_the_engine_it_prints_nothing(tmp_path):
    import shutil
    import subprocess
    import sys
    hooks = tmp_path / "plugin" / "hooks"
    hooks.mkdir(parents=True)
    shutil.copy(os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))),
                             "hooks", "prompt_router.py"), hooks)
    _put(tmp_path / "runs" / "exp1" / "train.log", 0)
    payload = json.dumps({"prompt": "my loss is NaN", "cwd": str(tmp_path)})
    p = subprocess.run([sys.executable, "-S", "-E", str(hooks / "prompt_router.py")], input=payload,
                       capture_output=True, text=True, timeout=60)
    assert (p.returncode, p.stdout, p.stderr) == (0, "", "")


@pytest.mark.parametrize("stdin", ["", "{bad", "[]", '{"prompt": 12}', '{"prompt": null}',
                                   '{"prompt": "loss is NaN", "cwd": 5}'])
def test_fail_open(stdin):
    rc, out, err = run_hook("UserPromptSubmit", stdin)
    assert rc == 0 and "Traceback" not in err
    if out:
        json.loads(out)
