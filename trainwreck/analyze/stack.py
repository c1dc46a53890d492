"""Which software stack the run used, from versions files and the log text itself."""
from __future__ import annotations

import re
from typing import List

from ..bundle import Bundle
from ..model import Finding

_MARKERS = [
    ("DeepSpeed", re.compile(r"\bdeepspeed\b|\[deepspeed\]|DeepSpeedEngine|ZeRO", re.I)),
    ("Megatron", re.compile(r"megatron|\blm loss:", re.I)),
    ("Lightning", re.compile(r"pytorch_lightning|lightning\.pytorch|lightning_fabric|LightningModule|`Trainer.fit`")),
    ("HF Transformers", re.compile(r"\btransformers[./]|\{'loss': |\{'eval_loss': |Trainer\._inner_training_loop")),
    ("Accelerate", re.compile(r"\baccelerate[./]|Accelerator\(")),
    ("JAX", re.compile(r"\bjax(?:lib)?[./]|XlaRuntimeError|jax\._src")),
    ("MindSpore", re.compile(r"mindspore", re.I)),
    ("torch_npu", re.compile(r"torch_npu|\bNPU\b|Ascend", re.I)),
    ("torchrun", re.compile(r"torch\.distributed\.(?:elastic|run)|torchrun|ChildFailedError")),
    ("NCCL", re.compile(r"\bNCCL\b")),
    ("HCCL", re.compile(r"\bHCCL\b")),
    ("PyTorch", re.compile(r"\btorch[./]|torch\.(?:cuda|nn|distributed|OutOfMemoryError)|site-packages/torch/")),
]
_VERSION_FACTS = [("torch", "PyTorch"), ("deepspeed", "DeepSpeed"), ("transformers", "HF Transformers"),
                  ("pytorch-lightning", "Lightning"), ("lightning", "Lightning"), ("jax", "JAX"),
                  ("mindspore", "MindSpore"), ("torch-npu", "torch_npu"), ("megatron-core", "Megatron"),
                  ("accelerate", "Accelerate")]
_VER = re.compile(r"(?:==|@|\s)\s*([\d][\w.+\-]*)")


def detect(bundle: Bundle) -> List[Finding]:
    found = {}
    for key, name in _VERSION_FACTS:
        src = bundle.facts.get(key)
        if src:
            m = _VER.search(src.text)
            found[name] = f"{name} {m.group(1)}" if m else name
    # one pass of each marker over the joined text: C-speed search instead of a regex call per line
    blob = "\n".join(line.text[:600] for line in bundle.all_lines())
    for name, rx in _MARKERS:
        if name not in found and rx.search(blob):
            found[name] = name
    if not found:
        return []
    display = ["PyTorch"] + [n for n, _ in _MARKERS if n != "PyTorch"]
    stack = [found[n] for n in display if n in found]
    return [Finding(id="context.stack", claim=", ".join(stack), role="context", confidence=1.0, stack=stack)]
