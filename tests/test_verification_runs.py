"""The verification command of a diagnosis runs against the run it names (issue 9, "Runnable verification").

Each test builds a realistic run folder in a tmp dir (a Hydra run with .hydra/, an HF run with training_args.json,
a wandb offline run, a Slurm log with the torchrun command echoed by `set -x`, a bare log), diagnoses it, checks
the command with `bash -n`, and then executes it against a stub of the run's own script at the path the command
names. The stubs parse their arguments strictly — argparse with exactly the run's flags, or Hydra-style
`key=value` checked against the primary config (`+key` only for keys it lacks) — and exit 0 only when the command
is valid; they record what they received so the tests can assert on it. A fake `torch` records whether anomaly
detection / the memory summary were switched on; a fake `torchrun` parses torchrun's own options and runs the
script.

Log text: the CUDA OOM message is PyTorch's own (docs/source/notes/cuda.rst, "torch.OutOfMemoryError: CUDA out of
memory. Tried to allocate …", the same wording as examples/runs/oom-cuda/stderr.txt); the Hydra log line format is
Hydra's default job logging (`[%(asctime)s][%(name)s][%(levelname)s] - %(message)s`); the NCCL watchdog lines are
ProcessGroupNCCL.cpp's (as in examples/runs/stall-nccl); wandb-metadata.json has the fields wandb's
system-metadata writer sets (wandb/sdk/internal/meta.py: `args` = sys.argv[1:], `program`, `codePath`,
`codePathLocal`, `root`, `executable`, ...); wandb is not installed in the venv, so the file is written by hand.
"""
import json
import os
import re
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from trainwreck.pipeline import diagnose

ROOT = Path(__file__).resolve().parents[1]
CKPT = ROOT / "examples" / "runs" / "nan-fp16" / "checkpoints" / "step_300.pt"
# a stand-in for something the user would have to fill in (the test's own list, not the engine's)
PLACEHOLDER = re.compile(r"<[A-Za-z][^<>|]{0,40}>|\.\.\.|…|\bmodel\(|\bmydata\b|\bckpt\.pt\b")
WEIRD = "my proj $(touch pwned)"  # a folder name with a space and a command substitution

OOM = ("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 3.15 GiB. GPU 0 has a total capacity of "
       "39.56 GiB of which 6.80 GiB is free. Including non-PyTorch memory, this process has 36.61 GiB memory in use. "
       "Of the allocated memory 31.66 GiB is allocated by PyTorch, and 4.11 GiB is reserved by PyTorch but "
       "unallocated. If reserved but unallocated memory is large try setting "
       "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True to avoid fragmentation.  See documentation for Memory "
       "Management  (https://pytorch.org/docs/stable/notes/cuda.html#environment-variables)")

# ---------------------------------------------------------------------------------------------------- stubs

HYDRA_STUB = r'''
import json, os, re, sys
import yaml
import sibling_module  # a module next to the script, found as `python train.py` finds it
HERE = os.path.dirname(os.path.abspath(__file__))
cfg = yaml.safe_load(open(os.path.join(HERE, "conf", "config.yaml")))

def has(key):
    d = cfg
    for part in key.split("."):
        if not isinstance(d, dict) or part not in d:
            return False
        d = d[part]
    return True

errors, seen = [], {}
argv = sys.argv[1:]
if argv[:2] == ["--cfg", "job"]:
    argv = argv[2:]
for tok in argv:
    m = re.fullmatch(r"(\+\+|\+|~)?([A-Za-z_][\w.]*)=(.*)", tok, re.S)
    if not m:
        errors.append(f"not an override: {tok!r}")
        continue
    pre, key, val = m.groups()
    if val[:1] in "'\"":  # a quoted value: closed by the same quote
        if len(val) < 2 or val[-1] != val[0]:
            errors.append(f"unterminated quote in {tok!r}")
        val = val[1:-1].replace("\\'", "'").replace("\\\\", "\\")
    elif re.search(r"[()\[\]{},'\"=\s]", val):  # Hydra's grammar: these need quoting
        errors.append(f"mismatched input in {tok!r}")
    if key.startswith("hydra."):
        pass
    elif pre is None and not has(key):
        errors.append(f"Could not override '{key}'. To append to your config use +{key}={val}")
    elif pre == "+" and has(key):
        errors.append(f"Could not append to config. An item is already at '{key}'.")
    seen[key] = val
with open(os.environ["VERIFY_RECORD"], "a") as f:
    f.write(json.dumps({"script": os.path.abspath(__file__), "argv": sys.argv[1:], "set": seen,
                        "errors": errors, "env": {k: os.environ.get(k) for k in ("NCCL_DEBUG",
                                                                               "CUDA_LAUNCH_BLOCKING")}}) + "\n")
if errors:
    sys.exit("\n".join(errors))
'''

