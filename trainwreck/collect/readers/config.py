"""Run configs: Hydra's resolved config (config.yaml, .hydra/config.yaml), overrides.yaml, hparams.yaml, args.yaml."""
from __future__ import annotations

from trainwreck.collect.redact import redact
from trainwreck.collect.safeio import read_small
from trainwreck.collect.yamlish import scan, unquote
from trainwreck.model import ConfigEntry

ORDER = 20
NAMES = {"config.yaml", "config.yml", "overrides.yaml", "hparams.yaml", "args.yaml", "hydra.yaml", "train_config.yaml",
         "cfg.yaml", "opt.yaml"}


def claims(rel: str, name: str) -> bool:
    if name not in NAMES:
        return False
    return rel.count("/") <= 2


def read(bundle, entry, ctx) -> None:
    rel, data = read_small(bundle.root, entry.abspath, limit=2 << 20)
    text = data.decode("utf-8", "replace")
    lines = text.splitlines()
    entries = []
    try:
        for key, val, n in scan(lines):
            if entry.rel.endswith("overrides.yaml") and "=" in val:
                k, _, v = unquote(val).partition("=")
                key, val = k.lstrip("+~"), v
            raw = lines[n - 1].rstrip("\r") if 0 < n <= len(lines) else ""
            entries.append(ConfigEntry(key, redact(unquote(val.strip())), n, rel, redact(raw)))
    except (ValueError, IndexError, RecursionError):
        bundle.note(f"{rel}: could not be parsed as YAML; skipped")
    if not entries and lines:
        bundle.note(f"{rel}: no settings could be read from it")
    bundle.configs[rel] = entries
    ctx.record(entry, "config")
