"""Environment facts: git_sha.txt, seed.txt, cuda_info.txt, env.txt, pip_freeze.txt, requirements.txt,
collect_env output, nvidia-smi captures, kernel log captures (dmesg), wandb-metadata.json, core dumps (noted, never read)."""
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
         "wandb-metadata.json", "system_info.txt", "versions.txt", ".netrc", "netrc", "env.json", "launch.sh"}
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
            if isinstance(meta, dict):
                for k in ("python", "gpu", "gpu_count", "cuda", "host", "program", "startedAt", "os"):
                    if k in meta and isinstance(meta[k], (str, int, float)):
                        bundle.facts[f"wandb.{k}"] = Source(rel, None, f"{k}: {meta[k]}")
                args = meta.get("args")
                if isinstance(args, list) and all(isinstance(a, (str, int, float)) for a in args):
                    # the launch arguments (--bf16, --optim adamw_torch …): what the run was set up with
                    bundle.facts["wandb.args"] = Source(rel, None, "args: " + " ".join(str(a) for a in args)[:4000])
            ctx.record(f, "facts")
            return
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
