"""The evidence guard on its labelled sets.

- the synthetic set (tests/hooks/dataset/cases/, written by build_dataset.py): false blocks at most 2 %, misses
  at most 5 %;
- the blind batches (tests/hooks/blind/*.jsonl: payloads recorded from the real Claude Code CLI by helpers who never
  saw the hook): the dev part and the frozen test split each held to the figures measured when they were last
  changed, so that a change that loses ground fails.  The test split's assertion names no case.
`python3 tests/hooks/score.py --set dev` prints the details (--set test: figures only)."""
from score import load_cases, load_split, score


def test_dataset_is_large_and_varied():
    cases = load_cases(which="synthetic")
    assert len(cases) >= 150
    cats = {c["category"] for c in cases}
    for want in ("backed", "unbacked", "fabricated", "misquoted", "hedged", "coding", "stop-hook-active",
                 "long", "broken", "huge", "lang-de-unbacked", "lang-fr-backed", "lang-es-hedged",
                 "lang-zh-backed", "lang-ja-unbacked", "phrasing-claim", "phrasing-other", "turn-structure"):
        assert want in cats, want
    types = set()
    for c in cases:
        types.update(r.get("type") for r in c["transcript"].get("records", []))
    assert {"queue-operation", "user", "attachment", "assistant", "system", "tools-used", "last-prompt",
            "api-request"} <= types


def test_false_block_and_miss_rates():
    s = score(load_cases(which="synthetic"))
    detail = "\n".join("false block: %s (%s)" % (r["id"], r["note"]) for r in s["false_blocks"])
    detail += "\n" + "\n".join("miss: %s (%s)" % (r["id"], r["note"]) for r in s["misses"])
    assert not s["nonzero_exit"]
    assert s["false_block_rate"] <= 0.02, detail
    assert s["miss_rate"] <= 0.05, detail


def test_blind_batches_are_real_cli_recordings_split_by_scenario():
    blind = load_cases(which="blind")
    assert len(blind) >= 980 and {c["batch"] for c in blind} >= {"b1", "b2", "b3", "b4", "b5", "b6"}
    test = set(load_split()["test"])
    assert test <= {c["id"] for c in blind}
    by_scenario = {}
    for c in blind:
        by_scenario.setdefault(c["scenario"], set()).add(c["id"] in test)
        assert c["transcript"]["session_id"] and c["payload"]["transcript_path"] == "<TRANSCRIPT>"
    assert all(len(sides) == 1 for sides in by_scenario.values())     # a conversation never straddles the split
    cats = {c["category"] for c in blind}
    assert {"unbacked", "fabricated", "misquoted", "input-only", "pasted-log", "backed", "hedged", "follow-up",
            "follow-up-unbacked", "delegated", "non-ml", "general", "what-only"} <= cats
    assert any("/subagents/" in k for c in blind for k in c["transcript"]["files"])
    assert any("/tool-results/" in k for c in blind for k in c["transcript"]["files"])


def test_blind_dev_figures_hold():
    s = score(load_cases(which="dev"))
    detail = "\n".join("false block: %s (%s)" % (r["id"], r["note"]) for r in s["false_blocks"])
    detail += "\n" + "\n".join("miss: %s (%s)" % (r["id"], r["note"]) for r in s["misses"])
    assert not s["nonzero_exit"]
    assert s["accuracy"] >= 0.95 and s["false_block_rate"] <= 0.017, detail       # measured: 0.953, 0.016


def test_blind_test_split_figures_hold():
    s = score(load_cases(which="test"))
    assert not s["nonzero_exit"]
    assert s["accuracy"] >= 0.873 and s["false_block_rate"] <= 0.071, \
        "frozen test split: accuracy %.3f, false blocks %.3f (cases not named; measured 0.876, 0.070)" % (
            s["accuracy"], s["false_block_rate"])
