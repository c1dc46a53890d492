"""The run's launch command, reconstructed from what the run shows, so that a verification command reruns *this*
script with *its* arguments rather than an invented `python train.py`.

Sources, best first: cmdline.txt; a launcher's echo of the command in a log (DeepSpeed's `cmd = …`, a shell's
`set -x` trace `+ torchrun …`, a `$ python …` transcript line); wandb-metadata.json (`program` + `args`). Then
Hydra's `.hydra/overrides.yaml` (or `hydra.job.override_dirname`) for the arguments, and for the script: the
traceback's `<module>` frame, wandb's `program`, Hydra's `hydra.job.name` in `hydra.runtime.cwd`. What none of
them shows is listed in `unknown`, said in the command's comment, never invented.

The settings a command may change are the ones that exist: Hydra keys of the resolved config (a key that a `+`
override added is still new to the primary config), HF `TrainingArguments` fields (training_args.json), and
argparse flags seen in the command.
"""
from __future__ import annotations

import os
import re
import shlex
from typing import Dict, List, Optional, Tuple

from trainwreck import lazy_re
from trainwreck.collect.bundle import Bundle
from trainwreck.model import ConfigEntry

LAUNCHERS = {"python", "python3", "torchrun", "deepspeed", "accelerate", "composer", "lightning"}
WRAPPERS = {"nohup", "time", "exec", "stdbuf", "nice", "uv", "poetry", "pipenv", "srun", "mpirun", "mpiexec", "conda"}
DROP = {"nohup", "time", "exec", "stdbuf", "nice"}  # they change nothing a rerun needs
SHELL_OPS = {"|", "||", "&", "&&", ";", ">", ">>", "2>&1", "1>", "2>", "&>", "|&", "<"}
# A line that echoes a command: DeepSpeed's runner logs `cmd = …`; `set -x` prints `+ cmd`; transcripts `$ cmd`.
_ECHO = lazy_re(r"(?:\bcmd = |^\s*\++ |^\s*\$ |(?i:\b(?:running|command|launching|launch command|cmd)\s*:\s+))(.+)$")
_FRAME = lazy_re(r'File "([^"]+\.py)", line \d+, in <module>')
_ELASTIC_FIELD = lazy_re(r"\b(entrypoint|nproc_per_node|max_nodes)\s+:\s+(\S+)\s*$")
_LIB = lazy_re(r"(?:site|dist)-packages|/lib/python\d|/usr/lib/|<frozen|runpy\.py|/torch/distributed/")
# HF TrainingArguments fields that tell a dump (or a command) is HfArgumentParser's
HF_MARKERS = ("per_device_train_batch_size", "gradient_accumulation_steps", "save_strategy", "eval_strategy",
              "evaluation_strategy", "logging_steps")


class Launch:
    """The launch command in parts. `script` is absolute where the run shows where it lives."""

    def __init__(self) -> None:
        self.env: List[str] = []  # NAME=VALUE before the command
        self.prefix: List[str] = []  # launcher and its options: ["torchrun", "--nproc_per_node=8"], ["python"]
        self.script: Optional[str] = None
        self.module: Optional[str] = None  # python -m MODULE
        self.args: List[str] = []  # the script's own arguments
        self.style = "unknown"  # hydra | kv (key=value without Hydra's record) | hf | argparse | unknown
        self.source = ""  # where the command was read, e.g. "cmdline.txt:1"
        self.unknown: List[str] = []  # pieces the run does not show, said in the command's comment
        self.keys: Dict[str, ConfigEntry] = {}  # settings the launch can set, by dotted key
        self.config: Dict[str, ConfigEntry] = {}  # every config file's settings (named in comments only)
        self.added: set = set()  # Hydra keys a `+` override added: still new to the primary config
        self.opaque = False  # a wrapper script or tool (run.sh, `tune run`): its arguments are not the script's

    @property
    def python(self) -> bool:
        """The interpreter runs the script directly, so a `python -c` wrapper can stand in for it."""
        return bool(self.prefix) and os.path.basename(self.prefix[-1]).startswith("python") and not self.opaque

    def launcher(self) -> str:
        return os.path.basename(self.prefix[0]) if self.prefix else ""


