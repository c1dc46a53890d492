"""Static checks of the plugin surface: manifest, skills, agents, scripts, references. No CLI needed."""
import ast
import json
import re
import runpy
import struct
import sys
import types
import zlib

import pytest
from plugin_inventory import AGENTS, REPO, SCRIPTS, SKILLS, frontmatter

VARS = re.compile(r"\$\{(CLAUDE_PLUGIN_ROOT|CLAUDE_SKILL_DIR)\}(/[^\s\"'`)]*)")


def test_manifest():
    m = json.loads((REPO / ".claude-plugin" / "plugin.json").read_text())
    assert m["name"] == "trainwreck" and m["version"] == "0.1.0" and m["license"] == "MIT"
    for key in ("description", "author", "repository", "keywords", "icon"):
        assert m.get(key), key
    assert m["network"] == {"hosts": []}
    assert "hooks" not in m, "hooks/hooks.json is auto-loaded; listing it in plugin.json loads it twice"
    assert (REPO / m["icon"]).is_file()


def test_marketplace_lists_this_plugin():
    mk = json.loads((REPO / ".claude-plugin" / "marketplace.json").read_text())
    assert mk["name"] and mk["owner"]["name"] and mk["description"]
    assert [(p["name"], p["source"]) for p in mk["plugins"]] == [("trainwreck", "./")]


def test_icon_is_a_small_512_png():
    data = (REPO / ".claude-plugin" / "icon.png").read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    width, height = struct.unpack(">II", data[16:24])
    assert (width, height) == (512, 512)
    assert len(data) < 20_000
    # every chunk's CRC is right
    pos = 8
    while pos < len(data):
        (length,) = struct.unpack(">I", data[pos:pos + 4])
        tag, payload = data[pos + 4:pos + 8], data[pos + 8:pos + 8 + length]
        (crc,) = struct.unpack(">I", data[pos + 8 + length:pos + 12 + length])
        assert zlib.crc32(tag + payload) & 0xFFFFFFFF == crc, tag
        pos += 12 + length


def test_license_file():
    assert (REPO / "LICENSE").read_text().startswith("MIT License")


@pytest.mark.parametrize("name", SKILLS)
def test_skill(name):
    path = REPO / "skills" / name / "SKILL.md"
    meta, body = frontmatter(path)
    assert meta["name"] == name
    desc = meta["description"]
    assert desc.startswith("Use when"), desc
    assert len(desc) <= 120, f"{name}: {len(desc)} chars; every session pays for it"
    # Claude Code substitutes $0..$9 with skill arguments: a literal one in a snippet would be rewritten.
    assert not re.search(r"\$[0-9]", body), f"{name}: literal $N in the body"
    assert len(body.splitlines()) < 150, f"{name}: keep SKILL.md focused; move detail to references/"
    for var, rel in VARS.findall(body):
        base = REPO if var == "CLAUDE_PLUGIN_ROOT" else path.parent
        target = base / rel.lstrip("/")
        assert target.exists(), f"{name}: {var}{rel} does not exist"


def test_descriptions_fit_the_always_on_budget():
    total = sum(len(frontmatter(REPO / "skills" / s / "SKILL.md")[0]["description"]) for s in SKILLS)
    total += sum(len(frontmatter(REPO / "agents" / f"{a}.md")[0]["description"]) for a in AGENTS)
    assert total <= 1300, total   # ~4 chars/token plus per-entry overhead: well under the 600-token budget


def test_every_verification_skill_is_reachable_from_diagnose():
    _, body = frontmatter(REPO / "skills" / "diagnose" / "SKILL.md")
    for skill in ("loss-spike-rollback", "grad-flow", "activation-recompute", "init-loss-check",
                  "overfit-single-batch", "debug", "diagnose-failed-run"):
        assert f"/trainwreck:{skill}" in body, skill
    assert "trainwreck:failure-diagnoser" in body
    assert "$ARGUMENTS" in body