ARGPARSE_STUB = r'''
import argparse, json, os, sys
FLAGS = {flags!r}
p = argparse.ArgumentParser(allow_abbrev=False)
for flag in FLAGS:
    p.add_argument(flag)
args = p.parse_args()  # exits 2 on any flag the script does not have
with open(os.environ["VERIFY_RECORD"], "a") as f:
    f.write(json.dumps({{"script": os.path.abspath(__file__), "argv": sys.argv[1:], "set": vars(args),
                        "env": {{k: os.environ.get(k) for k in ("NCCL_DEBUG", "CUDA_LAUNCH_BLOCKING")}}}}) + "\n")
'''

FAKE_TORCH = r'''
import json, os
def _rec(**kw):
    with open(os.environ["VERIFY_RECORD"], "a") as f:
        f.write(json.dumps(kw) + "\n")
class autograd:
    @staticmethod
    def set_detect_anomaly(flag):
        _rec(anomaly=flag)
class cuda:
    @staticmethod
    def is_available():
        return True
    @staticmethod
    def memory_summary():
        _rec(memory_summary=True)
        return "|                  PyTorch CUDA memory summary, device ID 0                 |"
'''

FAKE_TORCHRUN = r'''
import argparse, os, sys
p = argparse.ArgumentParser(allow_abbrev=False)
for opt in ("--nproc_per_node", "--nproc-per-node", "--nnodes", "--node_rank", "--master_port", "--master_addr",
            "--rdzv_backend", "--rdzv_endpoint", "--redirects", "--tee", "--log-dir", "--log_dir"):
    p.add_argument(opt)
p.add_argument("--standalone", action="store_true")
p.add_argument("--no-python", "--no_python", dest="no_python", action="store_true")
p.add_argument("training_script")
p.add_argument("training_script_args", nargs=argparse.REMAINDER)
a = p.parse_args()
cmd = ([a.training_script] if a.no_python else [sys.executable, a.training_script]) + a.training_script_args
os.execvp(cmd[0], cmd)
'''


def stubs(tmp: Path) -> dict:
    """PATH with `python` and a fake `torchrun`, PYTHONPATH with a fake `torch`, and the record file."""
    bin_dir, site = tmp / "stub-bin", tmp / "stub-site" / "torch"
    bin_dir.mkdir(parents=True, exist_ok=True)
    site.mkdir(parents=True, exist_ok=True)
    (site / "__init__.py").write_text(FAKE_TORCH)
    (bin_dir / "python").write_text(f'#!/bin/sh\nexec {sys.executable} "$@"\n')
    (bin_dir / "torchrun").write_text(f"#!{sys.executable}\n" + FAKE_TORCHRUN)
    for f in bin_dir.iterdir():
        f.chmod(0o755)
    record = tmp / "record.jsonl"
    env = {"PATH": f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '/usr/bin:/bin')}",
           "PYTHONPATH": str(tmp / "stub-site"), "VERIFY_RECORD": str(record), "HOME": str(tmp),
           "TMPDIR": str(tmp)}
    return {"env": env, "record": record}


def verification(run: Path) -> dict:
    d = diagnose(str(run), probe=False).diagnosis.to_json()
    assert d["verification"]["command"], d["verification"]
    return d


def execute(cmd: str, tmp: Path, cwd: Path) -> list:
    """`bash -n`, then run it; returns what the stubs recorded. The command is run from a file, as pasted."""
    st = stubs(tmp)
    script = tmp / "verify.sh"
    script.write_text(cmd + "\n")
    syntax = subprocess.run(["bash", "-n", str(script)], capture_output=True, text=True)
    assert syntax.returncode == 0, syntax.stderr
    if st["record"].exists():
        st["record"].unlink()
    p = subprocess.run(["bash", str(script)], cwd=str(cwd), env=st["env"], capture_output=True, text=True,
                       timeout=60)
    assert p.returncode == 0, f"{cmd}\n--- stderr:\n{p.stderr}"
    assert not list(tmp.rglob("pwned")), "a path from the run was expanded by the shell"
    return [json.loads(x) for x in st["record"].read_text().splitlines()] if st["record"].exists() else []


def code_of(cmd: str) -> str:
    """The command without its trailing comment (`  # …`)."""
    return cmd.split("  # ", 1)[0]


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text).lstrip("\n"))
    return path


# ---------------------------------------------------------------------------------------------------- runs

HYDRA_PRIMARY = """
model:
  name: llama-1b
  seq_len: 2048
data:
  loader:
    batch_size: 32
    num_workers: 8
trainer:
  devices: 1
  precision: bf16-mixed
  max_epochs: 10
  {extra}
optim:
  lr: 3.0e-4
"""


