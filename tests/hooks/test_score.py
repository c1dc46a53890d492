"""The evidence guard on the labelled dataset (tests/hooks/dataset/cases/): false blocks
at most 2 %, misses at most 5 %.  `python3 tests/hooks/score.py` prints the details."""
from score import load_cases, score


def test_dataset_is_large_and_varied():
    cases = load_cases()
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
    s = score()
    detail = "\n".join("false block: %s (%s)" % (r["id"], r["note"]) for r in s["false_blocks"])
    detail += "\n" + "\n".join("miss: %s (%s)" % (r["id"], r["note"]) for r in s["misses"])
    assert not s["nonzero_exit"]
    assert s["false_block_rate"] <= 0.02, detail
    assert s["miss_rate"] <= 0.05, detail
