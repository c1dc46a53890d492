"""Runnable commands on the run's own launch (decide/launch.py): settings changed through the keys and flags that
exist, every piece taken from the run shell-quoted, and the pieces the run does not show said in the comment.

A setting is named by what it means (`batch`, `steps`, `lr`, …) and written as the run spells it: the Hydra key
with its full dotted path (`+key=` when the primary config lacks it), the HF `TrainingArguments` flag, or an
argparse flag the command already passes. A meaning with no such setting is not invented: the comment says it.
"""
from __future__ import annotations

import os
import re
import shlex
from typing import Dict, List, Optional, Sequence, Tuple

from trainwreck.decide.launch import Launch

# what a setting means → the names runs give it (last component of a dotted key, or a flag without dashes)
CONCEPTS: Dict[str, Tuple[str, ...]] = {
    "batch": ("per_device_train_batch_size", "train_micro_batch_size_per_gpu", "micro_batch_size", "batch_size",
              "train_batch_size", "per_gpu_train_batch_size", "samples_per_gpu", "imgs_per_gpu", "batch", "bs"),
    "steps": ("max_steps", "max_iters", "max_iter", "train_iters", "max_train_steps", "num_train_steps", "total_steps",
              "train_steps", "num_steps", "max_updates", "max_update", "iterations", "steps"),
    "lr": ("learning_rate", "lr", "base_lr", "max_lr", "peak_lr"),
    "clip": ("gradient_clip_val", "max_grad_norm", "clip_grad_norm", "grad_clip", "gradient_clipping", "clip_grad",
             "clip_norm"),
    "resume": ("resume_from_checkpoint", "ckpt_path", "resume_from", "resume", "load_from", "checkpoint", "ckpt",
               "load_checkpoint_dir", "load_checkpoint"),
    "workers": ("dataloader_num_workers", "num_workers", "workers", "n_workers"),
    "output": ("output_dir", "out_dir", "save_dir", "default_root_dir", "work_dir", "checkpoint_dir",
               "save_checkpoint_dir"),
    "overfit": ("overfit_batches", "max_train_samples", "train_subset", "num_train_samples", "limit_train_batches"),
}
SAYS = {"batch": "the batch size", "steps": "a step limit", "lr": "the learning rate", "clip": "gradient clipping",
        "resume": "a checkpoint to resume from", "workers": "the loader's worker count", "output": "an output directory",
        "overfit": "a one-batch (overfit) mode"}
# HfArgumentParser's TrainingArguments fields: they exist whether the dump lists them or not
HF_FIELD = {"batch": "per_device_train_batch_size", "steps": "max_steps", "lr": "learning_rate",
            "clip": "max_grad_norm", "resume": "resume_from_checkpoint", "workers": "dataloader_num_workers",
            "output": "output_dir"}
# Lightning Trainer arguments: a Hydra `trainer:` group holding these passes the group to Trainer(**cfg.trainer)
LIGHTNING = ("max_epochs", "accelerator", "devices", "precision", "accumulate_grad_batches", "log_every_n_steps",
             "check_val_every_n_epoch", "gradient_clip_val")
LIGHTNING_NEW = {"steps": "trainer.max_steps", "clip": "trainer.gradient_clip_val", "overfit": "trainer.overfit_batches"}
_NOT_TRAIN = re.compile(r"(?:^|\.)(?:val|valid|validation|eval|test|predict|inference)(?:\.|_|$)")
_HYDRA_PLAIN = re.compile(r"[\w/\-+.%*@?|:~]+")


class Raw(str):
    """A shell word trainwreck wrote itself (`"$(mktemp -d)"`): kept as it is, never quoted. Every other piece of
    a command (a path, file name, key or value taken from the run) is shell-quoted by `q`: being a Raw is a type,
    so no text from a run can pass as one by its spelling."""


FRESH_DIR = Raw('"$(mktemp -d)"')  # a rerun never writes into the run's own output directory


class Plan:
    """A rerun: the settings it changes [(concept, value)], the environment it adds (NAME=VALUE, trainwreck's
    own words), Python statements run before the script, and what its comment tells the user to look for."""

    def __init__(self, sets: Optional[List[Tuple[str, str]]] = None, env: Optional[List[str]] = None,
                 pre: str = "", notes: Optional[List[str]] = None) -> None:
        self.sets = [] if sets is None else sets
        self.env = [] if env is None else env
        self.pre = pre
        self.notes = [] if notes is None else notes


def q(text: str) -> str:
    """`text` as one shell word: quoted unless it is trainwreck's own (Raw)."""
    return text if isinstance(text, Raw) else shlex.quote(str(text))