def hydra_run(tmp: Path, failure: str, extra: str = "max_steps: 20000") -> tuple:
    """A Hydra project (the stub train.py and its primary config) in a folder whose name needs quoting, and one
    of its runs under outputs/ (.hydra/config.yaml composed with the `+tag=ablation` override)."""
    project = tmp / WEIRD
    write(project / "conf" / "config.yaml", HYDRA_PRIMARY.format(extra=extra))
    write(project / "train.py", HYDRA_STUB)
    write(project / "sibling_module.py", "")
    run = project / "outputs" / "2024-05-01" / "12-00-00"
    write(run / ".hydra" / "config.yaml", HYDRA_PRIMARY.format(extra=extra) + "tag: ablation\n")
    write(run / ".hydra" / "overrides.yaml", "- trainer.devices=1\n- +tag=ablation\n")
    write(run / ".hydra" / "hydra.yaml", f"""
        hydra:
          run:
            dir: outputs/${{now:%Y-%m-%d}}/${{now:%H-%M-%S}}
          job:
            name: train
            override_dirname: +tag=ablation,trainer.devices=1
          runtime:
            cwd: {project}
        """)
    write(run / "train.log", failure.format(project=project))
    return project, run


HYDRA_OOM_LOG = """
[2024-05-01 12:00:01,101][__main__][INFO] - model llama-1b, 1 device, bf16-mixed
[2024-05-01 12:00:09,412][__main__][INFO] - step 0 loss=10.8812
Error executing job with overrides: ['trainer.devices=1', '+tag=ablation']
Traceback (most recent call last):
  File "{project}/train.py", line 57, in <module>
    main()
  File "/opt/conda/lib/python3.11/site-packages/torch/autograd/graph.py", line 825, in _engine_run_backward
    return Variable._execution_engine.run_backward(  # Calls into the C++ engine to run the backward pass
""" + OOM + "\n"


def test_hydra_oom_sets_the_full_dotted_keys_and_runs(tmp_path):
    project, run = hydra_run(tmp_path, HYDRA_OOM_LOG)
    d = verification(run)
    assert d["classification"] == "OOM"
    cmd = d["verification"]["command"]
    assert "data.loader.batch_size=1" in cmd and "trainer.max_steps=1" in cmd
    assert not re.search(r"(?<![.\w])batch_size=", cmd)  # never the bare key the config does not have
    assert d["verification"]["launch"]["style"] == "hydra"
    rec = execute(cmd, tmp_path, tmp_path)
    script = next(r for r in rec if "script" in r)
    assert script["script"] == str(project / "train.py")  # the absolute, quoted path, not a relative train.py
    assert script["set"]["data.loader.batch_size"] == "1" and script["set"]["tag"] == "ablation"
    assert {"memory_summary": True} in rec  # the OOM probe prints the memory summary at exit


# Lightning's startup line as Hydra's job logging prints it (logger lightning.pytorch.utilities.rank_zero)
LIGHTNING_GPU = "[2024-05-01 12:00:00,001][lightning.pytorch.utilities.rank_zero][INFO] - GPU available: True (cuda), used: True"


def test_hydra_key_missing_from_the_config_gets_a_plus_and_the_checkpoint_is_absolute(tmp_path):
    lines = [LIGHTNING_GPU]
    lines += [f"[2024-05-01 12:{s // 10:02d}:00,000][train][INFO] - step {s} loss={10 - s / 100:.4f} grad_norm=1.2"
              for s in range(10, 400, 10)]
    lines += ["[2024-05-01 12:40:00,000][train][INFO] - step 400 loss=nan grad_norm=nan",
              "[2024-05-01 12:41:00,000][train][INFO] - step 410 loss=nan grad_norm=nan"]
    project, run = hydra_run(tmp_path, "\n".join(lines) + "\n", extra="gradient_clip_val: null")
    (run / "checkpoints").mkdir()
    shutil.copy(CKPT, run / "checkpoints" / "step_300.pt")
    d = verification(run)
    assert d["classification"] == "NaN"
    cmd = d["verification"]["command"]
    assert "+trainer.max_steps=" in cmd  # Lightning's Trainer takes it, the primary config lacks it
    assert "trainer.gradient_clip_val=1.0" in cmd and "+trainer.gradient_clip_val" not in cmd
    assert "optim.lr=0.00015" in cmd  # half the run's lr, through the key that holds it
    assert str(run / "checkpoints" / "step_300.pt") in cmd  # named with its absolute path (no resume key exists)
    assert " ckpt=" not in code_of(cmd)  # never a key the config does not have, without its `+`
    rec = execute(cmd, tmp_path, tmp_path)
    assert {"anomaly": True} in rec
    assert next(r for r in rec if "script" in r)["set"]["trainer.max_steps"].isdigit()