def split_command(text: str) -> List[str]:
    try:
        argv = shlex.split(text, comments=False)
    except ValueError:  # an unbalanced quote: the words as they stand
        argv = text.split()
    out = []
    for tok in argv:
        if tok in SHELL_OPS or re.fullmatch(r"\d?>+&?\d?|&>>?", tok):
            break  # a pipe, a redirection, a background `&`: the command ends here
        out.append(tok)
    return out


def _runs(tok: str) -> bool:
    head = os.path.basename(tok)
    return tok.endswith(".py") or head in LAUNCHERS or re.fullmatch(r"python[\d.]*", head) is not None


def parse(argv: List[str]) -> Optional[Launch]:
    """Split a command into env, launcher prefix, script (or module) and the script's arguments."""
    env: List[str] = []
    i = 0
    while i < len(argv) and re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*=.*", argv[i]):
        env.append(argv[i])
        i += 1
    keep: List[str] = []  # srun -N 2, mpirun -np 4, conda run -n env, uv run: they set up the processes; kept
    while i < len(argv) and os.path.basename(argv[i]) in WRAPPERS and not argv[i].endswith(".py"):
        j = next((j for j in range(i + 1, len(argv)) if _runs(argv[j]) or os.path.basename(argv[j]) in WRAPPERS),
                 len(argv))
        if os.path.basename(argv[i]) not in DROP:
            keep += argv[i:j]
        i = j
    rest = argv[i:]
    if not rest:
        return None
    la = _split(rest)
    la.env = env
    la.prefix = keep + la.prefix
    return la


def _split(rest: List[str]) -> Launch:
    la = Launch()
    head = os.path.basename(rest[0])
    if rest[0].endswith(".py"):
        la.prefix, la.script, la.args = ["python"], rest[0], rest[1:]
        return la
    if not (head in LAUNCHERS or re.fullmatch(r"python[\d.]*", head)):
        la.prefix, la.opaque = rest, True  # run.sh, `tune run`, `deepbgc train`: the tool's own arguments
        return la
    for j in range(1, len(rest)):
        tok = rest[j]
        if tok in ("-m", "--module") and j + 1 < len(rest) and head.startswith("python"):
            mod = rest[j + 1]
            if mod in ("torch.distributed.run", "torch.distributed.launch", "deepspeed.launcher.launch",
                       "accelerate.commands.launch"):
                continue  # a launcher run as a module: its script comes later
            la.prefix, la.module, la.args = rest[:j], mod, rest[j + 2:]
            return la
        if tok.endswith(".py") and not rest[j - 1].startswith("--config") and "=" not in tok:
            la.prefix, la.script, la.args = rest[:j], tok, rest[j + 1:]
            if "deepspeed.launcher.launch" in la.prefix:  # the runner's inner command: `deepspeed` starts it
                la.prefix = ["deepspeed"]
            return la
    la.prefix, la.opaque = rest, True
    return la


def _echoed(bundle: Bundle) -> Optional[Tuple[List[str], str]]:
    for line in bundle.all_lines():
        if len(line.text) > 4000 or ".py" not in line.text:
            continue
        m = _ECHO.search(line.text)
        if not m:
            continue
        argv = split_command(m.group(1).strip())
        la = parse(argv) if argv else None
        if la is not None and la.script and not la.opaque:
            return argv, f"{line.path}:{line.line}" if line.line else line.path
    return None


