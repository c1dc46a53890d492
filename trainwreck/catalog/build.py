"""Compile the catalog's YAML sources into compiled.json, the form `trainwreck.catalog.load()` reads.

    python -m trainwreck.catalog.build           rewrite trainwreck/catalog/compiled.json from the *.yaml files
    python -m trainwreck.catalog.build --check   exit 1 (saying so) when compiled.json is out of date

The YAML is read with trainwreck's one YAML reader (trainwreck.collect.yamlish, strict mode); every entry
is turned into a Signature once here, so a broken entry fails the build, not a user's diagnosis.
"""
from __future__ import annotations

import json
import os
import sys
from typing import Any, Dict, List, Optional

from trainwreck.catalog import CATALOG_DIR, COMPILED, FAMILIES_FILE, FORMAT, catalog_files, read_compiled, signatures
from trainwreck.collect.yamlish import loads

REBUILD = "python -m trainwreck.catalog.build"


def read_file(path: str) -> List[Dict[str, Any]]:
    """One YAML source: the list of its entries."""
    with open(path, encoding="utf-8") as fh:
        text = fh.read()
    try:
        data = loads(text)
    except ValueError as exc:
        raise ValueError(f"{path}: {exc}") from None
    if not isinstance(data, list):
        raise ValueError(f"{path}: the catalog file must be a list of entries")
    return data


FAMILY_KEYS = {"id", "title", "classification", "meaning", "not_advice"}


def read_families(path: str) -> List[Dict[str, Any]]:
    """families.yaml: the families by meaning, each {id, title, classification, meaning, not_advice?}."""
    out = read_file(path)
    for fam in out:
        if not isinstance(fam, dict) or not {"id", "title", "classification", "meaning"} <= set(fam) \
                or set(fam) - FAMILY_KEYS:
            raise ValueError(f"{path}: a family needs id, title, classification and meaning (and at most "
                             f"not_advice): {fam!r}"[:300])
    return out


def compile_sources(files: Optional[List[str]] = None, families_path: Optional[str] = None) -> Dict[str, Any]:
    """The compiled form of the YAML sources: {"format", "generated_by", "families": {file: [entry]},
    "meaning_families": [family]}."""
    families: Dict[str, List[Dict[str, Any]]] = {}
    for path in files or catalog_files():
        families[os.path.splitext(os.path.basename(path))[0]] = read_file(path)
    fam_path = families_path or os.path.join(CATALOG_DIR, FAMILIES_FILE)
    if files and not families_path and os.path.exists(os.path.join(os.path.dirname(files[0]), FAMILIES_FILE)):
        fam_path = os.path.join(os.path.dirname(files[0]), FAMILIES_FILE)  # a copy of the catalog elsewhere
    compiled = {"format": FORMAT, "generated_by": f"{REBUILD} from trainwreck/catalog/*.yaml; do not edit",
                "families": families,
                "meaning_families": read_families(fam_path) if os.path.exists(fam_path) else []}
    signatures(compiled)  # validate: every entry becomes a Signature, ids unique
    return compiled


def render(compiled: Dict[str, Any]) -> str:
    return json.dumps(compiled, indent=1, ensure_ascii=False) + "\n"


def stale(path: str = COMPILED, files: Optional[List[str]] = None) -> Optional[str]:
    """Why the compiled file does not match the sources (None when it does)."""
    want = compile_sources(files)
    try:
        have = read_compiled(path)
    except (OSError, ValueError) as exc:
        return f"{os.path.basename(path)} cannot be read ({exc}); rebuild it with `{REBUILD}`"
    if have == want:
        return None
    changed = sorted(f for f in set(want["families"]) | set(have.get("families", {}))
                     if want["families"].get(f) != have.get("families", {}).get(f))
    if want["meaning_families"] != have.get("meaning_families"):
        changed.append(FAMILIES_FILE)
    return (f"trainwreck/catalog/compiled.json is out of date with the YAML sources ({', '.join(changed) or 'header'}); "
            f"rebuild it with `{REBUILD}` and commit it")


def main(argv: Optional[List[str]] = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    try:
        return _main(argv)
    except (OSError, ValueError) as exc:  # a broken source: one line naming the file and line, no traceback
        print(f"catalog build failed: {exc}", file=sys.stderr)
        return 1


def _main(argv: List[str]) -> int:
    if argv[:1] == ["--check"]:
        why = stale()
        print(why or "compiled.json is up to date", file=sys.stderr if why else sys.stdout)
        return 1 if why else 0
    if argv:
        print(f"usage: {REBUILD} [--check]", file=sys.stderr)
        return 2
    text = render(compile_sources())
    tmp = COMPILED + ".tmp"
    with open(tmp, "w", encoding="utf-8") as fh:
        fh.write(text)
    os.replace(tmp, COMPILED)
    print(f"wrote {COMPILED} ({len(text) // 1024} KB)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