def nan_hydra_run_with_checkpoint(tmp):
    """A Hydra + Lightning run whose loss goes NaN at step 400, with checkpoints/step_300.pt: (project, run)."""
    lines = [LIGHTNING_GPU] + [f"[2024-05-01 12:00:00,000][train][INFO] - step {s} loss={9 - s / 100:.4f}"
                               for s in range(10, 400, 10)]
    lines += ["[2024-05-01 12:40:00,000][train][INFO] - step 400 loss=nan"] * 2
    project, run = hydra_run(tmp, "\n".join(lines) + "\n", extra="max_steps: 20000\n  ckpt_path: null")
    (run / "checkpoints").mkdir()
    shutil.copy(CKPT, run / "checkpoints" / "step_300.pt")
    return project, run


def test_hydra_value_from_the_run_is_quoted_for_hydra_and_for_the_shell(tmp_path):
    project, run = nan_hydra_run_with_checkpoint(tmp_path)
    cmd = verification(run)["verification"]["command"]
    ckpt = run / "checkpoints" / "step_300.pt"
    assert "trainer.ckpt_path=" in cmd and "+trainer.ckpt_path" not in cmd  # the key the config has
    rec = execute(cmd, tmp_path, tmp_path)
    got = next(r for r in rec if "script" in r)
    assert got["errors"] == [] and got["set"]["trainer.ckpt_path"] == str(ckpt)  # `(`, `)`, space survive both


TRAINING_ARGS = {
    "output_dir": "/workspace/out/llama-sft", "overwrite_output_dir": False, "do_train": True,
    "eval_strategy": "steps", "per_device_train_batch_size": 16, "per_device_eval_batch_size": 8,
    "gradient_accumulation_steps": 1, "learning_rate": 2e-05, "weight_decay": 0.0, "max_grad_norm": 1.0,
    "num_train_epochs": 3.0, "max_steps": -1, "lr_scheduler_type": "cosine", "warmup_ratio": 0.03,
    "logging_steps": 10, "save_strategy": "steps", "save_steps": 500, "seed": 42, "bf16": True, "fp16": False,
    "dataloader_num_workers": 4, "gradient_checkpointing": False, "report_to": ["wandb"],
    "resume_from_checkpoint": None,
}


def test_hf_run_uses_training_arguments_flags_on_the_script_of_the_traceback(tmp_path):
    workspace = tmp_path / "workspace"
    flags = [f"--{k}" for k in TRAINING_ARGS] + ["--model_name_or_path"]
    write(workspace / "finetune.py", ARGPARSE_STUB.format(flags=flags))
    run = tmp_path / "out" / "llama-sft"
    write(run / "training_args.json", json.dumps(TRAINING_ARGS, indent=2))
    stderr = (ROOT / "examples" / "runs" / "oom-cuda" / "stderr.txt").read_text()
    write(run / "stderr.txt", stderr.replace("/workspace/finetune.py", str(workspace / "finetune.py")))
    d = verification(run)
    assert d["classification"] == "OOM"
    cmd = d["verification"]["command"]
    assert "--per_device_train_batch_size 1" in cmd and "--max_steps 1" in cmd
    rec = execute(cmd, tmp_path, tmp_path)
    got = next(r for r in rec if "script" in r)
    assert got["script"] == str(workspace / "finetune.py")
    assert got["set"]["per_device_train_batch_size"] == "1" and got["set"]["max_steps"] == "1"
    out = got["set"]["output_dir"]
    assert out and os.path.isdir(out) and not out.startswith(str(run))  # a fresh dir, never the run's own


def test_hf_script_that_takes_one_settings_file_gets_no_flags_beside_it(tmp_path):
    run = tmp_path / "out"
    write(run / "cmdline.txt", "python /workspace/run_clm.py /workspace/args.json\n")
    write(run / "training_args.json", json.dumps(TRAINING_ARGS, indent=2))
    stderr = (ROOT / "examples" / "runs" / "oom-cuda" / "stderr.txt").read_text()
    write(run / "stderr.txt", stderr.replace("/workspace/finetune.py", "/workspace/run_clm.py"))
    cmd = verification(run)["verification"]["command"]
    assert code_of(cmd).endswith("/workspace/run_clm.py /workspace/args.json")  # nothing after the file
    assert "reads its settings from /workspace/args.json: set per_device_train_batch_size to 1 there" in cmd


