"""Run configs: Hydra's resolved config (config.yaml, .hydra/config.yaml), overrides.yaml, hparams.yaml, args.yaml,
and JSON dumps of a run's arguments: HF `TrainingArguments.to_json_string()` as training_args.json, argparse
`vars(args)` as args.json / hparams.json (nested objects flattened to dotted keys; lists are not settings), and any
other JSON object or YAML mapping the content sniff finds holding training settings (collect/sniff.settings_document:
config.json, params.json, train_args.json, a DeepSpeed config), whatever its name.

The YAML is scanned from lines the read primitive already redacted, key and value together: the value of
`password: hunter2` (and of the override `+db.password=hunter2`) is `[REDACTED:secret]` in memory too."""
from __future__ import annotations

import json

from trainwreck.collect.yamlish import scan, unquote
from trainwreck.model import ConfigEntry

ORDER = 20
LIMIT = 2 << 20
NAMES = {"config.yaml", "config.yml", "overrides.yaml", "hparams.yaml", "args.yaml", "hydra.yaml", "train_config.yaml",
         "cfg.yaml", "opt.yaml", "training_args.yaml", "training_args.json", "args.json", "hparams.json"}
JSON_NAMES = {"training_args.json", "args.json", "hparams.json"}


def claims(rel: str, name: str) -> bool:
    if name not in NAMES:
        return False
    return rel.count("/") <= 2


def read(bundle, entry, ctx) -> None:
    with ctx.open(entry) as f:
        rel = f.rel
        lines = [ln.text for ln in f.all_lines(LIMIT)]
        ctx.record(f, "config")
    if not claims(rel, rel.rsplit("/", 1)[-1]):
        bundle.sniffed_configs.add(rel)  # a settings file of another name (eval.yaml, params.json): named ones win
    if rel.rsplit("/", 1)[-1] in JSON_NAMES or next((t.lstrip() for t in lines if t.strip()), "")[:1] == "{":
        bundle.configs[rel] = _json_entries(bundle, rel, lines)
        return
    entries = []
    try:
        for key, val, n in scan(lines):
            if entry.rel.endswith("overrides.yaml") and "=" in val:
                k, _, v = unquote(val).partition("=")
                key, val = k.lstrip("+~"), v
            raw = lines[n - 1] if 0 < n <= len(lines) else ""
            entries.append(ConfigEntry(key, unquote(val.strip()), n, rel, raw))
    except (ValueError, IndexError, RecursionError):
        bundle.note(f"{rel}: could not be parsed as YAML; skipped")
    if not entries and lines:
        bundle.note(f"{rel}: no settings could be read from it")
    bundle.configs[rel] = entries


def _scalar(v) -> str:
    return v if isinstance(v, str) else json.dumps(v)


def _json_entries(bundle, rel: str, lines) -> list:
    """One entry per scalar of a JSON object of arguments, each citing the line that holds its key."""
    try:
        obj = json.loads("\n".join(lines))
    except ValueError:
        bundle.note(f"{rel}: not valid JSON; skipped")
        return []
    if not isinstance(obj, dict):
        bundle.note(f"{rel}: no settings could be read from it")
        return []
    where = {}
    for n, text in enumerate(lines, 1):
        head = text.strip()
        if head.startswith('"') and '":' in head:
            where.setdefault(head[1:head.index('":')], n)
    entries, stack = [], [("", obj)]
    while stack and len(entries) < 5000:
        prefix, d = stack.pop(0)
        for k, v in d.items():
            key = f"{prefix}{k}"
            if isinstance(v, dict):
                stack.append((key + ".", v))
            elif not isinstance(v, list):
                n = where.get(str(k), 0)
                entries.append(ConfigEntry(key, _scalar(v), n, rel, lines[n - 1] if n else f'"{k}": {_scalar(v)}'))
    return entries
