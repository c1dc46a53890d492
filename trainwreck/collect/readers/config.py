"""Run configs: Hydra's resolved config (config.yaml, .hydra/config.yaml), overrides.yaml, hparams.yaml, args.yaml.

The YAML is scanned from lines the read primitive already redacted, key and value together: the value of
`password: hunter2` (and of the override `+db.password=hunter2`) is `[REDACTED:secret]` in memory too."""
from __future__ import annotations

from trainwreck.collect.yamlish import scan, unquote
from trainwreck.model import ConfigEntry

ORDER = 20
LIMIT = 2 << 20
NAMES = {"config.yaml", "config.yml", "overrides.yaml", "hparams.yaml", "args.yaml", "hydra.yaml", "train_config.yaml",
         "cfg.yaml", "opt.yaml"}


def claims(rel: str, name: str) -> bool:
    if name not in NAMES:
        return False
    return rel.count("/") <= 2


def read(bundle, entry, ctx) -> None:
    with ctx.open(entry) as f:
        rel = f.rel
        lines = [ln.text for ln in f.all_lines(LIMIT)]
        ctx.record(f, "config")
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