WANDB_META = {
    "os": "Linux-5.15.0-1061-aws-x86_64-with-glibc2.31", "python": "3.10.14", "heartbeatAt": "2024-05-01T12:00:05",
    "startedAt": "2024-05-01T12:00:00.123456", "docker": None, "cuda": "12.1",
    "args": ["--lr", "0.1", "--batch-size", "64", "--epochs", "3", "--data", "/data/cifar10"],
    "state": "running", "program": None, "codePathLocal": "train.py", "codePath": "train.py",
    "git": {"remote": "https://github.com/example/cifar.git", "commit": "3f1c2a9"},
    "root": None, "host": "gpu-node-7", "username": "researcher", "executable": "/usr/bin/python3",
    "cpu_count": 16, "gpu": "NVIDIA A10G", "gpu_count": 1,
}


def test_wandb_offline_run_reruns_program_with_its_args(tmp_path):
    project = tmp_path / "cifar"
    write(project / "train.py", ARGPARSE_STUB.format(flags=["--lr", "--batch-size", "--epochs", "--data"]))
    run = project / "wandb" / "offline-run-20240501_120000-k3j2h1"
    meta = dict(WANDB_META, program=str(project / "train.py"), root=str(project))
    write(run / "files" / "wandb-metadata.json", json.dumps(meta, indent=4))
    write(run / "files" / "requirements.txt", "numpy==1.26.4\ntorch==2.3.0\ntorchvision==0.18.0\nwandb==0.17.0\n")
    rows = [f"epoch 1 step {s} loss {2.3 - s / 1000:.4f} acc {s / 2000:.3f}" for s in range(50, 700, 50)]
    rows += ["epoch 1 step 700 loss nan acc 0.100", "epoch 1 step 750 loss nan acc 0.100"]
    write(run / "files" / "output.log", "\n".join(rows) + "\n")
    d = verification(run)
    assert d["classification"] == "NaN"
    cmd = d["verification"]["command"]
    assert "--batch-size 64" in cmd and "--lr " in cmd  # the flags as the command spells them
    assert "--max_steps" not in cmd and "--steps" not in code_of(cmd)  # no flag the script was never given
    program_line = json.dumps(meta, indent=4).splitlines().index(f'    "program": "{project / "train.py"}",') + 1
    assert d["verification"]["launch"]["source"].endswith(f"wandb-metadata.json:{program_line}")
    rec = execute(cmd, tmp_path, tmp_path)
    got = next(r for r in rec if "script" in r)
    assert float(got["set"]["lr"]) < 0.1 and got["set"]["data"] == "/data/cifar10"  # a lower lr, the same data
    assert {"anomaly": True} in rec


def test_wandb_without_program_uses_code_path_local_in_root(tmp_path):
    project = tmp_path / "cifar"
    write(project / "train.py", ARGPARSE_STUB.format(flags=["--lr", "--batch-size", "--epochs", "--data"]))
    run = project / "wandb" / "offline-run-20240501_120000-k3j2h1"
    meta = dict(WANDB_META, root=str(project))
    del meta["program"]  # older clients and some launch modes record only the code path
    write(run / "files" / "wandb-metadata.json", json.dumps(meta, indent=4))
    write(run / "files" / "output.log", BARE_LOG)
    cmd = verification(run)["verification"]["command"]
    assert f"python {project / 'train.py'} --lr 0.1 --batch-size 64" in cmd
    assert next(r for r in execute(cmd, tmp_path, tmp_path) if "script" in r)["set"]["epochs"] == "3"


SLURM_HEAD = """
+ export NCCL_ASYNC_ERROR_HANDLING=1
+ torchrun --nproc_per_node=2 {script} --lr 3e-4 --batch_size 16 --max_steps 5000 --save_dir {save}
[rank0]: world size 2
"""


def test_torchrun_command_echoed_by_the_job_script_is_the_launch(tmp_path):
    project = tmp_path / WEIRD
    write(project / "train.py", ARGPARSE_STUB.format(flags=["--lr", "--batch_size", "--max_steps", "--save_dir"]))
    run = tmp_path / "job-4242"
    head = SLURM_HEAD.format(script=f"'{project / 'train.py'}'", save=f"{run / 'checkpoints'}")
    rows = [f"[rank0]: step {s} | loss {3.2 - s / 1000:.4f} | grad_norm 0.9" for s in range(10, 400, 10)]
    rows += ["[rank0]: step 400 | loss nan | grad_norm nan", "[rank0]: step 410 | loss nan | grad_norm nan"]
    write(run / "slurm-4242.out", textwrap.dedent(head).lstrip() + "\n".join(rows) + "\n")
    (run / "checkpoints").mkdir()
    shutil.copy(CKPT, run / "checkpoints" / "step_300.pt")
    d = verification(run)
    assert d["classification"] == "NaN"
    launch = d["verification"]["launch"]
    assert launch["source"] == "slurm-4242.out:2" and launch["command"].startswith("torchrun --nproc_per_node=2 ")
    cmd = d["verification"]["command"]
    assert cmd.startswith("torchrun --nproc_per_node=2 ")  # the run's launcher, not a bare python
    assert "--max_steps 450" in cmd and "--lr 0.00015" in cmd
    rec = execute(cmd, tmp_path, tmp_path)
    got = next(r for r in rec if "script" in r)
    assert got["script"] == str(project / "train.py") and got["set"]["max_steps"] == "450"