def _hydra_value(v: str) -> str:
    """A value in Hydra's override grammar: plain when it is plain, else single-quoted with escapes."""
    if _HYDRA_PLAIN.fullmatch(v):
        return v
    return "'" + v.replace("\\", "\\\\").replace("'", "\\'").replace("${", "\\${") + "'"


def lightning(la: Launch) -> bool:
    return any(k.startswith("trainer.") and k.rsplit(".", 1)[-1] in LIGHTNING for k in la.keys)


def find_key(la: Launch, concept: str, everywhere: bool = False) -> Optional[str]:
    """The dotted key of the run's config that holds `concept` (training, not eval, settings; shallowest first):
    among the keys the launch can set, or with `everywhere` among every config file's keys."""
    keys = [k for k in (la.config if everywhere else la.keys) if not k.startswith("hydra.")]
    for name in CONCEPTS[concept]:
        hits = [k for k in keys if k.rsplit(".", 1)[-1] == name]
        if hits:
            return min(hits, key=lambda k: (bool(_NOT_TRAIN.search(k)), k.count("."), k))
    return None


def _flag_name(tok: str) -> str:
    return tok.lstrip("-").split("=", 1)[0].replace("-", "_")


def find_flag(args: Sequence[str], concept: str) -> Optional[Tuple[int, str, bool]]:
    """(index, flag as spelled, written `--flag=value`) of the argparse flag in the command that sets `concept`
    (a concept of CONCEPTS, or a setting's own name)."""
    flags = [(i, a) for i, a in enumerate(args) if a.startswith("--") and len(a) > 2]
    for name in CONCEPTS.get(concept, (concept,)):
        for i, a in flags:
            if _flag_name(a) == name:
                return i, a.split("=", 1)[0], "=" in a
    return None


def value_of(la: Launch, concept: str) -> Optional[str]:
    """The run's current value of a setting: from the command's flag or override, else from its config."""
    hit = find_flag(la.args, concept)
    if hit is not None:
        i, _flag, eq = hit
        return la.args[i].split("=", 1)[1] if eq else (la.args[i + 1] if i + 1 < len(la.args) else None)
    key = find_key(la, concept) or (HF_FIELD.get(concept) if la.style == "hf" else None)
    for a in la.args:
        if "=" in a and not a.startswith("-") and a.lstrip("+~").split("=", 1)[0] == key:
            return a.split("=", 1)[1]
    e = la.keys.get(key) if key else None
    if e is None:
        key = find_key(la, concept, everywhere=True)
        e = la.config.get(key) if key else None
    return e.value if e is not None else None


def _drop_flag(args: List[str], i: int, eq: bool) -> None:
    del args[i:i + (1 if eq or i + 1 >= len(args) or args[i + 1].startswith("--") else 2)]


def apply(la: Launch, args: List[str], concept: str, value: str, mine: bool = False) -> Optional[List[str]]:
    """Tokens (shell-ready) that set `concept` to `value`, with any earlier setting of it removed from `args`;
    None when the run has no setting for it. `mine` marks a value trainwreck wrote itself (kept unquoted)."""
    val = value if mine else q(value)
    hit = find_flag(args, concept)
    if hit is not None:
        i, flag, eq = hit
        _drop_flag(args, i, eq)
        return [f"{q(flag)}={val}"] if eq else [q(flag), val]
    if la.style in ("hydra", "kv"):
        key = find_key(la, concept)
        plus = ""
        if key is None and la.style == "hydra" and concept in LIGHTNING_NEW and lightning(la):
            key, plus = LIGHTNING_NEW[concept], "+"
        if key is None:
            return None
        for j, a in enumerate(list(args)):
            if "=" in a and a.lstrip("+~").split("=", 1)[0] == key:
                plus = re.match(r"\+*", a).group(0)
                del args[j]
                break
        else:
            plus = plus or ("+" if key in la.added else "")
        if mine:  # the run's key quoted, trainwreck's own value joined to it as it is: `'key='"$(mktemp -d)"`
            return [q(f"{plus}{key}=") + value]
        return [q(f"{plus}{key}={_hydra_value(value)}")]
    if la.style == "hf" and concept in HF_FIELD and not settings_file(la):
        return [f"--{HF_FIELD[concept]}", val]
    return None


def settings_file(la: Launch) -> Optional[str]:
    """The one file the script takes all its settings from (`run_clm.py args.json`, HfArgumentParser's
    parse_json_file/parse_yaml_file convention): flags added beside it would not be read."""
    if len(la.args) == 1 and la.args[0].endswith((".json", ".yaml", ".yml")) and not la.args[0].startswith("-"):
        return la.args[0]
    return None