@pytest.mark.parametrize("name", AGENTS)
def test_agent(name):
    meta, body = frontmatter(REPO / "agents" / f"{name}.md")
    assert meta["name"] == name and meta["description"]
    tools = [t.strip() for t in meta["tools"].split(",")]
    assert tools == ["Read", "Bash"], "read-only tools only; Grep/Glob do not exist in this CLI and are dropped"
    assert re.search(r"```json\n", body), "the agent must describe the JSON it returns"
    for _var, rel in VARS.findall(body):
        assert (REPO / rel.lstrip("/")).exists(), rel


def test_diagnoser_json_example_has_the_engine_shape():
    _, body = frontmatter(REPO / "agents" / "failure-diagnoser.md")
    example = json.loads(re.search(r"```json\n(.*?)```", body, re.S).group(1))
    for key in ("classification", "confidence", "failure_stage", "stack", "primary_cause", "causes",
                "contributing_factors", "fix_candidates", "verification", "notes", "evidence_files"):
        assert key in example, key
    cause = example["causes"][0]
    assert {"summary", "signature", "label", "confidence", "evidence"} <= set(cause)
    assert set(example["verification"]) == {"skill", "command"}


def test_validator_json_example_parses():
    _, body = frontmatter(REPO / "agents" / "root-cause-validator.md")
    example = json.loads(re.search(r"```json\n(.*?)```", body, re.S).group(1))
    assert {"candidates", "ranking", "unresolved"} <= set(example)
    assert "validation_check" in example["candidates"][0]


@pytest.mark.parametrize("script,verb", sorted(SCRIPTS.items()))
def test_script_calls_the_engine_verb(script, verb, monkeypatch):
    """Each entry point puts the repo root first on sys.path and exits with main([verb, *argv])."""
    path = REPO / "scripts" / script
    seen = {}

    def fake_main(argv):
        seen["argv"] = argv
        seen["path0"] = sys.path[0]
        return 3

    package = types.ModuleType("trainwreck")
    cli = types.ModuleType("trainwreck.cli")
    cli.main = fake_main
    package.cli = cli
    monkeypatch.setitem(sys.modules, "trainwreck", package)
    monkeypatch.setitem(sys.modules, "trainwreck.cli", cli)
    monkeypatch.setattr(sys, "argv", [str(path), "runs/exp1", "--json"])
    monkeypatch.setattr(sys, "path", list(sys.path))
    with pytest.raises(SystemExit) as exc:
        runpy.run_path(str(path), run_name="__main__")
    assert exc.value.code == 3
    assert seen["argv"] == [verb, "runs/exp1", "--json"]
    assert seen["path0"] == str(REPO)
    assert len(path.read_text().splitlines()) < 25, "entry points stay thin"


def test_reference_files_exist_and_are_dense():
    names = {p.name for p in (REPO / "reference").glob("*.md")}
    for want in ("failure-taxonomy.md", "root-cause-validation.md", "fix-templates.md", "common-failure-modes.md",
                 "debugging-checklist.md", "backend-diagnosis.md", "failure-showcase.md"):
        assert want in names, want
        assert len((REPO / "reference" / want).read_text()) > 2000, want


def test_python_snippets_in_markdown_parse():
    docs = list((REPO / "skills").rglob("*.md")) + list((REPO / "reference").glob("*.md")) + \
        list((REPO / "agents").glob("*.md"))
    for doc in docs:
        for code in re.findall(r"```python\n(.*?)```", doc.read_text(), re.S):
            try:
                ast.parse(code)
            except SyntaxError as exc:  # pragma: no cover - message only
                pytest.fail(f"{doc.relative_to(REPO)}: {exc}")


def test_exact_messages_kept_verbatim():
    """Spot-check strings Claude will grep for: they must match what the frameworks print."""
    text = "\n".join(p.read_text() for p in (REPO / "reference").glob("*.md"))
    for s in ("Watchdog caught collective operation timeout: WorkNCCL(SeqNum=",
              "Current loss scale already at minimum - cannot decrease scale anymore. Exiting run.",
              "CUDA error: device-side assert triggered",
              "PytorchStreamReader failed reading zip archive: failed finding central directory",
              "ncclSystemError: System call (e.g. socket, malloc) or external library call failed or device error.",
              "The wait execution of the Notify register times out.",
              "Expected to have finished reduction in the prior iteration before starting a new one."):
        assert s in text, s