# torch/distributed/launcher/api.py logs its launch configs like this (as quoted in public threads, 2024-03)
ELASTIC = """
[2024-03-12 08:22:45,549] torch.distributed.launcher.api: [INFO] Starting elastic_operator with launch configs:
[2024-03-12 08:22:45,549] torch.distributed.launcher.api: [INFO]   entrypoint       : ddp.py
[2024-03-12 08:22:45,549] torch.distributed.launcher.api: [INFO]   min_nodes        : 2
[2024-03-12 08:22:45,549] torch.distributed.launcher.api: [INFO]   max_nodes        : 2
[2024-03-12 08:22:45,549] torch.distributed.launcher.api: [INFO]   nproc_per_node   : 4
[2024-03-12 08:22:45,549] torch.distributed.launcher.api: [INFO]   run_id           : 5982
[2024-03-12 08:22:45,549] torch.distributed.launcher.api: [INFO]   rdzv_backend     : c10d
Traceback (most recent call last):
  File "{script}", line 61, in <module>
    main()
  File "/opt/conda/lib/python3.10/site-packages/torch/nn/modules/linear.py", line 116, in forward
    return F.linear(input, self.weight, self.bias)
RuntimeError: mat1 and mat2 shapes cannot be multiplied (64x512 and 2048x100)
"""


def test_torchrun_s_own_launch_record_gives_launcher_and_script(tmp_path):
    project = tmp_path / WEIRD
    write(project / "ddp.py", ARGPARSE_STUB.format(flags=[]))
    run = tmp_path / "run"
    write(run / "train.log", ELASTIC.format(script=project / "ddp.py"))
    d = verification(run)
    assert d["classification"] == "crash"
    cmd = d["verification"]["command"]
    assert re.search(r"torchrun --nproc_per_node=4 '[^']*/ddp\.py'", cmd), cmd  # launcher, and the frame's path
    assert "the run spanned 2 nodes" in cmd and "arguments are not in the run" in cmd
    assert next(r for r in execute(cmd, tmp_path, tmp_path) if "script" in r)["script"] == str(project / "ddp.py")


def test_module_launch_runs_the_module_under_the_preamble(tmp_path):
    project = tmp_path / "proj"
    write(project / "pkg" / "__init__.py", "")
    write(project / "pkg" / "train.py", ARGPARSE_STUB.format(flags=["--epochs", "--lr"]))
    run = tmp_path / "run"
    write(run / "cmdline.txt", "python -m pkg.train --epochs 3 --lr 0.1\n")
    write(run / "requirements.txt", "torch==2.3.0\n")
    write(run / "train.log", "epoch 1 loss 2.0412\nepoch 2 loss 1.8821\nepoch 3 loss nan\nepoch 4 loss nan\n")
    d = verification(run)
    assert d["classification"] == "NaN"
    cmd = d["verification"]["command"]
    assert "directory the job was started in" in cmd  # `-m` resolves against it
    rec = execute(cmd, tmp_path, project)
    assert {"anomaly": True} in rec
    got = next(r for r in rec if "script" in r)
    assert got["script"] == str(project / "pkg" / "train.py") and float(got["set"]["lr"]) < 0.1


BARE_LOG = """
epoch 0 iter 10 loss 4.6012
Traceback (most recent call last):
  File "/opt/conda/lib/python3.10/site-packages/torch/nn/modules/module.py", line 1518, in _wrapped_call_impl
    return self._call_impl(*args, **kwargs)
  File "/opt/conda/lib/python3.10/site-packages/torch/nn/modules/linear.py", line 116, in forward
    return F.linear(input, self.weight, self.bias)
RuntimeError: mat1 and mat2 shapes cannot be multiplied (64x512 and 2048x100)
"""


def test_bare_log_says_which_piece_is_unknown_instead_of_inventing_it(tmp_path):
    run = tmp_path / "run"
    write(run / "train.log", BARE_LOG)
    d = verification(run)
    assert d["classification"] == "crash"
    cmd = d["verification"]["command"]
    assert "the launch command is not in the run: replace `train.py` by your script" in cmd
    cwd = tmp_path / "where-i-launch"
    write(cwd / "train.py", ARGPARSE_STUB.format(flags=[]))  # takes no arguments: the command must pass none
    rec = execute(cmd, tmp_path, cwd)
    assert next(r for r in rec if "script" in r)["argv"] == []