def _elastic(bundle: Bundle) -> Optional[Tuple[str, Optional[str], Optional[str], str]]:
    """torchrun's own record of its launch (torch/distributed/launcher/api.py, "Starting elastic_operator with
    launch configs:" then `entrypoint : train.py`, `max_nodes : 2`, `nproc_per_node : 4`, one per line):
    (entrypoint, nproc_per_node, max_nodes, where)."""
    lines = iter(bundle.all_lines())
    for line in lines:
        if "Starting elastic_operator with launch configs" not in line.text:
            continue
        seen: Dict[str, str] = {}
        for _i, nxt in zip(range(16), lines):
            m = _ELASTIC_FIELD.search(nxt.text)
            if m:
                seen.setdefault(m.group(1), m.group(2))
        if seen.get("entrypoint"):
            return seen["entrypoint"], seen.get("nproc_per_node"), seen.get("max_nodes"), \
                f"{line.path}:{line.line}" if line.line else line.path
    return None


def module_frame(bundle: Bundle) -> Optional[str]:
    """The entry script: the first `<module>` frame of a traceback that is not a library's."""
    for line in bundle.all_lines():
        if "<module>" not in line.text:
            continue
        m = _FRAME.search(line.text)
        if m and not _LIB.search(m.group(1)):
            return m.group(1)
    return None


def _fact(bundle: Bundle, key: str):
    src = bundle.facts.get(key)
    return src.value if src is not None and src.value not in (None, "") else None


def _hydra(bundle: Bundle) -> Tuple[Optional[List[str]], Dict[str, str]]:
    """Hydra's task overrides as typed (with their `+`/`~` prefixes) and hydra.* facts (job.name, runtime.cwd)."""
    over, facts = None, {}
    for path, entries in bundle.configs.items():
        if path.endswith("overrides.yaml") and over is None:
            over = []
            for e in entries:
                raw = e.text.strip()
                raw = raw[1:].strip() if raw.startswith("-") else raw
                if "=" in raw:
                    over.append(raw[1:-1] if len(raw) > 1 and raw[:1] in "'\"" and raw[-1:] == raw[:1] else raw)
        for e in entries:
            if e.key in ("hydra.job.name", "hydra.runtime.cwd", "hydra.job.override_dirname", "hydra.run.dir"):
                facts.setdefault(e.key, e.value)
    if over is None and facts.get("hydra.job.override_dirname"):
        over = [x for x in facts["hydra.job.override_dirname"].split(",") if "=" in x]
    return over, facts


def _keys(bundle: Bundle, la: Launch, over: Optional[List[str]]) -> None:
    for path in sorted(bundle.configs, key=lambda p: (p.endswith("overrides.yaml"), p.count("/"), p)):
        for e in bundle.configs[path]:
            la.config.setdefault(e.key, e)
    hydra_cfg = [p for p in bundle.configs if p.endswith((".hydra/config.yaml", ".hydra/hydra.yaml"))]
    hf = [p for p in bundle.configs if p.rsplit("/", 1)[-1] in ("training_args.json", "training_args.yaml")]
    if hydra_cfg:
        la.style = "hydra"
        for p in hydra_cfg:
            for e in bundle.configs[p]:
                la.keys.setdefault(e.key, e)
        for o in over or []:
            if o.startswith("+"):
                la.added.add(o.lstrip("+").split("=", 1)[0])
        return
    others = {p: es for p, es in bundle.configs.items() if not p.endswith("overrides.yaml")}
    if hf or any(e.key in HF_MARKERS for es in others.values() for e in es) \
            or any(a.lstrip("-").split("=")[0] in HF_MARKERS for a in la.args):
        la.style = "hf"
        for p in hf or others:
            for e in bundle.configs[p]:
                la.keys.setdefault(e.key, e)
        return
    if any(a.startswith("-") for a in la.args):
        la.style = "argparse"
    elif any(re.fullmatch(r"[+~]*[A-Za-z_][\w.]*=.*", a) for a in la.args) and others:
        la.style = "kv"
        for es in others.values():
            for e in es:
                la.keys.setdefault(e.key, e)


