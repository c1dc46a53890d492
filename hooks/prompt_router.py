"""trainwreck prompt router: a Claude Code UserPromptSubmit hook.

When the prompt describes a failed or stalled training run ("loss is NaN", "CUDA out of
memory", "training hangs", a pasted torch traceback, ...), add one line of context that
points to /trainwreck:diagnose and names what `trainwreck diagnose` would diagnose in the
cwd: the engine's own discovery (trainwreck.locate, standard library only, bounded listings,
no deep walks), imported from the plugin root, so the hook and the CLI never disagree.
Print nothing for any other prompt.  Fail open: on any internal error, or when the engine
cannot be imported, exit 0 and print nothing.  Standard library only.
"""
import json
import os
import sys

MAX_STDIN = 4 << 20
MAX_PROMPT = 20000

# Symptoms that need nothing else to mean "a training run failed".
STRONG = [
    "out of memory", "outofmemoryerror", "cuda oom", "cuda error", "cudnn_status", "cublas_status",
    "nccl timeout", "nccl error", "ncclsystemerror", "ncclinternalerror", "watchdog caught",
    "collective operation timeout", "processgroupnccl", "hccl", "device-side assert",
    "illegal memory access", "resource_exhausted", "resource exhausted", "loss scale already at minimum",
    "gradient overflow", "nan loss", "nan losses", "loss is nan", "loss became nan", "loss becomes nan",
    "loss went nan", "loss goes nan", "loss goes to nan", "loss went to nan", "loss turns nan",
    "loss turned nan", "loss = nan", "loss=nan", "loss: nan", "loss is inf", "loss=inf",
    "grad_norm=nan", "grad norm is nan", "grad_norm is nan", "nan gradients", "nan grads",
    "gradients exploded", "gradient explosion", "exploding gradients", "gradients explode",
    "gradients are exploding", "grads exploded", "vanishing gradients", "loss exploded",
    "loss explodes", "loss diverged", "loss diverges", "loss is diverging", "loss spiked",
    "loss spikes", "loss blew up", "loss blows up", "training diverged", "training diverges",
    "loss is flat", "loss is stuck", "loss stays flat", "loss stayed flat", "loss plateaued",
    "loss plateaus", "loss is not decreasing", "loss isn't decreasing", "loss not decreasing",
    "loss doesn't decrease", "loss does not decrease", "loss is not going down",
    "loss isn't going down", "loss won't go down", "loss doesn't go down", "loss not going down",
    "loss is constant", "loss stuck at", "not converging", "won't converge", "doesn't converge",
    "training hangs", "training hung", "training is hanging", "training stalled", "training stalls",
    "training is stuck", "training got stuck", "training froze", "training freezes",
    "training crashed", "training crashes", "training failed", "training died", "run crashed",
    "run hangs", "run hung", "run is stuck", "run stalled", "job hangs", "job hung", "job is stuck",
    "job crashed", "run died", "run is hanging", "run got stuck", "run froze", "stuck at step", "hangs at step", "hung at step", "stalls at step",
    "oom at step", "oom during", "oom when", "oom after", "got oom", "getting oom", "ooms at",
    "oom-killed", "oom killer", "oom-killer", "dataloader worker", "killed by signal",
    "exitcode: -9", "exit code -9", "exit code 137", "sigkill", "segmentation fault",
    "core dumped", "nan at step", "nans at step", "inf at step",
    # other languages
    "显存不足", "内存不足", "训练卡住", "训练崩溃", "训练挂了", "训练中断", "损失为nan", "损失是nan",
    "loss变成nan", "loss 变成 nan", "loss为nan", "梯度爆炸", "不收敛", "loss不下降", "loss 不下降",
    "メモリ不足", "学習が止まる", "学習が止まった", "学習が進まない", "勾配爆発", "lossがnan",
    "loss が nan", "発散", "speicher voll", "speicherüberlauf", "verlust ist nan", "training hängt",
    "training bleibt hängen", "training abgestürzt", "perte nan", "perte est nan",
    "l'entraînement plante", "l'entraînement bloque", "pérdida nan", "la pérdida es nan",
    "el entrenamiento se cuelga", "el entrenamiento falla", "sin memoria",
]
# Words that are symptoms only together with a training context word.
SYMPTOM = ["nan", "nans", "inf", "oom", "ooms", "crash", "crashed", "crashes", "crashing", "hang",
           "hangs", "hung", "hanging", "stalled", "stalls", "stuck", "freezes", "froze", "deadlock",
           "diverge", "diverged", "diverges", "diverging", "exploded", "explodes", "exploding",
           "spike", "spikes", "spiked", "plateau", "plateaued", "flat", "died", "killed", "fails",
           "failed", "failing", "timeout", "timed", "segfault", "traceback", "cuelga", "colgado", "bloqueado",
           "falla", "plante", "bloqué", "bloque", "hängt", "abgestürzt", "stürzt", "divergiert"]