def test_not_learning_run_gets_an_overfit_check_never_a_hang_probe(tmp_path):
    lines = [f"[2024-05-01 12:00:00,000][train][INFO] - step {s} loss=2.3026 acc=0.1000" for s in range(50, 3050, 50)]
    project, run = hydra_run(tmp_path, "\n".join(lines) + "\n")
    d = verification(run)
    assert d["classification"] == "stall" and d["verification"]["skill"] == "init-loss-check"
    cmd = d["verification"]["command"]
    assert not re.search(r"py-spy|NCCL_DEBUG|pgrep|TORCH_DISTRIBUTED_DEBUG", cmd)
    assert "+trainer.overfit_batches=1" in cmd and "trainer.max_steps=200" in cmd
    rec = execute(cmd, tmp_path, tmp_path)
    assert next(r for r in rec if "script" in r)["set"]["trainer.overfit_batches"] == "1"


PYSPY_DUMP = ('Thread 46 (idle): "MainThread"\n    backward (torch/autograd/__init__.py:266)\n'
              "    train (train.py:88)\nThread 4068 (active)\n"
              "    all_gather_into_tensor (torch/distributed/distributed_c10d.py:2709)\n"
              "    wrapper (torch/distributed/c10d_logger.py:72)\n")  # as in tests/test_stack_dumps.py


def hang_run(tmp: Path) -> tuple:
    project = tmp / WEIRD
    write(project / "train.py", ARGPARSE_STUB.format(flags=["--config"]))
    run = tmp / "run"
    write(run / "cmdline.txt", f"torchrun --standalone --nproc_per_node=2 {shlex_quote(project / 'train.py')} "
                               "--config a.yaml\n")
    write(run / "train.log", "".join(f"step {s} loss={3 - s / 1e4:.4f}\n" for s in range(10, 300, 10)))
    write(run / "py-spy-rank0.txt", PYSPY_DUMP)
    return project, run


def shlex_quote(p) -> str:
    import shlex
    return shlex.quote(str(p))


def test_hang_probe_dumps_the_run_s_own_processes(tmp_path):
    project, run = hang_run(tmp_path)
    d = verification(run)
    assert d["classification"] == "stall"
    cmd = d["verification"]["command"]
    assert "py-spy dump --pid" in cmd and "<" not in code_of(cmd)
    assert "pgrep -f 'train\\.py'" in cmd  # the run's script, not any python
    st = stubs(tmp_path)
    spy = Path(st["env"]["PATH"].split(os.pathsep)[0]) / "py-spy"
    spy.write_text('#!/bin/sh\necho "py-spy $*" >> "$VERIFY_RECORD"\n')
    spy.chmod(0o755)
    execute(cmd, tmp_path, tmp_path)


def test_hang_without_a_signature_dumps_live_processes_else_reruns_with_collective_logging(tmp_path):
    from trainwreck.collect import collect
    from trainwreck.decide.next_steps import verify_command
    from trainwreck.locate import locate

    project, run = hang_run(tmp_path)
    bundle = collect(locate(str(run)))
    cmd = verify_command("stall", None, bundle, None, None)
    assert re.match(r"if pgrep -f 'train\\.py' > /dev/null; then .*py-spy dump --pid; else NCCL_DEBUG=INFO "
                    r"TORCH_DISTRIBUTED_DEBUG=DETAIL torchrun ", cmd)
    rec = execute(cmd, tmp_path, tmp_path)  # no live process here: the else branch reruns the launch
    got = next(r for r in rec if "script" in r)
    assert got["env"]["NCCL_DEBUG"] == "INFO" and got["set"]["config"] == "a.yaml"


def test_catalog_hint_stand_ins_are_filled_from_the_run_or_the_hint_gives_way(tmp_path):
    from trainwreck.collect import collect
    from trainwreck.decide.hints import adapt_hint
    from trainwreck.decide.launch import reconstruct
    from trainwreck.locate import locate
    from trainwreck.model import Finding, Source

    project, run = hang_run(tmp_path)
    write(run / "rank1.log", "step 10 loss=3.0\n")
    write(run / "rank0.log", "step 10 loss=3.0\n")
    bundle = collect(locate(str(run)))
    la = reconstruct(bundle)
    f = Finding("x", "claim", evidence=[Source("train.log", 3, "ModuleNotFoundError: No module named 'flash_attn'")])
    spy, _ = adapt_hint("py-spy dump --pid <pid>  # on every rank, twice, a minute apart", la, bundle, f)
    assert spy == ("pgrep -f 'train\\.py' | xargs -r -n1 py-spy dump --pid  # on every rank, twice, a minute apart")
    grep, _ = adapt_hint('grep -n -m1 Traceback rank*.log', la, bundle, f)
    assert grep == f"grep -n -m1 Traceback {run / 'rank0.log'} {run / 'rank1.log'}"  # the files that exist
    imp, _ = adapt_hint('python -c "import <module>"', la, bundle, f)
    assert imp == 'python -c "import flash_attn"'  # the module the evidence names
    assert adapt_hint("kubectl describe pod <pod>", la, bundle, f) == (None, None)  # nothing fills <pod>
    assert adapt_hint('python -c "from mydata import ds; ds[0]"', la, bundle, f) == (None, None)
    cmd, prose = adapt_hint("rerun with num_workers=0 (workers=0)", la, bundle, f)
    assert cmd is None and prose == "rerun with num_workers=0 (workers=0)"  # words, said in the class's comment


