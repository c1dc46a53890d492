"""Environment facts: git_sha.txt, seed.txt, cuda_info.txt, env.txt, pip_freeze.txt, requirements.txt,
collect_env output, nvidia-smi captures, kernel log captures (dmesg), wandb-metadata.json, core dumps (noted, never read).

Launch facts, for the verification command (decide/launch.py): `launch.cmdline` (the command line of cmdline.txt,
its `value` the line with backslash continuations joined), and from wandb-metadata.json `launch.program`,
`launch.codePath`, `launch.codePathLocal`, `launch.root`, `launch.executable` (value: the string) and
`launch.args` (value: the list of arguments wandb recorded, `sys.argv[1:]`).

HF's train_results.json / all_results.json (Trainer.save_metrics after train() returned) with `train_runtime`
give the fact `hf.train_summary`, as the final summary entry of trainer_state.json does: the run completed."""
from __future__ import annotations

import json
import re

from trainwreck import lazy_re
from trainwreck.model import Source

ORDER = 40
LIMIT = 1 << 20
MAX_LINES = 5000
NAMES = {"git_sha.txt", "git.txt", "seed.txt", "cuda_info.txt", "env.txt", "environment.txt", "pip_freeze.txt",
         "requirements.txt", "collect_env.txt", "nvidia-smi.txt", "nvidia_smi.txt", "dmesg.txt", "kern.txt",
         "wandb-metadata.json", "system_info.txt", "versions.txt", ".netrc", "netrc", "env.json", "launch.sh",
         "cmdline.txt", "cmd.txt", "command.txt", "cmdline", "train_results.json", "all_results.json"}
# transformers' Trainer.save_metrics("train", …) after train() returned (the example scripts' last step): the
# run reached the end of Trainer.train
RESULTS_NAMES = {"train_results.json", "all_results.json"}
CMDLINE_NAMES = {"cmdline.txt", "cmd.txt", "command.txt", "cmdline"}
_WANDB_LAUNCH = ("program", "codePath", "codePathLocal", "root", "executable")
_PKG = lazy_re(r"^(torch|deepspeed|transformers|accelerate|pytorch-lightning|lightning|megatron-core|jax|jaxlib|"
                  r"torch-npu|torch_npu|mindspore|apex|flash-attn|flash_attn|triton|nvidia-nccl-cu\d+|peft|trl|"
                  r"numpy|vllm|xformers|bitsandbytes)\s*(?:==|@|\s)\s*([\w.+\-]+)", re.I)
_FACTS = [
    ("torch", lazy_re(r"(?i)\bPyTorch version\s*:\s*(\S+)")),
    ("cuda", lazy_re(r"(?i)\b(?:CUDA used to build PyTorch|CUDA version|CUDA runtime version|cuda)\s*[:=]\s*([\d.]+)")),
    ("driver", lazy_re(r"(?i)\b(?:Nvidia driver version|Driver Version)\s*:\s*([\d.]+)")),
    ("gpu", lazy_re(r"(?i)\b(?:GPU models and configuration|GPU \d+|gpu)\s*[:=]\s*(.*(?:NVIDIA|Tesla|A100|H100|H200|V100|"
                       r"A10|L4|L40|RTX|T4|Ascend|MI\d+).*)")),
    ("seed", lazy_re(r"^\s*(\d+)\s*$")),
    ("git_sha", lazy_re(r"\b([0-9a-f]{7,40})\b")),
]


def claims(rel: str, name: str) -> bool:
    if name in NAMES:
        return True
    if name == "core" or re.fullmatch(r"core\.\d+", name):
        return True
    return False


def read(bundle, entry, ctx) -> None:
    name = entry.rel.rsplit("/", 1)[-1]
    if name == "core" or name.startswith("core."):
        bundle.facts["core_dump"] = Source(entry.rel, None, f"core dump present ({entry.size} bytes; not read)")
        return
    with ctx.open(entry) as f:
        rel = f.rel
        lines = f.all_lines(LIMIT)  # redacted, key and value together, before anything is parsed
        if name.endswith(".json"):
            try:
                meta = json.loads("\n".join(ln.text for ln in lines))
            except ValueError:
                bundle.note(f"{rel}: not valid JSON; skipped")
                return
            if isinstance(meta, dict) and name in RESULTS_NAMES:
                if isinstance(meta.get("train_runtime"), (int, float)):
                    at = next((ln for ln in lines if '"train_runtime"' in ln.text), None)
                    bundle.facts.setdefault("hf.train_summary", Source(rel, at.line if at else None,
                                                                       at.text.strip().rstrip(",") if at else ""))
                ctx.record(f, "facts")
                return
            if isinstance(meta, dict):
                for k in ("python", "gpu", "gpu_count", "cuda", "host", "program", "startedAt", "os"):
                    if k in meta and isinstance(meta[k], (str, int, float)):
                        bundle.facts[f"wandb.{k}"] = Source(rel, None, f"{k}: {meta[k]}")
                args = meta.get("args")
                if isinstance(args, list) and all(isinstance(a, (str, int, float)) for a in args):
                    # the launch arguments (--bf16, --optim adamw_torch …): what the run was set up with
                    bundle.facts["wandb.args"] = Source(rel, None, "args: " + " ".join(str(a) for a in args)[:4000])
                _wandb_launch(bundle, rel, meta, lines)
            ctx.record(f, "facts")
            return
        if name in CMDLINE_NAMES:
            _cmdline(bundle, rel, lines)
        for line in lines[:MAX_LINES]:
            bundle.extra_lines.append(line)
            text, n = line.text, line.line
            m = _PKG.match(text.strip())
            if m:
                bundle.facts.setdefault(m.group(1).lower().replace("_", "-"), Source(rel, n, text))
                continue
            for key, rx in _FACTS:
                if key == "seed" and name != "seed.txt":
                    continue
                if key == "git_sha" and not name.startswith("git"):
                    continue
                mm = rx.search(text)
                if mm:
                    bundle.facts.setdefault(key, Source(rel, n, text))
        ctx.record(f, "facts")


def _line_of(lines, needle: str):
    return next((ln.line for ln in lines if needle in ln.text), None)


def _wandb_launch(bundle, rel: str, meta: dict, lines) -> None:
    """What wandb recorded about the launch: the script (`program`, absolute or as typed; `codePath` relative
    to the git root; `codePathLocal` relative to the working directory), `root`, `executable` and `args`."""
    for k in _WANDB_LAUNCH:
        v = meta.get(k)
        if isinstance(v, str) and v.strip():
            n = _line_of(lines, f'"{k}"')
            bundle.facts[f"launch.{k}"] = Source(rel, n, f"{k}: {v}", value=v)
    args = meta.get("args")
    if isinstance(args, list) and all(isinstance(a, str) for a in args):
        n = _line_of(lines, '"args"')
        bundle.facts["launch.args"] = Source(rel, n, "args: " + " ".join(args)[:300], value=list(args))


def _cmdline(bundle, rel: str, lines) -> None:
    """The first command of cmdline.txt, with `\\` line continuations joined (comments and blank lines skipped)."""
    parts, first = [], None
    for ln in lines[:MAX_LINES]:
        text = ln.text.strip()
        if not parts and (not text or text.startswith("#")):
            continue
        first = first if first is not None else ln.line
        parts.append(text[:-1].rstrip() if text.endswith("\\") else text)
        if not text.endswith("\\"):
            break
    if parts:
        cmd = " ".join(p for p in parts if p)
        bundle.facts["launch.cmdline"] = Source(rel, first, cmd[:500], value=cmd)