def render(la: Launch, sets: Sequence[Tuple[str, str]], env: Sequence[str] = (), pre: str = "",
           notes: Sequence[str] = (), extra: Sequence[str] = ()) -> str:
    cmd, said = build(la, sets, env, pre, extra)
    return with_comment(cmd, list(notes) + said)


def build(la: Launch, sets: Sequence[Tuple[str, str]], env: Sequence[str] = (), pre: str = "",
          extra: Sequence[str] = (), fresh: bool = True) -> Tuple[str, List[str]]:
    """The launch with `sets` [(concept, value)] applied, `env` (NAME=VALUE, trainwreck's own) before it and `pre`
    (Python statements) run in the same interpreter before the script where the launch runs python directly.
    `extra` are shell-ready tokens appended (a setting the caller resolved itself). `fresh`: a rerun writes to a
    new temporary output directory where the run names one (HF `--output_dir`, a flag it passes), never into
    the run's own."""
    args = list(la.args)
    if fresh and not any(c == "output" for c, _v in sets):
        sets = list(sets) + [("output", FRESH_DIR)]
    added: List[str] = []
    said = list(la.unknown)
    for concept, value in sets:
        mine = isinstance(value, Raw)
        toks = apply(la, args, concept, value, mine=mine)
        if toks is None:
            said += [] if concept == "output" else [_missing(la, concept, value)]
            continue
        added += toks
    taken = la.env + la.prefix + [la.script or "", la.module or ""] + la.args
    if any("[REDACTED:" in t for t in taken):
        said.append("a secret in the run's command was redacted ([REDACTED:…]): put the real value back")
    stand_in = next((m.group(0) for t in taken for m in [re.search(r"<\w[\w ]{0,30}>", t)] if m), None)
    if stand_in:
        said.append(f"the run's own text holds the stand-in {stand_in}: put the real value back")
    words = [_env(e) for e in la.env] + list(env)
    if la.opaque:
        words += [q(t) for t in la.prefix]
        said.insert(0, f"the run was started through {' '.join(q(t) for t in la.prefix[:2])}: make these changes in it")
    else:
        runs_python = la.python and bool(pre)
        words += [q(t) for t in la.prefix]
        if runs_python:
            words += ["-c", q(_wrapper(la, pre))]
        elif pre:
            said.append("switch on what the Python preamble does at the top of the script: " + pre)
        if la.module:  # the wrapper takes the module's name where `python -m` would
            words += [q(la.module)] if runs_python else ["-m", q(la.module)]
        else:
            words += [q(la.script or "train.py")]
        words += [q(a) for a in args] + added + list(extra)
    return " ".join(words), said


def _missing(la: Launch, concept: str, value: str) -> str:
    key = find_key(la, concept, everywhere=True) or (HF_FIELD.get(concept) if la.style == "hf" else None)
    if settings_file(la):
        return (f"the script reads its settings from {q(settings_file(la))}: set {q(key) if key else SAYS[concept]} "
                f"to {q(value)} there")
    if key and key in la.config:
        e = la.config[key]
        return (f"set {q(key)} to {q(value)} ({q(f'{e.path}:{e.line}')}; the run does not show how the script "
                "takes its settings)")
    return f"the run shows no setting for {SAYS[concept]}: set it to {q(value)} in your script"


def _env(assign: str) -> str:
    name, _, value = assign.partition("=")
    return f"{name}={q(value)}"


def _wrapper(la: Launch, pre: str) -> str:
    """`pre`, then the script (or module) exactly as `python script.py` would run it: same argv, and the script's
    folder first on sys.path (`python -c` puts the working directory there, which is what `-m` does)."""
    if la.module:
        run = 'runpy.run_module(sys.argv[0], run_name="__main__", alter_sys=True)'
    else:
        run = 'sys.path[0] = sys.argv[0].rpartition("/")[0] or "."; runpy.run_path(sys.argv[0], run_name="__main__")'
    return f"{pre}; import runpy, sys; sys.argv = sys.argv[1:]; {run}"


def with_comment(cmd: str, notes: List[str]) -> str:
    seen: List[str] = []
    for n in notes:
        n = " ".join(str(n).split())
        if n and n not in seen:
            seen.append(n)
    return cmd + ("  # " + "; ".join(seen) if seen else "")


def absolute(root: str, path: str) -> str:
    return path if os.path.isabs(path) else os.path.normpath(os.path.join(root, path))


def halve(value: Optional[str], by: float = 2) -> Optional[str]:
    """The value divided by `by` (an int stays an int, at least 1), None when it is not a positive number."""
    try:
        v = float(value) if value is not None else None
    except ValueError:
        return None
    if v is None or not v > 0:
        return None
    if re.fullmatch(r"\d+", str(value).strip()) and v >= 1:
        return str(max(1, int(v // by)))
    return f"{v / by:g}"