def test_launch_reconstruction_keeps_the_launcher_and_drops_shell_noise():
    from trainwreck.decide.launch import parse, split_command

    la = parse(split_command("XLA_FLAGS=--x=1 nohup srun -N 2 torchrun --nproc-per-node 8 train.py --lr 1e-4 "
                             "2>&1 | tee out.log &"))
    assert (la.env, la.prefix, la.script, la.args) == (
        ["XLA_FLAGS=--x=1"], ["srun", "-N", "2", "torchrun", "--nproc-per-node", "8"], "train.py", ["--lr", "1e-4"])
    ds = parse(split_command("/usr/bin/python -u -m deepspeed.launcher.launch --world_info=eyJsb2NhbGhvc3QiOiBbMF19 "
                             "--master_addr=127.0.0.1 --master_port=29500 train.py --deepspeed ds.json"))
    assert (ds.prefix, ds.script, ds.args) == (["deepspeed"], "train.py", ["--deepspeed", "ds.json"])
    mod = parse(split_command("python -m nmp.train Maze-Simple-v0 --horizon 75"))
    assert (mod.module, mod.args) == ("nmp.train", ["Maze-Simple-v0", "--horizon", "75"])
    assert parse(split_command("sh run_pretrain.sh 13B 8")).opaque


def _example_runs():
    return sorted(p for p in (ROOT / "examples" / "runs").iterdir() if p.is_dir())


def _verb_commands(cli, run: Path) -> list:
    """Every command a verb prints for the run: diagnose's and collect's verification (the CLI, as a user runs it)."""
    out = []
    for verb in ("diagnose", "collect"):
        p = cli(verb, str(run), "--json", *(["--no-probe"] if verb == "diagnose" else []))
        assert p.returncode == 0, p.stderr
        j = json.loads(p.stdout)
        out.append((j.get("diagnosis") or j)["verification"]["command"])
    return out


@pytest.mark.parametrize("run", _example_runs(), ids=lambda p: p.name)
def test_example_commands_have_no_placeholder_and_parse(run, cli):
    d = verification(run)
    commands = _verb_commands(cli, run)
    assert set(commands) == {d["verification"]["command"]}, commands  # every verb says the same command
    cmd = d["verification"]["command"]
    code = code_of(cmd)
    assert not PLACEHOLDER.search(code), cmd
    assert subprocess.run(["bash", "-n", "-c", cmd], capture_output=True).returncode == 0, cmd
    for glob in re.findall(r"[^\s'\"]*\*[^\s'\"]*", code):
        assert list(run.glob(glob.rsplit("/", 1)[-1])), f"{glob} matches no file of {run.name}"
    if d["classification"] in ("NaN", "divergence", "OOM", "crash") or d["verification"]["skill"] == "init-loss-check":
        assert not re.search(r"py-spy|NCCL_DEBUG", code), cmd


def test_hostile_launch_facts_degrade_and_never_break_the_command(tmp_path):
    run = tmp_path / "run"
    write(run / "cmdline.txt", "python \"unbalanced 'quote train.py --lr $(touch pwned) `touch pwned2` \\\n"
                               + " ".join(f"--x{i} {i}" for i in range(3000)) + "\n")
    write(run / "wandb-metadata.json", json.dumps({"program": 7, "args": {"not": "a list"}, "root": ["x"]}))
    write(run / ".hydra" / "overrides.yaml", "- '\n- =\n- +=1\n- a.b=c=d\n")
    write(run / ".hydra" / "config.yaml", "a:\n  b: 1\n")
    write(run / "train.log", HYDRA_OOM_LOG.format(project="/srv/p"))
    d = verification(run)
    cmd = d["verification"]["command"]
    assert subprocess.run(["bash", "-n", "-c", cmd], capture_output=True).returncode == 0, cmd
    st = stubs(tmp_path)  # expand it as bash would, with `echo` standing for every program it names
    words = subprocess.run(["bash", "-c", "set -f; printf '%s\\n' " + code_of(cmd).split(" -c ", 1)[-1]],
                           capture_output=True, text=True, env=st["env"], cwd=str(tmp_path))
    assert words.returncode == 0 and not list(tmp_path.rglob("pwned*")), words.stderr