def _absolute(la: Launch, bundle: Bundle, frame: Optional[str], cwd: Optional[str]) -> None:
    if la.module:  # `python -m` finds the module from the working directory
        la.unknown.append(f"run this from {shlex.quote(cwd)}, where the job was started" if cwd and os.path.isabs(cwd) else
                          "the directory the job was started in is not in the run: run this from there")
    if la.script is None or os.path.isabs(la.script):
        return
    rel = la.script[2:] if la.script.startswith("./") else la.script
    if frame and (frame == rel or frame.endswith("/" + rel)):
        la.script = frame
    elif cwd and os.path.isabs(cwd):
        la.script = os.path.normpath(os.path.join(cwd, rel))
    elif la.script != "train.py" or la.source:
        la.unknown.append(f"the directory the job was started in is not in the run: run this from there "
                          f"({shlex.quote(la.script)} is relative to it)")


def reconstruct(bundle: Bundle) -> Launch:
    frame = module_frame(bundle)
    over, hfacts = _hydra(bundle)
    cwd = hfacts.get("hydra.runtime.cwd") or _fact(bundle, "launch.root")
    la: Optional[Launch] = None
    cmd = _fact(bundle, "launch.cmdline")
    words = split_command(cmd) if isinstance(cmd, str) else None
    if words:
        la = parse(words)
        if la is not None:
            la.source = _cite(bundle, "launch.cmdline")
    if la is None:
        echo = _echoed(bundle)
        if echo:
            la = parse(echo[0])
            if la is not None:
                la.source = echo[1]
    program = _fact(bundle, "launch.program")
    if not (isinstance(program, str) and program.endswith(".py")):  # wandb: relative to the working directory
        program = _fact(bundle, "launch.codePathLocal") or _fact(bundle, "launch.codePath")
    elastic = _elastic(bundle) if la is None else None
    if la is None and isinstance(program, str) and program.endswith(".py"):
        la = Launch()
        la.prefix, la.script = ["python"], program
        args = _fact(bundle, "launch.args")
        la.args = list(args) if isinstance(args, list) else []
        la.source = _cite(bundle, "launch.program")
        local = _fact(bundle, "launch.codePathLocal")
        if os.path.isabs(program) and isinstance(local, str) and program.endswith(local) and not cwd:
            cwd = program[:-len(local)].rstrip("/") or "/"
    if elastic is not None:  # torchrun started it: its launcher options, and its script when nothing else names it
        entry, nproc, nodes, where = elastic
        if la is None and entry.endswith(".py"):
            la = Launch()
            la.script, la.source = entry, where
            la.args = list(over or [])
            if not over:
                la.unknown.append("the script's arguments are not in the run: add the ones it was launched with")
        if la is not None and la.prefix in ([], ["python"]):
            la.prefix = ["torchrun"] + ([f"--nproc_per_node={nproc}"] if nproc and nproc.isdigit() else [])
            if nodes and nodes.isdigit() and int(nodes) > 1:
                la.unknown.append(f"the run spanned {nodes} nodes: this starts one; add your --nnodes and "
                                  "rendezvous options to start them all")
    if la is None:
        la = Launch()
        la.prefix = ["python"]
        if over is not None:
            la.args = list(over)
            la.source = "the Hydra overrides"
    elif not la.args and over and not la.opaque:
        la.args = list(over)
    if la.script is None and la.module is None and not la.opaque:
        name = hfacts.get("hydra.job.name")
        if frame:
            la.script = frame
        elif isinstance(program, str) and program.endswith(".py"):
            la.script = program
        elif name and cwd:
            la.script = os.path.join(cwd, f"{name}.py")
            la.unknown.append(f"the script is taken to be {shlex.quote(name + '.py')} in the launch directory (hydra.job.name)")
        else:
            la.script = "train.py"
            la.unknown.append("the launch command is not in the run: replace `train.py` by your script")
    _absolute(la, bundle, frame, cwd)
    _keys(bundle, la, over)
    if la.source == "" and la.script != "train.py" and not la.args and la.style in ("unknown", "hf"):
        la.unknown.append("the script's other arguments are not in the run: add the ones it was launched with")
    return la


def _cite(bundle: Bundle, key: str) -> str:
    src = bundle.facts.get(key)
    if src is None:
        return ""
    return f"{src.path}:{src.line}" if src.line else src.path