CONTEXT = ["train", "training", "trainer", "loss", "losses", "epoch", "epochs", "gpu", "gpus",
           "cuda", "gradient", "gradients", "grad", "grads", "grad_norm", "optimizer", "fine-tuning",
           "finetuning", "fine-tune", "finetune", "pretraining", "pretrain", "checkpoint",
           "dataloader", "ddp", "fsdp", "deepspeed", "torch", "pytorch", "lightning", "accelerate",
           "megatron", "nccl", "lr", "torchrun", "jax", "tpu", "keras", "tensorflow", "vram",
           "训练", "学習", "verlust", "entraînement", "entrenamiento", "perte", "pérdida", "époque", "época"]
QUESTIONS = ["why did this crash", "why did my run", "why did the run", "why did training",
             "why did my training", "why does my training", "why is my training", "why is training",
             "what killed my", "what went wrong with my run", "what went wrong with the run",
             "what went wrong with training"]
TORCH_HINTS = ["torch", "cuda", "nccl", "deepspeed", "accelerate", "transformers", "lightning",
               "megatron", "apex", "cudnn", "hccl", "torch_npu", "jax", "xla"]


def _words(text):
    out, cur = [], []
    for ch in text:
        if ch.isalnum() or ch in "_-":
            cur.append(ch)
        elif cur:
            out.append("".join(cur))
            cur = []
    if cur:
        out.append("".join(cur))
    return out


def is_failure_prompt(prompt):
    if not isinstance(prompt, str):
        return False
    p = " ".join(prompt[:MAX_PROMPT].lower().split())
    if not p or p.startswith("/trainwreck:"):
        return False
    if any(s in p for s in STRONG) or any(q in p for q in QUESTIONS):
        return True
    if "traceback (most recent call last)" in p and any(h in p for h in TORCH_HINTS):
        return True
    words = set(_words(p))
    return bool(words & set(SYMPTOM)) and bool(words & set(CONTEXT))


def _discovery():
    """The engine's discovery (trainwreck.locate, standard library only) from the plugin root, or None."""
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    if root not in sys.path:
        sys.path.insert(0, root)
    try:
        from trainwreck.locate import NotFound, locate
    except Exception:
        return None
    return locate, NotFound


def _arg(path):
    return '"%s"' % path.replace('"', '\\"') if any(ch.isspace() or ch in "'\"" for ch in path) else path


def _holds_secret(path):
    try:
        from trainwreck.collect.redact import redact_path
    except Exception:
        return False
    return redact_path(path) != path


def context_line(cwd, discovery):
    """The one line of context, naming what `trainwreck diagnose` would diagnose when run in cwd."""
    locate, not_found = discovery
    run = None
    if isinstance(cwd, str) and os.path.isdir(cwd):
        try:
            run = locate(None, cwd)
        except not_found:
            run = None
    head = "trainwreck: this looks like a failed or stalled training run. Start with /trainwreck:diagnose "
    tail = " and cite its evidence before naming a cause."
    if run is None:
        return head + "<run dir or log file>" + tail
    if _holds_secret(run.target):  # a sweep directory `…,wandb.api_key=<hex>`: discovery finds it again unnamed
        return head.rstrip() + " with no argument (the newest run here; its path holds a secret, not shown)" + tail
    if run.single_file:
        what = "the newest evidence here, a log file"
    elif run.target == ".":
        what = "the current directory is the run"
    else:
        what = "the newest run directory here"
    return head + "%s (%s)" % (_arg(run.target), what) + tail


def main():
    try:
        raw = sys.stdin.buffer.read(MAX_STDIN + 1)
        if len(raw) > MAX_STDIN:
            return 0
        payload = json.loads(raw.decode("utf-8", "replace"))
        if not isinstance(payload, dict) or not is_failure_prompt(payload.get("prompt")):
            return 0
        discovery = _discovery()
        if discovery is None:
            return 0
        cwd = payload.get("cwd") if isinstance(payload.get("cwd"), str) else os.getcwd()
        out = {"hookSpecificOutput": {"hookEventName": "UserPromptSubmit",
                                      "additionalContext": context_line(cwd, discovery)}}
        sys.stdout.write(json.dumps(out) + "\n")
    except BaseException:
        return 0
    return 0


if __name__ == "__main__":
    try:
        code = main()
    except BaseException:
        code = 0
    sys.exit(code)
