"""Which software stack the run used, from versions files and the log text itself."""
from __future__ import annotations

from typing import Dict, List

from trainwreck import lazy_re
from trainwreck.collect.bundle import Bundle
from trainwreck.collect.ranks import line_rank
from trainwreck.model import Finding

# Lower-case literals that reveal a stack in log text (plain substring tests on the lower-cased log).
_MARKERS = [
    ("DeepSpeed", ("deepspeed", "zero stage", "zero_optimization")),
    ("Megatron", ("megatron", "| lm loss:")),
    ("Lightning", ("pytorch_lightning", "lightning.pytorch", "lightning_fabric", "lightningmodule", "`trainer.fit`")),
    ("HF Transformers", ("transformers/", "transformers.", "{'loss': ", "{'eval_loss': ", "_inner_training_loop")),
    ("Accelerate", ("accelerate/", "accelerate.", "accelerator(")),
    ("JAX", ("jax/", "jax.", "jaxlib", "xlaruntimeerror")),
    ("MindSpore", ("mindspore",)),
    ("torch_npu", ("torch_npu", "ascend")),
    ("torchrun", ("torch.distributed.elastic", "torch.distributed.run", "torchrun", "childfailederror")),
    ("NCCL", ("nccl",)),
    ("HCCL", ("hccl",)),
    ("PyTorch", ("torch/", "torch.", "site-packages/torch")),
]
_VERSION_FACTS = [("torch", "PyTorch"), ("deepspeed", "DeepSpeed"), ("transformers", "HF Transformers"),
                  ("pytorch-lightning", "Lightning"), ("lightning", "Lightning"), ("jax", "JAX"),
                  ("mindspore", "MindSpore"), ("torch-npu", "torch_npu"), ("megatron-core", "Megatron"),
                  ("accelerate", "Accelerate")]
_VER = lazy_re(r"(?:==|@|(?<!\s)\s)\s*([\d][\w.+\-]*)")


def detect(bundle: Bundle) -> List[Finding]:
    found = {}
    for key, name in _VERSION_FACTS:
        src = bundle.facts.get(key)
        if src:
            m = _VER.search(src.text)
            found[name] = f"{name} {m.group(1)}" if m else name
    # one pass of each marker over the joined text: C-speed search instead of a regex call per line
    blob = "\n".join(line.text[:600] for line in bundle.all_lines()).lower()
    for name, words in _MARKERS:
        if name not in found and any(w in blob for w in words):
            found[name] = name
    setup = _setup(bundle, blob)
    if not found and not setup:
        return []
    display = ["PyTorch"] + [n for n, _ in _MARKERS if n != "PyTorch"]
    stack = [found[n] for n in display if n in found]
    f = Finding(id="context.stack", claim=", ".join(stack + list(setup.values())), role="context", confidence=1.0,
                stack=stack, kind="stack", setup=setup)
    f.meaning = " · ".join(setup.values())
    return [f]


_WORLD = lazy_re(r"world[ _]size\s*[=:]?\s*(\d{1,6})\b(?!\s*[!=<>*])")


def _setup(bundle: Bundle, blob: str) -> Dict[str, str]:
    """Precision and world size, when the config or the log says them: the facts a reader wants first."""
    out: Dict[str, str] = {}
    from trainwreck.analyze.config_checks import bf16_enabled, fp16_entry
    if fp16_entry(bundle):
        out["precision"] = "fp16"
    elif bf16_enabled(bundle):
        out["precision"] = "bf16"
    e = bundle.config("world_size", "num_gpus", "gpus", "nproc_per_node", "devices")
    world = None
    m = _WORLD.search(blob)
    if m:
        world = int(m.group(1))
    elif e is not None and e.value.isdigit() and e.key.rsplit(".", 1)[-1] in ("world_size", "num_gpus"):
        world = int(e.value)
    else:
        ranks = set()
        for i, line in enumerate(bundle.all_lines()):
            if i >= 20000:
                break
            r = line_rank(line.text[:200])
            if r is not None:
                ranks.add(r)
        if len(ranks) > 1:
            world = max(ranks) + 1
    if world and world > 1:
        out["world_size"] = f"{world} ranks"
    return out
